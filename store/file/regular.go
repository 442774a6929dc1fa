package file

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/custodian-dev/custodian/reason"
)

// Every state file is opened with O_NONBLOCK and checked to be a regular
// file before it is read or written: a FIFO, a device, a socket or a
// directory where a journal, snapshot, lock or mark file belongs is
// refused at once with CORRUPT_STATE, never waited on (opening a FIFO for
// reading blocks until a writer comes; reading a device may never end).
// O_NONBLOCK changes nothing for a regular file.

// openRegular opens name under the store's root with flag, refusing
// anything but a regular file (or a symlink to one inside the root), and
// returns its stat as opened.
func (d *doc) openRegular(name string, flag int, perm os.FileMode) (*os.File, os.FileInfo, error) {
	f, err := d.s.root.OpenFile(name, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENODEV) {
			return nil, nil, reason.New(reason.CorruptState, "%s is not a regular file (%v): move it away (the custodian never reads or replaces it)", name, err)
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, reason.New(reason.CorruptState, "%s is %s, not a regular file: move it away (the custodian never reads or replaces it)", name, kindOf(fi.Mode()))
	}
	return f, fi, nil
}

// kindOf names a file mode's type for messages.
func kindOf(m fs.FileMode) string {
	for _, k := range []struct {
		bit  fs.FileMode
		name string
	}{{fs.ModeDir, "a directory"}, {fs.ModeNamedPipe, "a FIFO"}, {fs.ModeSocket, "a socket"}, {fs.ModeCharDevice, "a character device"}, {fs.ModeDevice, "a device"}, {fs.ModeSymlink, "a symlink"}} {
		if m&k.bit != 0 {
			return k.name
		}
	}
	return "not a regular file"
}

// readFile reads a whole state file: nil, nil when it does not exist.
func (d *doc) readFile(name string) ([]byte, error) {
	b, _, err := d.readFileID(name)
	return b, err
}

// readFileID reads a whole state file and returns the identity it had when
// opened (fstat before reading: a write during the read makes the next
// look at the file see it changed).
func (d *doc) readFileID(name string) ([]byte, fileID, error) {
	f, fi, err := d.openRegular(name, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fileID{}, nil
	}
	if err != nil {
		return nil, fileID{}, pathError(d.p.key, err)
	}
	defer f.Close()
	b, err := readSized(f, fi.Size())
	if err != nil {
		return nil, fileID{}, fmt.Errorf("read %s: %w", name, err)
	}
	return b, idOf(fi), nil
}

// readSized reads f to its end into one buffer of its size as stat gave
// it (as os.ReadFile does), not copied from buffer to buffer as io.ReadAll
// grows its own: ReadFrom grows it only when the file grew since.
func readSized(f io.Reader, size int64) ([]byte, error) {
	if size < 0 || size > 1<<40 {
		size = 0 // not a size to go by
	}
	var buf bytes.Buffer
	buf.Grow(int(size) + bytes.MinRead) // never nil: an empty file is not a missing one
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readRegular reads a file outside the store's root (a key file), at most
// max bytes, refusing anything but a regular file.
func readRegular(name string, max int64) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", name, kindOf(fi.Mode()))
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, max)
	}
	return b, nil
}
