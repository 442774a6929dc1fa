package effects

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/filelock"
	"github.com/custodian-dev/custodian/managed"
	"github.com/custodian-dev/custodian/reason"
)

// maxLinks bounds the symlinks followed while resolving one path (Linux's
// MAXSYMLINKS).
const maxLinks = 40

// place is where a project path leads once every symlink on it is
// resolved: its directory, held open (so that the directory cannot be
// swapped for another between the check and the write), and its name
// there.
type place struct {
	dir   *os.Root    // the file's directory
	base  string      // the file's name in dir: never a symlink when info is set
	rel   string      // the resolved path, relative to the project root
	info  os.FileInfo // Lstat of the file; nil when it does not exist
	roots []*os.Root  // the directories opened on the way, to close
}

func (pl *place) close() {
	for _, r := range pl.roots {
		r.Close()
	}
}

// locate resolves name, a clean project-relative path, component by
// component: each symlink is read and its target followed inside the
// project (an absolute or escaping target is INVALID_INPUT, a loop too),
// and each directory is opened and checked to be the one just examined.
// The last component may be missing (err is then nil and info nil); a
// missing directory on the way is an fs.ErrNotExist error.
func (p *Project) locate(name string) (*place, error) {
	pl := &place{}
	stack := []*os.Root{p.root}
	var names []string
	pending := strings.Split(name, "/")
	links := 0
	fail := func(err error) (*place, error) {
		pl.close()
		return nil, err
	}
	for len(pending) > 0 {
		part := pending[0]
		pending = pending[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			if len(stack) == 1 {
				return fail(reason.New(reason.InvalidInput, "%s leaves the project (through a symlink)", name))
			}
			stack, names = stack[:len(stack)-1], names[:len(names)-1]
			continue
		}
		cur := stack[len(stack)-1]
		last := true
		for _, q := range pending {
			if q != "" && q != "." {
				last = false
				break
			}
		}
		rel := path.Join(path.Join(names...), part)
		fi, err := cur.Lstat(part)
		if errors.Is(err, fs.ErrNotExist) && last {
			pl.dir, pl.base, pl.rel = cur, part, rel
			return pl, nil
		}
		if err != nil {
			return fail(pathError(name, err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if links++; links > maxLinks {
				return fail(reason.New(reason.StateInconsistency, "%s cannot be resolved: a symlink loop (more than %d links)", name, maxLinks))
			}
			target, err := cur.Readlink(part)
			if err != nil {
				return fail(pathError(name, err))
			}
			if path.IsAbs(target) || hasDrive(target) || strings.Contains(target, "\\") {
				return fail(reason.New(reason.InvalidInput, "%s: %s is a symlink to %q; only relative symlinks that stay inside the project are followed", name, rel, target))
			}
			pending = append(strings.Split(target, "/"), pending...)
			continue
		}
		if last {
			pl.dir, pl.base, pl.rel, pl.info = cur, part, rel, fi
			return pl, nil
		}
		if !fi.IsDir() {
			return fail(reason.New(reason.InvalidInput, "%s: %s is not a directory", name, rel))
		}
		sub, err := cur.OpenRoot(part)
		if err != nil {
			return fail(pathError(name, err))
		}
		pl.roots = append(pl.roots, sub)
		st, err := sub.Stat(".")
		if err != nil {
			return fail(pathError(name, err))
		}
		if !os.SameFile(fi, st) {
			return fail(reason.New(reason.Conflict, "%s: %s changed while it was being resolved", name, rel))
		}
		stack, names = append(stack, sub), append(names, part)
	}
	return fail(reason.New(reason.InvalidInput, "%s names a directory, not a file", name))
}

func hasDrive(p string) bool { return len(p) > 1 && p[1] == ':' }

// ordinary refuses a place the custodian owns (managed.Owned) or git's
// own files: only ordinary project files are marked.
func ordinary(name string, pl *place) error {
	if what, ok := managed.What(pl.rel); ok {
		via := ""
		if pl.rel != name {
			via = " (it resolves to " + pl.rel + ")"
		}
		return reason.New(reason.InvalidInput, "artifact %s is one of the custodian's own files%s: %s; name an ordinary project file", name, via, what).With("path", name)
	}
	if first, _, _ := strings.Cut(pl.rel, "/"); strings.EqualFold(first, ".git") {
		return reason.New(reason.InvalidInput, "artifact %s is inside git's own directory (%s); name an ordinary project file", name, pl.rel).With("path", name)
	}
	return nil
}

// own refuses a place for one of the custodian's own files unless it is
// where that kind of effect belongs (a notice in the escalation directory,
// a row in the failure log) and is reached at its own name, through no
// symlink.
func own(kind, name string, pl *place) error {
	where := managed.FailureLogPath
	ok := name == where
	if kind == asdd.EffectWriteFile {
		where = managed.EscalationDir + "/ or " + managed.SteeringProposalDir + "/"
		dir, base := path.Split(name)
		ok = (dir == managed.EscalationDir+"/" || dir == managed.SteeringProposalDir+"/") && base != ""
	}
	if !ok {
		return reason.New(reason.InvalidInput, "%s %s refused: this effect only writes %s", kind, name, where)
	}
	if pl.rel != name {
		return reason.New(reason.InvalidInput, "%s %s refused: it resolves to %s through a symlink; the custodian writes its own files only at their own names", kind, name, pl.rel)
	}
	return nil
}

// dirLocks serializes the file effects of this process per directory (the
// daemon applies the effects of concurrent commits at once); lockDir adds
// the directory's file lock (internal/filelock) for other processes.
var dirLocks sync.Map // root name + "\x00" + directory -> *sync.Mutex

// lock takes the locks of pl's directory: held while a file in it is read,
// changed and replaced, so that two effects on one file (two rows of the
// failure log) never overwrite each other.
func (p *Project) lock(pl *place) (unlock func(), err error) {
	key := p.root.Name() + "\x00" + path.Dir(pl.rel)
	m, _ := dirLocks.LoadOrStore(key, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	release, err := filelock.Lock(pl.dir, ".")
	if err != nil {
		mu.Unlock()
		return nil, fmt.Errorf("lock %s: %w", path.Dir(pl.rel), err)
	}
	return func() {
		release()
		mu.Unlock()
	}, nil
}
