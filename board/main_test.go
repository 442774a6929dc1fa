package board_test

import (
	"os"
	"testing"

	"github.com/custodian-dev/custodian/internal/testbin"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
