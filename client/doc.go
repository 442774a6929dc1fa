// Package client is the Go client of the Custodian daemon (custodian serve)
// for agents written in Go, and the remote store the CLI uses while a
// daemon runs.
//
//	c, err := client.New("unix:///repo/.asdd/state/custodian.sock", client.Options{})
//	res, err := c.Propose(ctx, asdd.Proposal{Agent: "spec", Slice: "SLICE-001", Score: 0.97, …})
//	if errors.Is(err, reason.SliceLocked) { … }
//
// Errors the daemon returns come back as *reason.Error with the daemon's
// code and message, so errors.Is(err, reason.BelowThreshold) and
// reason.ExitCode work exactly as on errors of the local store and rules.
// Transport failures are ordinary errors (exit 1).
//
// Requests go out on net/http's Transport (over a unix socket through
// package unixsock's dialer, so a socket path of any length works), with a
// pool of keep-alive connections; responses are decoded with
// encoding/json's semantics by github.com/go-json-experiment/json.
//
// *Client implements store.Store: Update reads the document, runs the
// function locally, and commits with If-Match (compare-and-swap), retrying
// on CONFLICT up to store.MaxRetries times — so every command written
// against store.Store works through the daemon unchanged. Values too large
// for one request body are sent as an RFC 6902 patch from the revision they
// were computed on. Watch follows the daemon's Server-Sent Events stream and
// reconnects after a dropped connection with Last-Event-ID, so no commit is
// missed or repeated.
package client
