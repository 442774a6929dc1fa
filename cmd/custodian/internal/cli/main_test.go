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
	// The admin credentials the tests' projects make (package admincred)
	// go to a directory of their own, not the user's configuration.
	dir, err := os.MkdirTemp("", "custodian-cli-config-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := testbin.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}
