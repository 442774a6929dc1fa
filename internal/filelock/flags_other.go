//go:build !unix

package filelock

const openFlags = 0

// dirLocks: LockFileEx locks files only; a directory's lock is a no-op
// here (effects are serialised within the process only).
const dirLocks = false
