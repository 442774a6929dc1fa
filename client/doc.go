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
// Over a unix socket or http:// the client keeps its own pool of keep-alive
// connections and writes each request and reads its response on the
// calling goroutine (net/http's Transport costs two goroutine hand-offs per
// request, as much CPU as the daemon's own work on a heartbeat); an idle
// connection the daemon closed is dropped before reuse, and only a GET is
// retried after a failure. https:// uses net/http's Transport.
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
