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
	tmp := TempName(name)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && beforeRename != nil {
		err = beforeRename()
	}
	if err == nil {
		err = root.Rename(tmp, name)
	}
	if err != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("replace %s: %w", name, err)
	}
	return SyncDir(root, path.Dir(name))
}

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
