// Package server is Custodian's daemon face (DESIGN.md §2, daemon mode): an
// HTTP/JSON API over the application layer (app.Local: its operations, and
// its documents as stored, app.Reader), on the standard library's router.
//
// Document keys travel in the query (?key=.asdd/state/manifest.json), never
// in the path, so the router's path cleaning cannot change them: the store
// alone judges a key. Routes (the checked-in openapi.json describes each; a test keeps the two
// in step):
//
//	GET  /v1/health                 liveness, no token needed
//	GET  /v1/keys                   the documents the store holds (?verify=true: what verify checks)
//	GET  /v1/doc?key=K              a document (&rev=N: as it was after N)
//	PUT  /v1/doc?key=K              commit a whole value or an RFC 6902
//	                                patch (If-Match: revision compare-and-swap)
//	GET  /v1/history?key=K          journal records (&from=&to=)
//	POST /v1/verify?key=K           hash chain and replay check
//	GET  /v1/watch                  Server-Sent Events: every commit after
//	                                ?from=REV (or Last-Event-ID), in order
//	POST /v1/asdd/{op}              an ASDD operation run inside the daemon
//	                                (propose, lock, heartbeat, …)
//	GET  /v1/asdd/slices/{id}       one slice of the latest manifest
//	GET  /v1/openapi.json           the API description
//	GET  /metrics                   Prometheus metrics
//	/                               Options.UI, when set (the dashboard)
//
// Errors are {"error":{"code":"SLICE_LOCKED","message":"…"}} with an HTTP
// status chosen by the code; package client turns them back into
// *reason.Error so exit codes are the same as in direct mode.
//
// Hardening: request bodies are capped (1 MiB by default) and their JSON
// nesting depth too; every connection has read, write and idle timeouts
// (the watch stream extends its own write deadline per event); a token, when
// set, is required as "Authorization: Bearer <token>" on every route but
// /v1/health. The CLI binds TCP to loopback unless told otherwise and
// refuses a non-loopback address without a token.
package server
