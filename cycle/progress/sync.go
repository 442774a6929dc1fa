package progress

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/custodian-dev/custodian/internal/atomicfile"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/reason"
)

const (
	lockFile     = ".lock"
	revisionFile = ".revision"
)

// Latest returns the cycle's latest committed revision and state. Sync
// calls it while it holds the progress lock.
type Latest func() (uint64, cycle.State, error)

// Sync brings the progress files of cycle id, under root, up to date with
// the state latest returns. It holds the progress directory's lock while it
// works, never writes a revision older than the one last written, and
// replaces only the files whose content changed. It returns the files it
// wrote.
func Sync(root *os.Root, id string, latest Latest) ([]string, error) {
	if err := cycle.CheckID(id); err != nil {
		return nil, err
	}
	dir := cycle.ProgressDir(id)
	pd, err := openDir(root, dir) // through no symlink (nofollow.go)
	if err != nil {
		return nil, fmt.Errorf("progress files: %w", err)
	}
	defer pd.Close()
	unlock, err := lock(pd, lockFile)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rev, s, err := latest()
	if err != nil {
		return nil, err
	}
	if b, err := pd.ReadFile(revisionFile); err == nil {
		if last, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && last > rev {
			return nil, nil
		}
	}
	files, err := Render(s)
	if err != nil {
		return nil, err
	}
	var wrote []string
	for _, name := range Files {
		b, ok := files[name]
		if !ok {
			continue
		}
		p := path.Join(dir, name)
		sub, err := openDir(pd, path.Dir(name))
		if err != nil {
			return wrote, fmt.Errorf("progress files: %w", err)
		}
		base := path.Base(name)
		if fi, err := sub.Lstat(base); err == nil && fi.Mode().IsRegular() && same(sub, base, b) {
			sub.Close()
			continue
		}
		err = writeAtomic(sub, base, b) // the rename replaces a symlink, never follows it
		sub.Close()
		if err != nil {
			return wrote, err
		}
		wrote = append(wrote, p)
	}
	if err := writeAtomic(pd, revisionFile, []byte(strconv.FormatUint(rev, 10)+"\n")); err != nil {
		return wrote, err
	}
	return wrote, nil
}

// same reports whether the regular file name in dir holds b.
func same(dir *os.Root, name string, b []byte) bool {
	cur, err := dir.ReadFile(name)
	return err == nil && bytes.Equal(cur, b)
}

// Read returns the progress files of cycle id that exist, keyed by their
// path relative to the progress directory. A file larger than MaxFileBytes,
// or a path that leads outside root, is an error.
func Read(root *os.Root, id string) (map[string][]byte, error) {
	if err := cycle.CheckID(id); err != nil {
		return nil, err
	}
	dir := cycle.ProgressDir(id)
	out := map[string][]byte{}
	for _, name := range Files {
		p := path.Join(dir, name)
		fi, err := root.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, reason.New(reason.InvalidInput, "cannot read %s: %v", p, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, reason.New(reason.InvalidInput, "%s is not a regular file", p)
		}
		if fi.Size() > MaxFileBytes {
			return nil, reason.New(reason.InvalidInput, "%s is %d bytes, over the limit of %d", p, fi.Size(), MaxFileBytes)
		}
		b, err := root.ReadFile(p)
		if err != nil {
			return nil, reason.New(reason.InvalidInput, "cannot read %s: %v", p, err)
		}
		out[name] = b
	}
	return out, nil
}

// writeAtomic replaces p with b durably (internal/atomicfile).
func writeAtomic(root *os.Root, p string, b []byte) error {
	if err := atomicfile.Write(root, p, b, 0o644); err != nil {
		return fmt.Errorf("progress file: %w", err)
	}
	return nil
}
