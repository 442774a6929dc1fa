// Package daemon assembles and runs the custodian daemon (`custodian
// serve`): it opens the project's store and holds it for its lifetime (the
// file store in Hold mode, taking the state lock; or an etcd store, with
// this directory's daemon lock and the local mirrors kept current), builds
// the one application layer (app.Local) every door of the daemon commits
// through, serves the HTTP/JSON API (package server) on a unix socket and
// a TCP address with the web dashboard at / and the MCP door at /mcp, runs
// the heartbeat monitor loop, and on cancellation of its context shuts it
// all down: no new connections, in-flight requests finish, pending commits
// are synced, snapshots rewritten, the socket removed and the lock released.
//
// Config holds everything `custodian serve`'s flags decide; Run (or Start
// and Wait) runs it. Signal handling belongs to the caller.
package daemon
