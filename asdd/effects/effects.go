package effects

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/atomicfile"
	"github.com/custodian-dev/custodian/reason"
)

// MaxArtifactBytes bounds the size of an artifact the custodian reads.
const MaxArtifactBytes = 256 << 20

// Project is a project directory opened as an os.Root.
type Project struct {
	root *os.Root
	// dir is the root directory itself, opened through root on first use
	// (rootFile), for openBeneath; a Project may be used concurrently.
	dirOnce sync.Once
	dir     *os.File
	dirErr  error
}

// Open opens the project at dir.
func Open(dir string) (*Project, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open project %s: %w", dir, err)
	}
	return &Project{root: r}, nil
}

// Close releases the project root.
func (p *Project) Close() error {
	p.dirOnce.Do(func() {}) // no open after this
	if p.dir != nil {
		p.dir.Close()
	}
	return p.root.Close()
}

// rootFile returns the project's directory, opened through the root.
func (p *Project) rootFile() (*os.File, error) {
	p.dirOnce.Do(func() { p.dir, p.dirErr = p.root.Open(".") })
	if p.dir == nil && p.dirErr == nil {
		return nil, os.ErrClosed
	}
	return p.dir, p.dirErr
}

// readBeneath reads name through openBeneath's fast path; ok is false when
// the path must be resolved by locate (and then nothing was read).
func (p *Project) readBeneath(name string) (b []byte, ok bool, err error) {
	f, ok := p.openBeneath(name)
	if !ok {
		return nil, false, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false, nil // locate says what it is
	}
	b, err = readFile(name, f)
	return b, true, err
}

// read returns a file's content; ok is false when it does not exist.
func (p *Project) read(name string) ([]byte, bool, error) {
	if err := asdd.CleanRelPath(name); err != nil {
		return nil, false, err
	}
	if b, ok, err := p.readBeneath(name); ok {
		return b, err == nil, err
	}
	pl, err := p.locate(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer pl.close()
	return p.readAt(name, pl)
}

// readAt reads the file at pl, checking that it is the regular file
// locate found.
func (p *Project) readAt(name string, pl *place) ([]byte, bool, error) {
	if pl.info == nil {
		return nil, false, nil
	}
	if !pl.info.Mode().IsRegular() {
		return nil, false, reason.New(reason.InvalidInput, "%s is not a regular file", name)
	}
	f, err := pl.dir.OpenFile(pl.base, os.O_RDONLY|openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, pathError(name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, pathError(name, err)
	}
	if !os.SameFile(fi, pl.info) {
		return nil, false, reason.New(reason.Conflict, "%s changed while it was being read", name)
	}
	b, err := readFile(name, f)
	return b, err == nil, err
}

// readFile reads the open file f (name), up to MaxArtifactBytes.
func readFile(name string, f *os.File) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, MaxArtifactBytes+1))
	if err != nil {
		return nil, pathError(name, err)
	}
	if len(b) > MaxArtifactBytes {
		return nil, reason.New(reason.InvalidInput, "%s is larger than %d bytes", name, MaxArtifactBytes)
	}
	return b, nil
}

// pathError turns an os.Root refusal into INVALID_INPUT.
func pathError(name string, err error) error {
	if strings.Contains(err.Error(), "path escapes") {
		return reason.New(reason.InvalidInput, "%s leaves the project (a symlink points outside it)", name)
	}
	if errors.Is(err, syscall.ELOOP) {
		return reason.New(reason.StateInconsistency, "%s cannot be resolved: a symlink loop", name)
	}
	if errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.ENODEV) {
		return reason.New(reason.InvalidInput, "%s is not a regular file: %v", name, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// Sum is "sha256:<hex>" of b.
func Sum(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// Hash returns the hash of the file at name, or "" when it does not exist.
func (p *Project) Hash(name string) (string, error) {
	b, ok, err := p.read(name)
	if err != nil || !ok {
		return "", err
	}
	return Sum(b), nil
}

// Artifact reads an artifact a proposal names: its hash, and the hash it
// will have once marked with marker if the proposal halts. A missing file
// is STATE_INCONSISTENCY: an agent may not name what it did not write. A
// path that is, or resolves through symlinks to, one of the custodian's own
// files (package managed) or git's is INVALID_INPUT: a halt would write
// its marker there.
func (p *Project) Artifact(name, file, marker string) (asdd.Artifact, error) {
	if err := asdd.CleanPath(file); err != nil {
		return asdd.Artifact{}, err
	}
	if err := ordinary(file, &place{rel: file}); err != nil {
		return asdd.Artifact{}, err // by its own name
	}
	if b, ok, err := p.readBeneath(file); ok {
		// No symlink on the way: the file is the name's (checked above).
		if err != nil {
			return asdd.Artifact{}, err
		}
		return artifactOf(name, file, marker, b), nil
	}
	pl, err := p.locate(file)
	if errors.Is(err, fs.ErrNotExist) {
		return asdd.Artifact{}, reason.New(reason.StateInconsistency, "artifact %s does not exist", file).With("path", file)
	}
	if err != nil {
		return asdd.Artifact{}, err
	}
	defer pl.close()
	if err := ordinary(file, pl); err != nil {
		return asdd.Artifact{}, err
	}
	b, ok, err := p.readAt(file, pl)
	if err != nil {
		return asdd.Artifact{}, err
	}
	if !ok {
		return asdd.Artifact{}, reason.New(reason.StateInconsistency, "artifact %s does not exist", file).With("path", file)
	}
	return artifactOf(name, file, marker, b), nil
}

func artifactOf(name, file, marker string, b []byte) asdd.Artifact {
	a := asdd.Artifact{Name: name, Path: file, SHA256: Sum(b), MarkedSHA256: Sum(asdd.MarkContent(marker, b))}
	if u, ok := asdd.UnmarkContent(marker, b); ok && marker != "" {
		a.UnmarkedSHA256 = Sum(u)
	}
	return a
}

// Observe hashes every path ("" for a missing one): the consistency and
// drift check of a proposal.
func (p *Project) Observe(paths []string) (map[string]string, error) {
	out := make(map[string]string, len(paths))
	for _, name := range paths {
		if asdd.CleanRelPath(name) != nil {
			continue // hand-written names outside the project are not ours to read
		}
		h, err := p.Hash(name)
		if err != nil {
			return nil, err
		}
		out[name] = h
	}
	return out, nil
}

// Apply applies effects in order. It goes on after a failure and returns
// every error, joined.
func (p *Project) Apply(effs []asdd.Effect) error {
	var errs []error
	for _, e := range effs {
		if err := p.apply(e); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", e.Kind, e.Path, err))
		}
	}
	return errors.Join(errs...)
}

func (p *Project) apply(e asdd.Effect) error {
	if err := asdd.CleanRelPath(e.Path); err != nil {
		return err
	}
	switch e.Kind {
	case asdd.EffectMarkArtifact, asdd.EffectUnmarkArtifact, asdd.EffectWriteFile, asdd.EffectUpsertRow:
	default:
		return fmt.Errorf("unknown effect kind %q", e.Kind)
	}
	marking := e.Kind == asdd.EffectMarkArtifact || e.Kind == asdd.EffectUnmarkArtifact
	pl, err := p.locate(e.Path)
	if errors.Is(err, fs.ErrNotExist) && !marking {
		// a new notice or log in a directory still to be made
		if err := p.root.MkdirAll(path.Dir(e.Path), 0o755); err != nil {
			return pathError(e.Path, err)
		}
		pl, err = p.locate(e.Path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("artifact to mark does not exist")
	}
	if err != nil {
		return err
	}
	defer pl.close()
	if marking {
		err = ordinary(e.Path, pl)
	} else {
		err = own(e.Kind, e.Path, pl)
	}
	if err != nil {
		return err
	}
	unlock, err := p.lock(pl)
	if err != nil {
		return err
	}
	defer unlock()
	// Look again under the lock: another effect may have replaced it.
	pl.info = nil
	if fi, err := pl.dir.Lstat(pl.base); err == nil {
		pl.info = fi
	} else if !errors.Is(err, fs.ErrNotExist) {
		return pathError(e.Path, err)
	}
	if pl.info != nil && pl.info.Mode()&fs.ModeSymlink != 0 {
		return reason.New(reason.Conflict, "%s became a symlink while it was being changed", e.Path)
	}
	b, ok, err := p.readAt(e.Path, pl)
	if err != nil {
		return err
	}
	switch e.Kind {
	case asdd.EffectMarkArtifact:
		if !ok {
			return fmt.Errorf("artifact to mark does not exist")
		}
		return p.write(pl, b, ok, asdd.MarkContent(e.Marker, b))
	case asdd.EffectUnmarkArtifact:
		if !ok {
			return fmt.Errorf("artifact to unmark does not exist")
		}
		if u, marked := asdd.UnmarkContent(e.Marker, b); marked {
			return p.write(pl, b, ok, u)
		}
		return nil // rewritten since: nothing to take away
	case asdd.EffectWriteFile:
		return p.write(pl, b, ok, []byte(e.Content))
	default: // asdd.EffectUpsertRow
		old := b
		if !ok {
			b = []byte(e.Header)
		}
		return p.write(pl, old, ok, UpsertRow(b, e.Key, e.Content))
	}
}

// UpsertRow returns doc with row (tagged with an HTML comment carrying key)
// replacing the line tagged with key, or appended.
func UpsertRow(doc []byte, key, row string) []byte {
	tag := "<!-- " + key + " -->"
	line := row + " " + tag
	lines := strings.SplitAfter(string(doc), "\n")
	for i, l := range lines {
		if strings.HasSuffix(strings.TrimRight(l, "\n"), tag) {
			if strings.TrimRight(l, "\n") == line {
				return doc
			}
			lines[i] = line + "\n"
			return []byte(strings.Join(lines, ""))
		}
	}
	out := doc
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, line+"\n"...)
}

// write replaces the file at pl with data atomically and durably, unless
// it already holds data (old, when it exists): a temporary file created new
// (O_EXCL, so a planted symlink is never followed) beside it, in the
// directory held open, renamed over it, the directory synced.
func (p *Project) write(pl *place, old []byte, exists bool, data []byte) error {
	if exists && bytes.Equal(old, data) {
		return nil
	}
	if err := atomicfile.Write(pl.dir, pl.base, data, 0o644); err != nil {
		return pathError(pl.rel, err)
	}
	return nil
}
