package runner

import (
	"os"
	"testing"

	"github.com/custodian-dev/custodian/internal/testenv"
)

func TestMain(m *testing.M) {
	// Each case of the property runs the runner twice, polling: 20 cases
	// by default, rapid's 100 in a soak run.
	testenv.RapidChecks(20)
	os.Exit(m.Run())
}
