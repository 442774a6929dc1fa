// Package atomicfile replaces files durably, the one way the custodian
// writes a file that others read: a temporary file in the same directory,
// write, fsync, rename over the target, fsync the directory. A reader sees
// the old content or the new one, never a torn file, and after the call
// returns the new content survives a crash or power loss. Paths are
// resolved inside an *os.Root, so they cannot escape it (symlinks
// included).
package atomicfile

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"
)

// Write replaces rel (a slash path inside root) with data, creating its
// directory if needed. The temporary file is unique to the call, so
// concurrent writers never share one; the last rename wins.
func Write(root *os.Root, rel string, data []byte, perm os.FileMode) error {
	dir := path.Dir(rel)
	if err := root.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	tmp := TempName(rel)
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Rename(tmp, rel)
	}
	if werr != nil {
		_ = root.Remove(tmp)
		return fmt.Errorf("write %s: %w", rel, werr)
	}
	return SyncDir(root, dir)
}

// WriteIn is Write under the directory dir.
func WriteIn(dir, rel string, data []byte, perm os.FileMode) error {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	defer r.Close()
	return Write(r, rel, data, perm)
}

// SyncDir fsyncs the directory dir inside root, so that a rename or a
// creation in it is durable.
func SyncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	serr := d.Sync()
	if cerr := d.Close(); serr == nil {
		serr = cerr
	}
	if serr != nil {
		return fmt.Errorf("sync directory %s: %w", dir, serr)
	}
	return nil
}

var seq atomic.Uint64

// TempName is the name of a temporary file beside name that no other
// writer (another goroutine or process) picks at the same time:
// <name>.tmp-<pid>-<sequence>-<nanoseconds>.
func TempName(name string) string {
	return name + ".tmp-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(seq.Add(1), 10) + "-" +
		strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
}

// Temp is new content for a file, written and synced to a temporary file
// beside it, not yet in its place: Commit renames it over the file, Abort
// removes it. Several Temps of one directory may be committed and then
// made durable with one SyncDir (the mirrors write a document and its
// state file this way, and a batch of documents with one SyncDir per
// directory).
type Temp struct {
	root      *os.Root
	tmp, name string
}

// Stage writes data to a temporary file beside name (whose directory must
// exist) and fsyncs it. A failure removes the temporary file.
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
// once the directory is synced (SyncDir). A failure removes the temporary
// file.
func (t *Temp) Commit() error {
	if err := t.root.Rename(t.tmp, t.name); err != nil {
		_ = t.root.Remove(t.tmp)
		return fmt.Errorf("replace %s: %w", t.name, err)
	}
	return nil
}

// Abort removes the temporary file.
func (t *Temp) Abort() { _ = t.root.Remove(t.tmp) }

// WritePath is Write for a file named by a path of its own, outside any
// project root (a plugin's files, the user's Claude Code settings): a
// temporary file with a random name beside it (created exclusively), mode
// perm, fsync, rename, directory fsync.
func WritePath(p string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
