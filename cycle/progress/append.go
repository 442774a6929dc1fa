package progress

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// Append appends records (each one compact JSON value, no newline) to the
// log rel inside root in one write, under an exclusive flock on the log's
// lock file (.<name>.lock beside it, the one the seed's workers take), and
// fsyncs it (and its directory when the log is new). A log whose last line
// was torn by a crash gets a newline first, so records stay whole.
func Append(root *os.Root, rel string, records [][]byte) error {
	dir := path.Dir(rel)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	unlock, err := lock(root, path.Join(dir, "."+path.Base(rel)+".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	_, statErr := root.Stat(rel)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := root.OpenFile(rel, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", rel, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", rel)
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
		d, err := root.Open(dir)
		if err != nil {
			return fmt.Errorf("open %s: %w", dir, err)
		}
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("sync %s: %w", dir, err)
		}
	}
	return nil
}
