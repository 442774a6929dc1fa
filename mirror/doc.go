// Package mirror keeps local, read-only copies of a remote store's documents
// (store/etcd) at their usual paths in the project, so that plugins and
// hooks that read .asdd/state/manifest.json, .impl/manifest.json,
// .agents/tmp/state.json or .workflow/.cycle/<id>.json directly keep
// working when the state lives in etcd.
//
// # Files
//
// For a document key (its path relative to the project root):
//
//	<key>                      the mirror: the value exactly as the file
//	                           store's snapshot would hold it
//	<dir>/.mirror              the state file of the mirrors in <dir>
//	<dir>/.mirror.lock         the flock(2) lock their writers take
//	<key>.direct-edit-<time>   a hand-edited mirror, kept aside
//
// The state file is JSON, one entry per mirrored document of the
// directory, by file name:
//
//	{"store": "etcd://10.0.0.5:2379/team/proj/",
//	 "documents": {"manifest.json": {"key": ".impl/manifest.json", "rev": 12,
//	   "file": "sha256:<hex of the mirror's bytes>", "written": "2026-11-25T18:40:00.123Z",
//	   "recent": [{"rev": 11, "file": "sha256:…"}]}}}
//
// # Writes
//
// A write takes the directory's lock file, compares each mirror on disk
// with its entry, and writes the mirrors that are behind: each new content
// to a temporary file beside its mirror, fsynced (concurrently); then the
// state file the same way; then the renames of the state file and of each
// mirror, and one fsync of the directory (package internal/atomicfile). A
// reader sees the old mirror or the new one, never a mix. The state file
// names the new bytes before they replace the mirrors and remembers the
// previous few writes of each, so a crash between the renames leaves
// mirrors the state file still recognises (at their older revision).
// Documents of one directory changed together (a daemon's batch from the
// watch) share the state file write and the directory fsync.
//
// A version older than the one on disk is never written over it.
//
// # Direct edits
//
// A mirror whose bytes are not those written for any revision the state
// file names was edited by hand: it is never adopted (the store holds the
// document) and never lost. It is renamed to <key>.direct-edit-<time>, the
// mirror is written again from the store, and the edit is reported: a
// warning in the log (the daemon's, or the command's stderr), an escalation
// notice under .asdd/escalations/ and Options.OnEdit. A deleted mirror is
// written again and reported the same way. A file found where no mirror
// was written yet is kept aside likewise unless it already holds the
// store's bytes.
package mirror
