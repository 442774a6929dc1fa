package etcd_test

import (
	"os"
	"testing"

	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/store/etcd/etcdtest"
	"github.com/custodian-dev/custodian/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.Main(m)) }

// open returns a Store on a fresh prefix of the shared embedded server,
// with a client of its own.
func open(t testing.TB, opts etcd.Options) *etcd.Store {
	t.Helper()
	if opts.Prefix == "" {
		opts.Prefix = etcdtest.Prefix(t)
	}
	s := etcd.New(etcdtest.Client(t), opts)
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, etcd.Options{}) })
}
