// Package fleettest holds the tests of several Custodian daemons sharing
// one etcd cluster, as if on several machines: each daemon is a real
// `custodian serve --store etcd://…` process (built by internal/testbin) in
// its own project directory, and clients (package client) are spread
// across them. It lives apart so that the embedded etcd server it starts
// (package etcdtest) is linked only into test binaries, never into the
// custodian binary. It has no code of its own besides its tests.
package fleettest
