// Package store is the contract of Custodian's durable JSON document store
// (DESIGN.md §2) and the pieces every backend shares.
//
// A document has a key (its path relative to the project root, such as
// ".asdd/state/manifest.json"), a JSON value and a revision that grows by one
// per commit. Update runs a function against the latest committed value and
// commits its result atomically; the commit is durable before Update returns.
// Every commit appends one Record to the document's journal: revision, time,
// actor, reason, the RFC 6902 patch from the previous value, the domain
// events, the SHA-256 of the new value in canonical form, and a SHA-256 hash
// chained to the previous record. A Change may carry the RFC 6902 patch
// from the current value (Change.Patch), which a backend may apply to its
// decoded value instead of diffing the whole document. History, diffs, reads at a past revision,
// rollback (a new commit restoring an old value) and watch all come from the
// journal.
//
// The backends live in sub-packages: store/file (embedded, the default) and
// store/etcd. Package store/storetest is the conformance suite every backend
// passes.
//
// # Journal record format
//
// One JSON object per line (NDJSON), fields in this order:
//
//	{"rev":1,"time":"2026-11-21T23:40:00.123Z","actor":"spec","reason":"...",
//	 "patch":[...RFC 6902 ops...],"events":[...],"sum":"sha256:<hex>",
//	 "prev":"sha256:<hex>","hash":"sha256:<hex>"}
//
// sum is the SHA-256 of the document's canonical form after the commit
// (compact JSON, object keys sorted). It may be "": the file backend's
// daemon mode computes it once per group write, on the group's last record
// only. Replay and Verify check every non-empty sum (an empty one through
// the next record that has one), and recovery identifies a snapshot's
// revision by the last record whose sum matches it. hash is the SHA-256 of the record's
// own line as written with hash set to "" — so changing any byte of any
// earlier record breaks every later link. prev is "" for revision 1.
package store
