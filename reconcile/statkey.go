package reconcile

import "io/fs"

// statKey is what the stat cache compares: a file whose key is unchanged is
// assumed to have unchanged content.
type statKey struct {
	Size  int64
	Mtime int64 // ns since the epoch
	Ctime int64 // ns since the epoch; 0 where unavailable
	Ino   uint64
	Dev   uint64
}

// newest returns the later of mtime and ctime, for the racy-clean test.
func (k statKey) newest() int64 { return max(k.Mtime, k.Ctime) }

func keyOf(fi fs.FileInfo) statKey {
	k := statKey{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	sysKey(fi, &k)
	return k
}
