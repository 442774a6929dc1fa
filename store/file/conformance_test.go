package file_test

import (
	"testing"

	"github.com/custodian-dev/custodian/internal/testenv"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
	"github.com/custodian-dev/custodian/store/storetest"
)

func open(t testing.TB, dir string, opts file.Options) *file.Store {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testenv.Logger(t)
	}
	s, err := file.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, t.TempDir(), file.Options{})
	})
}
