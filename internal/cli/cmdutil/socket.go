package cmdutil

import (
	"github.com/custodian-dev/custodian/daemon"
)

// DefaultSocket is where `custodian serve` listens and where the CLI looks
// for a running daemon, relative to the project root.
const DefaultSocket = daemon.DefaultSocket
