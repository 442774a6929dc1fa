// Package atomicfile replaces a file durably, so that a reader sees either
// the old content or the new one, never a torn mix, and the new content
// survives a crash once the call returns: a temporary file in the same
// directory, write, fsync, rename over the target, fsync the directory.
//
// It is the same sequence store/file's snapshot writer follows
// (replaceFile, which adds fault points and a hook before the rename);
// internal/cli's writeFileAtomic and cycle/progress's writeAtomic are two
// more copies that could move here.
package atomicfile

import (
	"fmt"
	"os"
	"path"
	"strconv"
	"sync/atomic"
	"time"
)

var seq atomic.Uint64

// TempName is the name of a temporary file beside name that no other
// writer (another goroutine or process) picks at the same time.
func TempName(name string) string {
	return name + ".tmp-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(seq.Add(1), 10) + "-" +
		strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
}

// Write replaces name (a slash path inside root) with data, durably. The
// directory must exist. BeforeRename, when set, runs once the new content
// is synced and before it replaces name; an error from it leaves name as
// it was. A failure removes the temporary file and leaves name as it was.
// A failed fsync is never retried.
func Write(root *os.Root, name string, data []byte, perm os.FileMode, beforeRename func() error) error {
	t, err := Stage(root, name, data, perm)
	if err != nil {
		return err
	}
	if beforeRename != nil {
		if err := beforeRename(); err != nil {
			t.Abort()
			return fmt.Errorf("replace %s: %w", name, err)
		}
	}
	if err := t.Commit(); err != nil {
		return err
	}
	return SyncDir(root, path.Dir(name))
}

// Temp is new content for a file, written and synced to a temporary file
// beside it, not yet in its place: Commit renames it over the file, Abort
// removes it. Several Temps of one directory may be committed and then
// made durable with one SyncDir.
type Temp struct {
	root      *os.Root
	tmp, name string
}

// Stage writes data to a temporary file beside name and fsyncs it.
func Stage(root *os.Root, name string, data []byte, perm os.FileMode) (*Temp, error) {
	tmp := TempName(name)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(tmp)
		return nil, fmt.Errorf("write %s: %w", name, err)
	}
	return &Temp{root: root, tmp: tmp, name: name}, nil
}

// Commit renames the temporary file over the file. The rename is durable
// once the directory is synced (SyncDir).
func (t *Temp) Commit() error {
	if err := t.root.Rename(t.tmp, t.name); err != nil {
		_ = t.root.Remove(t.tmp)
		return fmt.Errorf("replace %s: %w", t.name, err)
	}
	return nil
}

// Abort removes the temporary file.
func (t *Temp) Abort() { _ = t.root.Remove(t.tmp) }

// SyncDir fsyncs a directory of root, making renames in it durable.
func SyncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
