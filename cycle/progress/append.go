package progress

import (
	"bytes"
	"fmt"
	"os"
	"path"
)

// Append appends records (each one compact JSON value, no newline) to the
// log rel inside root in one write, under an exclusive flock on the log's
// lock file (.<name>.lock beside it, the one the seed's workers take), and
// fsyncs it (and its directory when the log is new). A log whose last line
// was torn by a crash gets a newline first, so records stay whole. The log
// and every directory on its way are reached through no symlink, and the
// log must be a regular file with no other hard link (nofollow.go).
func Append(root *os.Root, rel string, records [][]byte) error {
	d, err := openDir(root, path.Dir(rel))
	if err != nil {
		return err
	}
	defer d.Close()
	base := path.Base(rel)
	unlock, err := lock(d, "."+base+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	f, created, err := openAppend(d, base, rel)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", rel, err)
	}
	var buf bytes.Buffer
	if fi.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			buf.WriteByte('\n')
		}
	}
	for _, r := range records {
		buf.Write(r)
		buf.WriteByte('\n')
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("append to %s: %w", rel, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", rel, err)
	}
	if created {
		dir, err := d.Open(".")
		if err != nil {
			return fmt.Errorf("open %s: %w", path.Dir(rel), err)
		}
		err = dir.Sync()
		dir.Close()
		if err != nil {
			return fmt.Errorf("sync %s: %w", path.Dir(rel), err)
		}
	}
	return nil
}
