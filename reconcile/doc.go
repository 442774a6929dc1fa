// Package reconcile compares what a manifest says about a project's
// artifacts with what is on disk (DESIGN.md §4, seed 000's custodial rules),
// and reconstructs slices from the disk when the manifest is gone.
//
// The package knows nothing of the manifest's layout: callers hand it a flat
// list of Artifact values (slice, artifact name, path relative to the project
// root, the "sha256:<hex>" hash recorded when the artifact was committed) and
// get Findings back:
//
//   - STATE_INCONSISTENCY: the manifest names a file that does not exist (or
//     is not a regular file).
//   - STATE_DRIFT: the file's SHA-256 differs from the recorded one: it was
//     changed without a corresponding manifest update.
//   - INVALID_INPUT: the path is not a clean relative path inside the project
//     (absolute, "..", NUL bytes), the recorded hash is malformed, or a
//     symlink on the way leads outside the project root.
//
// All artifact I/O goes through an *os.Root opened on the project root, so no
// path, however crafted, reads outside the project.
//
// # Speed
//
// Check hashes files in parallel (GOMAXPROCS workers, grouped by directory so
// that each worker resolves a directory once and then does one fstatat per
// file). A stat cache maps each path's (size, mtime, ctime, inode, device) to
// the hash last computed for it; a warm check stats every file and reads only
// those whose stat changed. Options.Full ignores the cache. An entry is never
// cached while the file could still change within the filesystem's timestamp
// granularity ("racily clean", as git calls it): a file modified less than
// Options.RacyWindow before it was hashed is hashed again next time.
//
// # Stat cache format
//
// The cache lives at .asdd/state/statcache (DefaultCachePath), rewritten
// atomically (temporary file, rename). Little-endian binary:
//
//	magic   "CSTC1\n"                       6 bytes
//	count   uvarint                          number of entries
//	entry   uvarint len, path bytes          slash-separated, clean, relative
//	        uvarint size
//	        varint  mtime (ns since epoch)
//	        varint  ctime (ns since epoch; 0 where the OS has none)
//	        uvarint inode, uvarint device
//	        32 bytes SHA-256 of the content
//	trailer 4 bytes CRC-32C (Castagnoli) of everything before it
//
// A cache that fails to decode (bad magic, bad checksum, truncated) is
// ignored: the check falls back to hashing every file, which is always safe.
//
// # Rebuild scan
//
// Scan walks .asdd/specs/<slice>/ and .asdd/traces/ and reconstructs one
// ScannedSlice per slice directory: its phase artifacts (intent,
// requirements, domain model, design, tasks), their hashes and times, its
// reasoning traces, and a guess of its lifecycle phase. Every field that is a
// guess is listed in ScannedSlice.Guessed so the caller can mark it
// NEEDS_HUMAN_REVIEW.
package reconcile
