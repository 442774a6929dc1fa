package file

import (
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
// anything but a regular file (or a symlink to one inside the root).
func (d *doc) openRegular(name string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := d.s.root.OpenFile(name, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENODEV) {
			return nil, notRegular(name, err)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, reason.New(reason.CorruptState, "%s is %s, not a regular file: move it away (the custodian never reads or replaces it)", name, kindOf(fi.Mode()))
	}
	return f, nil
}

func notRegular(name string, err error) error {
	return reason.New(reason.CorruptState, "%s is not a regular file (%v): move it away (the custodian never reads or replaces it)", name, err)
}

// kindOf names a file mode's type for messages.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
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
	f, err := d.openRegular(name, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fileID{}, nil
	}
	if err != nil {
		if _, ok := reason.As(err); ok {
			return nil, fileID{}, err
		}
		return nil, fileID{}, pathError(d.p.key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fileID{}, fmt.Errorf("read %s: %w", name, err)
	}
	b, err := readSized(f, fi.Size())
	if err != nil {
		return nil, fileID{}, fmt.Errorf("read %s: %w", name, err)
	}
	return b, idOf(fi), nil
}

// readSized reads f to its end into a buffer of its size as stat gave it
// (as os.ReadFile does): a snapshot of a megabyte is read into one buffer,
// not copied from buffer to buffer as io.ReadAll grows its own.
func readSized(f io.Reader, size int64) ([]byte, error) {
	n := 512
	if size > 0 && size < 1<<40 {
		n = int(size) + 1 // one more, to see the end without growing
	}
	b := make([]byte, 0, n)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grown (the file grew since)
		}
		k, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+k]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
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
