// Package file is Custodian's embedded store backend: JSON documents kept as
// readable snapshot files inside the project, each with an append-only
// journal beside it and a lock file for cross-process exclusion.
//
// # Files
//
// For a document key (a path relative to the project root ending in .json):
//
//	<dir>/<name>.json                       the snapshot: the value, two-space indented
//	<dir>/<name>.journal.ndjson             the live journal (store package doc: record format)
//	<dir>/<name>.journal.<from>-<to>.ndjson a sealed journal segment (segment.go)
//	<dir>/.<name>.head                      the anchor: the head's revision and hash (anchor.go)
//	<dir>/.<name>.checkpoint, .<name>.marks what names the snapshot's revision (checkpoint.go, mark.go)
//	<dir>/.<name>.lock                      the flock(2) lock file
//
// The ASDD manifest keeps the names of DESIGN.md: .asdd/state/manifest.json,
// .asdd/state/journal.ndjson, and .lock, .head, .marks, .checkpoint in its
// directory. .agents/tmp/state.json is also committed under flock(2) on
// state.json.lock, the lock its plugins take around their own rewrites. The
// locks are advisory: every writer goes through Custodian; NFS is not
// supported.
//
// # Commit
//
// Take the lock; bring the view up to date (recovering if needed); run the
// update function; append the journal record and fsync it (the commit
// point); replace the snapshot durably (tmp, fsync, rename, directory
// fsync); rewrite the anchor and the checkpoint; seal the live journal as a
// segment past Options.SegmentBytes. A failed fsync fails the commit, is
// never retried, and poisons the document until it is opened again.
//
// # Recovery (recover.go, verify.go, repair.go)
//
// A torn last journal line is cut off after the journal is copied aside; a
// bad record or broken hash link elsewhere is CORRUPT_STATE. Records newer
// than the snapshot are replayed onto it. The anchor, and its copy outside
// the work tree (the witness, witness.go), must be reached by the journal:
// lost records or a rewritten or rewound history are CORRUPT_STATE, changing
// nothing, until Repair. A snapshot that does not parse, or matches no
// revision (a direct edit), is moved aside, rebuilt from the journal and the
// edit adopted or kept aside by Options.DirectEdits (direct.go). A snapshot
// with no journal (another tool's file) is adopted by the first commit. A
// checkpoint lets an open that finds the files as the last commit left them
// skip reading the journal.
//
// # Hold mode (the daemon: hold.go)
//
// With Options.Hold one process owns the documents until Close: an exclusive
// flock on the pid file refuses a second daemon, each document's lock is kept
// once taken, reads are served from memory (the values handed out are shared:
// callers must not modify them), and commits are group-committed: a commit
// queues its sealed record and waits until the document's syncer has written
// and fsynced its group. A change given as a patch with its Model is
// journaled as given, without a canonical sum, and its bytes are made only
// when needed. The snapshot is rewritten in the background (at most once per
// SnapshotInterval and a tenth of the time; on Close; before the commit is
// acknowledged for Options.SnapshotOnCommit), with a mark binding its file
// hash to the revision; a crash leaves it behind the journal, which recovery
// replays. A file watcher settles direct edits made while the daemon runs
// (editwatch.go). The file format is the same in both modes.
//
// # Code
//
// Store (file.go) finds a document's doc (document.go) and takes its locks
// (lock.go); a value in memory is a value (value.go). Commit is commit.go;
// the journal is journal.go and segment.go, its head anchor.go and
// witness.go; the snapshot is snapshot.go, checkpoint.go and mark.go; direct
// edits are direct.go and editbase.go; Watch is watch.go.
package file
