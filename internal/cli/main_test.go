package cli

import (
	"os"
	"testing"

	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/internal/testenv"
)

func TestMain(m *testing.M) {
	// Commands run in the test process log a store's recovery notices to
	// slog's default logger: not on the terminal.
	testenv.DiscardDefaultLogs()
	os.Exit(testbin.Main(m))
}
