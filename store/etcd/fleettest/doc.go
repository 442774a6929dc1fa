// Package fleettest holds the tests of several Custodian daemons sharing
// one etcd cluster, as if on several machines: each daemon is a separate
// process serving the HTTP API (package server) on its own etcd Store, and
// clients (package client) are spread across them. It has no code of its
// own besides its tests.
package fleettest
