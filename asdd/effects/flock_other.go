//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package effects

import "os"

const openFlags = 0

// flock is a no-op here: effects are serialized within the process only.
func flock(*os.File) error { return nil }
