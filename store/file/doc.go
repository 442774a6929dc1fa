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
//	<dir>/.<name>.lock                      the flock(2) lock file
//
// The ASDD manifest keeps the names of DESIGN.md: .asdd/state/manifest.json,
// .asdd/state/journal.ndjson and .asdd/state/.lock (a key whose base name is
// manifest.json uses journal.ndjson and .lock in its directory).
//
// # Commit
//
// Take the lock; bring the in-memory view up to date (recovering if needed);
// run the update function; append the journal record and fsync it — the
// commit point; write <name>.json.tmp, fsync, rename over the snapshot, fsync
// the directory; seal the live journal as a segment if it is past
// Options.SegmentBytes; release the lock. A failed fsync fails the commit, is never
// retried, and poisons the open store for that document: its outcome on disk
// is unknown until the store is opened again and recovers.
//
// # Recovery (on every first access in a process, and whenever the files
// changed behind this process)
//
//   - A leftover .tmp is removed when the snapshot parses, promoted when the
//     snapshot is missing (seed 002's rules), and moved aside otherwise.
//   - A torn last journal line (no trailing newline) is cut off after the
//     whole journal is copied to <journal>.broken-<time>. A bad record or a
//     broken hash link anywhere else is a CORRUPT_STATE error naming the
//     revision: the journal is never repaired by guessing.
//   - The snapshot's canonical SHA-256 identifies the revision it holds;
//     journal records newer than it are replayed onto it. Only the live
//     journal, the newest segment's last line and the segments back to
//     the snapshot's revision are read (segment.go).
//   - The anchor (<dir>/.<name>.head: the head's revision and hash,
//     rewritten after every commit; anchor.go) must be reached by the
//     journal through the record it names: lost records, a missing journal
//     or a rewritten history are CORRUPT_STATE, changing nothing, until
//     Repair. With a journal key (Options.JournalKey) records and anchor
//     carry HMACs.
//   - A snapshot that does not parse, or that matches no journal record (it
//     was edited behind the custodian's back), is moved aside to
//     <name>.json.corrupt-<time> / <name>.json.unjournaled-<time> and rebuilt
//     from the journal; then the direct edit is adopted as a commit by
//     "direct-edit" or kept aside, by Options.DirectEdits (direct.go).
//     Without a journal to rebuild from, open refuses with CORRUPT_STATE
//     and leaves the file where it is.
//   - A FIFO, device, socket or directory where a state file belongs is
//     CORRUPT_STATE at once: every state file is opened with O_NONBLOCK
//     and checked to be a regular file (regular.go).
//   - A snapshot with no journal (a file made by another tool) is adopted: the
//     first commit journals it as revision 1 and the change as revision 2.
//
// Outside Hold mode each commit (and an open that read everything) leaves
// a checkpoint (<dir>/.<name>.checkpoint; checkpoint.go) naming the journal
// file's identity, its last record and the snapshot's hash: an open that
// finds the files exactly so reads that record and hashes the snapshot
// instead of reading the journal and parsing the snapshot, so a command's
// cost does not grow with the journal. Anything else takes the recovery
// above.
//
// # Hold mode (the daemon)
//
// With Options.Hold (custodian serve) one process owns the documents for its
// lifetime: Open takes an exclusive flock on .asdd/state/custodian.pid and
// writes its pid there (a second daemon is refused with CONFLICT naming that
// pid); each document's lock is taken on first use and kept until Close.
// Reads are served from memory (Get of the latest revision reads it
// without the commit lock, once it is durable), and the values handed out
// (Get, the current Document an UpdateFunc sees) are the ones in memory,
// not copies: callers must not modify them; a Document may carry only its
// Model, whose bytes Document.Bytes makes. A commit queues its journal record and
// waits on its group; the document's syncer goroutine takes every queued
// record, seals them (hash links), writes them in one append and fsyncs
// (group commit), and only then are the commits acknowledged, readable and
// delivered to watchers. A Change given as a patch with its Model (the
// application layer's operations) is journaled as given and the Model is
// kept as the value (no copy of the store's own): its bytes are made, once,
// only when a read, a snapshot or a generic writer needs them, and
// Document.Model hands it back with the revision. Records committed that
// way carry no canonical sum. Outside Hold mode the bytes are made from the
// Model at once (the snapshot is written with the commit); the record
// carries no sum either, and the checkpoint names the snapshot's revision.
// The snapshot is rewritten in the background with the latest synced value
// at most once per SnapshotInterval (50 ms by default), never more than a
// tenth of the time, and on Close; when its revision's record has no sum, a
// mark (mark.go) binds the snapshot file's SHA-256 to the revision first.
// After a crash the snapshot may be behind the journal by the commits of an
// interval — the recovery rule for a snapshot behind its journal replays
// them. The syncer seals the live journal between two group writes once it
// is past SegmentBytes and the snapshot holds one of its revisions. The
// file format is the same in both modes.
//
// In Hold mode, Options.SnapshotOnCommit names documents whose snapshot is
// rewritten before their commit is acknowledged (files plugins read back
// from disk at once); custodian serve names the task manifest, the agent
// state and the cycle files.
//
// .agents/tmp/state.json is also committed (and, in Hold mode, its snapshot
// rewritten) under flock(2) on .agents/tmp/state.json.lock, the lock the
// state-manager plugins take around their own rewrites of that file.
//
// The lock is advisory flock(2): all writers must go through Custodian, and
// network file systems (NFS) are not supported.
//
// # Code
//
// Store's methods (file.go) take a document's doc (document.go: what this
// process knows of one document's files and value) under its locks
// (lock.go). A value in memory is a value (value.go): bytes, or the
// proposer's model whose bytes are made when needed. The files each have
// their own: the journal (journal.go: read, append and fsync, the
// journalView; segment.go: sealed segments; anchor.go and witness.go: the
// head's anchor and its witness), the snapshot (snapshot.go: durable
// replacement, the snapshotView; checkpoint.go; mark.go). Commit is
// commit.go; recovery is recover.go (load), verify.go and repair.go;
// direct edits are direct.go and editbase.go; Hold mode is hold.go (the
// hold type, a doc's in Hold mode only: group commit, the syncer, the
// paced snapshot writer; its checks for direct edits are in direct.go);
// Watch is watch.go.
package file
