package file_test

import (
	"os"
	"testing"

	"github.com/custodian-dev/custodian/internal/testbin"
	"github.com/custodian-dev/custodian/internal/testenv"
)

func TestMain(m *testing.M) {
	// The crash and recovery tests make the store log hundreds of
	// notices: not on the terminal (open gives a store the test's log).
	testenv.DiscardDefaultLogs()
	os.Exit(testbin.Main(m))
}
