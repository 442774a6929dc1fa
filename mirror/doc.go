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
//	<key>                          the mirror: the value exactly as the file
//	                               store's snapshot would hold it
//	<dir>/.<stem>.mirror           its state file (.mirror beside manifest.json)
//	<dir>/.<stem>.mirror.lock      the flock(2) lock its writers take
//	<key>.direct-edit-<time>       a hand-edited mirror, kept aside
//
// The state file is JSON:
//
//	{"key": ".impl/manifest.json", "store": "etcd://10.0.0.5:2379/team/proj",
//	 "rev": 12, "file": "sha256:<hex of the mirror's bytes>",
//	 "written": "2026-11-25T18:40:00.123Z",
//	 "recent": [{"rev": 11, "file": "sha256:…"}]}
//
// # Writes
//
// A write takes the document's lock file, compares the mirror on disk with
// the state file, and, when the mirror is behind, writes the new bytes to a
// temporary file beside it, fsyncs it, replaces the state file the same way,
// renames the temporary file over the mirror and fsyncs the directory
// (package internal/atomicfile). A reader sees the old mirror or the new
// one, never a mix. The state file names the new bytes before they replace
// the mirror and remembers the previous few writes, so a crash between the
// two renames leaves a mirror the state file still recognises (at its older
// revision).
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
