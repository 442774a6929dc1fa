// Package effects applies the file side effects the asdd rules return —
// artifact markers, escalation notices, failure-log rows — and reads the
// artifacts proposals name, always inside the project root (os.Root: no
// "..", absolute path or symlink leaves it).
//
// Every effect is idempotent, so a command may re-apply them (after a crash
// between a commit and its effects, asdd.AllEffects re-derives them all).
// Files are replaced atomically: a temporary file in the same directory,
// fsync, rename, fsync of the directory.
package effects
