//go:build !unix

package progress

import "os"

const openFlags = 0

// links is the file's hard link count, where the platform says it.
func links(os.FileInfo) uint64 { return 1 }
