package reconcile

import (
	"os"
	"testing"

	"github.com/custodian-dev/custodian/internal/testenv"
)

func TestMain(m *testing.M) {
	// Each case of the check's property builds a project on disk: 30
	// cases by default, rapid's 100 in a soak run.
	testenv.RapidChecks(30)
	os.Exit(m.Run())
}
