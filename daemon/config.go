package daemon

import (
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// DefaultSocket is where the daemon listens and where the CLI looks for a
// running daemon, relative to the project root.
const DefaultSocket = wire.DefaultSocket

// DefaultMemoryLimit is `custodian serve`'s soft memory limit (160 MB).
const DefaultMemoryLimit = 160 << 20

// Config is everything that decides how a daemon runs. The zero value of
// each optional field is documented with it.
type Config struct {
	// Root is the project's root directory. Required.
	Root string
	// Store is the store URL: "" for the file store under Root (held in
	// Hold mode for the daemon's lifetime), or etcd://… / etcds://…
	Store string

	// Addr is the TCP address to listen on ("": none). A non-loopback
	// address needs Token.
	Addr string
	// Socket is the unix socket's path, relative to Root unless absolute
	// ("": none). At least one of Addr and Socket is required.
	Socket string
	// Token is the agents' bearer token over TCP ("": a change over TCP
	// needs AdminToken, and agents use the socket).
	Token string
	// AdminToken opens the human decisions, on every door (the unix
	// socket included): a request without it has agent rights. "": with
	// AdminCredential the project's credential, else a random one is
	// generated and announced on Stderr.
	AdminToken string
	// AdminCredential takes the admin token from the project's credential
	// file (package admincred), creating it when there is none: what the
	// human's CLI reads and attaches (custodian serve sets it).
	AdminCredential bool

	// SnapshotInterval is the least time between two rewrites of a
	// snapshot file (file store; 0: the store's default, 50ms).
	SnapshotInterval time.Duration
	// SegmentBytes is the size past which a journal is sealed into a
	// segment (file store; 0: the store's default).
	SegmentBytes int64
	// MaxDocumentBytes caps a document's size (0: the store's default).
	MaxDocumentBytes int
	// MaxWatchers caps the watch streams open at once (0: the server's
	// default).
	MaxWatchers int
	// MonitorEvery is the heartbeat monitor's interval (0: no monitor).
	MonitorEvery time.Duration
	// MemoryLimit is the process's soft memory limit (0: leave the
	// runtime's; $GOMEMLIMIT wins). See TuneRuntime.
	MemoryLimit int64

	// Board mounts the web dashboard at /.
	Board bool
	// MCP mounts the Model Context Protocol door at /mcp.
	MCP bool

	// Logger receives the daemon's structured log (nil: discarded).
	Logger *slog.Logger
	// Stdout receives the reports of direct edits (nil: discarded).
	Stdout io.Writer
	// Stderr receives the dashboard's address and a generated admin
	// token (nil: discarded).
	Stderr io.Writer
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// ASDDConfig returns the ASDD configuration in force (nil:
	// .asdd/config.yaml under Root, parsed again when it changes).
	ASDDConfig func() (*asdd.Config, error)
}

// withDefaults returns c with its nil fields filled in.
func (c Config) withDefaults() Config {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Stdout == nil {
		c.Stdout = io.Discard
	}
	if c.Stderr == nil {
		c.Stderr = io.Discard
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ASDDConfig == nil {
		c.ASDDConfig = cachedConfig(c.Root)
	}
	return c
}

// validate refuses a configuration the daemon cannot run with.
func (c Config) validate() error {
	if c.Root == "" {
		return reason.Usage("daemon: no project root")
	}
	if c.Addr == "" && c.Socket == "" {
		return reason.Usage("nothing to listen on: give --addr or --socket")
	}
	if c.Addr != "" {
		return CheckBind(c.Addr, c.Token)
	}
	return nil
}

// CheckBind refuses a TCP address off loopback unless a token is set.
func CheckBind(addr, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return reason.Usage("--addr %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if token == "" {
		return reason.Usage("--addr %s is not a loopback address: set --token (or $CUSTODIAN_TOKEN) so that only agents with it can change the state", addr)
	}
	return nil
}
