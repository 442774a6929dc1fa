package reconcile

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/custodian-dev/custodian/reason"
)

// Artifact is one file a manifest names for a slice.
type Artifact struct {
	Slice       string `json:"slice"`
	SliceStatus string `json:"slice_status,omitempty"` // for messages only ("DONE")
	Name        string `json:"artifact"`               // e.g. "requirements"
	Path        string `json:"path"`                   // relative to the project root
	Hash        string `json:"hash,omitempty"`         // recorded "sha256:<hex>"; "" when none was recorded
}

// Finding is one problem Check found with one artifact.
type Finding struct {
	Code     reason.Code `json:"code"`
	Slice    string      `json:"slice"`
	Artifact string      `json:"artifact"`
	Path     string      `json:"path"`
	Message  string      `json:"message"`
	Recorded string      `json:"recorded,omitempty"`
	Actual   string      `json:"actual,omitempty"`
}

// Err returns the finding as a *reason.Error.
func (f Finding) Err() *reason.Error {
	e := &reason.Error{Code: f.Code, Message: f.Message}
	return e.With("slice", f.Slice).With("path", f.Path)
}

// DefaultRacyWindow is how long after its last change a file must stay
// untouched before its hash may be cached. It covers filesystems with
// one- or two-second timestamps.
const DefaultRacyWindow = 2 * time.Second

// Options adjusts a Check.
type Options struct {
	// Full ignores the stat cache and hashes every file (the cache is then
	// refreshed from the result).
	Full bool
	// Workers is the number of files hashed in parallel; 0 means GOMAXPROCS.
	Workers int
	// CachePath is where the stat cache lives, relative to the root;
	// "" means DefaultCachePath.
	CachePath string
	// NoCache neither reads nor writes the stat cache.
	NoCache bool
	// ReadOnly uses the stat cache but never writes it (a git hook's check
	// writes no file).
	ReadOnly bool
	// RacyWindow: see DefaultRacyWindow (0 means the default; negative
	// means none, for tests).
	RacyWindow time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Progress, when set, is called (from several goroutines) with the
	// number of files just looked at, for a progress bar.
	Progress func(files int)
}

// Report is the outcome of a Check.
type Report struct {
	Artifacts   int       `json:"artifacts"`    // artifacts checked
	Files       int       `json:"files"`        // distinct valid paths among them
	Hashed      int       `json:"hashed"`       // files read and hashed
	Cached      int       `json:"cached"`       // files whose hash came from the stat cache
	BytesHashed int64     `json:"bytes_hashed"` // bytes read
	Unrecorded  int       `json:"unrecorded"`   // artifacts with no recorded hash: existence checked only
	Findings    []Finding `json:"findings"`     // sorted by slice, then path, then artifact
	// CacheError is why the stat cache could not be saved, if it could not.
	CacheError string `json:"cache_error,omitempty"`

	index   map[string]int
	results []fileResult
}

// Current returns the hash a file named by some artifact has now, if it
// could be read.
func (r *Report) Current(p string) (string, bool) {
	c, err := CleanPath(p)
	if err != nil {
		return "", false
	}
	i, ok := r.index[c]
	if !ok || !r.results[i].ok {
		return "", false
	}
	return FormatHash(r.results[i].sum), true
}

// Clean reports whether the check found nothing.
func (r *Report) Clean() bool { return len(r.Findings) == 0 }

// BySlice groups the findings by slice id, in slice order.
func (r *Report) BySlice() ([]string, map[string][]Finding) {
	m := map[string][]Finding{}
	var ids []string
	for _, f := range r.Findings {
		if _, ok := m[f.Slice]; !ok {
			ids = append(ids, f.Slice)
		}
		m[f.Slice] = append(m[f.Slice], f)
	}
	return ids, m
}

// fileResult is what Check learned about one distinct path.
type fileResult struct {
	sum       [32]byte
	ok        bool // sum is valid
	cached    bool // sum came from the cache
	read      int64
	key       statKey
	cacheable bool
	code      reason.Code // non-empty: the file could not be checked
	msg       string      // what is wrong, completing "path ..."
}

// Check verifies every artifact against the files under root: that it
// exists (else STATE_INCONSISTENCY), stays inside root (else INVALID_INPUT)
// and, when a hash was recorded, still has that hash (else STATE_DRIFT).
// The error is non-nil only when ctx ends; problems with artifacts are
// findings.
func Check(ctx context.Context, root *os.Root, arts []Artifact, opt Options) (*Report, error) {
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	racy := opt.RacyWindow
	if racy == 0 {
		racy = DefaultRacyWindow
	}
	cachePath := opt.CachePath
	if cachePath == "" {
		cachePath = DefaultCachePath
	}

	rep := &Report{Artifacts: len(arts)}

	// Load the cache while the paths are validated.
	var old *Cache
	loaded := make(chan struct{})
	go func() {
		defer close(loaded)
		if !opt.NoCache && !opt.Full {
			old = LoadCache(root, cachePath)
		}
	}()

	// Lexical validation, then the distinct paths to look at.
	clean := make([]string, len(arts))
	pathErr := make([]error, len(arts))
	seen := map[string]int{}
	var paths []string
	for i, a := range arts {
		clean[i], pathErr[i] = CleanPath(a.Path)
		if pathErr[i] != nil {
			continue
		}
		if _, ok := seen[clean[i]]; !ok {
			seen[clean[i]] = len(paths)
			paths = append(paths, clean[i])
		}
	}
	rep.Files = len(paths)

	<-loaded
	results := make([]fileResult, len(paths))
	h := &hasher{root: root, cache: old, now: now, racy: racy, escape: escapeSentinel(root), progress: opt.Progress}
	if err := h.run(ctx, paths, results, workers(opt.Workers)); err != nil {
		return nil, err
	}

	// The new cache: every path whose hash is known and stable. It is
	// written only when it differs from the old one.
	hits := 0
	changed := false
	for i := range paths {
		r := &results[i]
		if !r.ok {
			continue
		}
		if r.cached {
			rep.Cached++
			hits++
		} else {
			rep.Hashed++
			rep.BytesHashed += r.read
			changed = changed || r.cacheable
		}
	}
	if !opt.NoCache && !opt.ReadOnly && (old == nil || changed || hits != old.Len()) {
		next := &Cache{m: make(map[string]cacheEntry, len(paths))}
		for i, p := range paths {
			if r := &results[i]; r.ok && r.cacheable {
				next.m[p] = cacheEntry{Key: r.key, Sum: r.sum}
			}
		}
		if err := SaveCache(root, cachePath, next); err != nil {
			rep.CacheError = err.Error()
		}
	}
	rep.index, rep.results = seen, results

	// Judge the artifacts in parallel chunks, merged in order.
	type verdicts struct {
		findings   []Finding
		unrecorded int
	}
	parts := make([]verdicts, workers(opt.Workers))
	parallel(len(arts), len(parts), func(part, lo, hi int) {
		v := &parts[part]
		for i := lo; i < hi; i++ {
			if f, bad := judge(arts[i], clean[i], pathErr[i], results, seen); bad {
				v.findings = append(v.findings, f)
			} else if arts[i].Hash == "" {
				v.unrecorded++
			}
		}
	})
	for _, v := range parts {
		rep.Findings = append(rep.Findings, v.findings...)
		rep.Unrecorded += v.unrecorded
	}
	slices.SortStableFunc(rep.Findings, func(x, y Finding) int {
		return cmp.Or(cmp.Compare(x.Slice, y.Slice), cmp.Compare(x.Path, y.Path), cmp.Compare(x.Artifact, y.Artifact))
	})
	return rep, nil
}

// judge turns what is known about an artifact into a finding, if any.
func judge(a Artifact, p string, pathErr error, results []fileResult, seen map[string]int) (Finding, bool) {
	f := Finding{Slice: a.Slice, Artifact: a.Name, Path: a.Path, Recorded: a.Hash}
	what := describe(a)
	if pathErr != nil {
		f.Code = reason.InvalidInput
		f.Message = fmt.Sprintf("%s: %s", what, reasonMessage(pathErr))
		return f, true
	}
	r := results[seen[p]]
	if r.code != "" {
		f.Code = r.code
		f.Message = fmt.Sprintf("%s %s %s", what, a.Path, r.msg)
		if r.code == reason.StateInconsistency && a.SliceStatus == "DONE" {
			f.Message += fmt.Sprintf(", yet slice %s is DONE", a.Slice)
		}
		return f, true
	}
	if a.Hash == "" {
		return f, false
	}
	var hexSum [len(HashPrefix) + 64]byte
	copy(hexSum[:], HashPrefix)
	hex.Encode(hexSum[len(HashPrefix):], r.sum[:])
	if string(hexSum[:]) == a.Hash {
		return f, false // the common case, without parsing or allocating
	}
	want, err := ParseHash(a.Hash)
	if err != nil {
		f.Code = reason.InvalidInput
		f.Message = fmt.Sprintf("%s %s: %s", what, a.Path, reasonMessage(err))
		return f, true
	}
	if want != r.sum {
		f.Code = reason.StateDrift
		f.Actual = FormatHash(r.sum)
		f.Message = fmt.Sprintf("%s %s was modified without a manifest update (recorded %s, now %s)", what, a.Path, shortHash(a.Hash), shortHash(f.Actual))
		return f, true
	}
	return f, false
}

func describe(a Artifact) string {
	name := a.Name
	if name == "" {
		name = "artifact"
	}
	if a.Slice == "" {
		return name
	}
	return a.Slice + " " + name
}

func reasonMessage(err error) string {
	if e, ok := reason.As(err); ok {
		return e.Message
	}
	return err.Error()
}

func shortHash(h string) string {
	if len(h) > len(HashPrefix)+12 {
		return h[:len(HashPrefix)+12]
	}
	return h
}

// hasher computes fileResults in parallel.
type hasher struct {
	root   *os.Root
	cache  *Cache
	now    func() time.Time
	racy   time.Duration
	escape error
	dirs   *dirs
	// progress reports files looked at (Options.Progress).
	progress func(int)
}

// chunk is how many files of one directory one unit of work covers.
const chunk = 256

func (h *hasher) run(ctx context.Context, paths []string, results []fileResult, workers int) error {
	workers = min(workers, len(paths))
	// Group by directory (in order of first appearance), in chunks.
	byDir := map[string]int{} // dir -> index in groups
	var groups [][]int
	for i, p := range paths {
		d := path.Dir(p)
		g, ok := byDir[d]
		if !ok || len(groups[g]) == chunk {
			g = len(groups)
			byDir[d] = g
			groups = append(groups, make([]int, 0, 8))
		}
		groups[g] = append(groups[g], i)
	}
	workers = min(workers, len(groups))
	h.dirs = newDirs(h.root)
	defer h.dirs.close()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64<<10)
			for ctx.Err() == nil {
				u := int(next.Add(1) - 1)
				if u >= len(groups) {
					return
				}
				h.unit(groups[u], paths, results, buf)
				if h.progress != nil {
					h.progress(len(groups[u]))
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("check: %w", err)
	}
	return nil
}

// unit checks the files of one directory: the directory is resolved once
// (through the root, so it cannot lead outside), then each file costs one
// lstat, plus an open and a read when its hash is not cached.
func (h *hasher) unit(group []int, paths []string, results []fileResult, buf []byte) {
	dir, owned, err := h.dirs.open(path.Dir(paths[group[0]]))
	if err != nil {
		// Let the slow path classify each file precisely.
		for _, i := range group {
			results[i] = h.viaRoot(paths[i], buf)
		}
		return
	}
	if owned {
		defer dir.Close()
	}
	for _, i := range group {
		p := paths[i]
		base := path.Base(p)
		fi, err := dir.Lstat(base)
		switch {
		case err != nil:
			results[i] = h.failure(err)
		case fi.Mode().Type() == fs.ModeSymlink:
			// The link may lead anywhere in the project: resolve it from
			// the top root, which also refuses links that leave it.
			results[i] = h.viaRoot(p, buf)
		default:
			results[i] = h.file(dir, base, fi, p, buf)
		}
	}
}

// viaRoot checks p resolving every component from the project root.
func (h *hasher) viaRoot(p string, buf []byte) fileResult {
	fi, err := h.root.Stat(p)
	if err != nil {
		return h.failure(err)
	}
	return h.file(h.root, p, fi, p, buf)
}

// file checks the file name in dir, whose (followed) stat is fi; key is the
// cache key p.
func (h *hasher) file(dir *os.Root, name string, fi fs.FileInfo, p string, buf []byte) fileResult {
	if !fi.Mode().IsRegular() {
		return notRegular(fi)
	}
	k := keyOf(fi)
	if sum, ok := h.cache.lookup(p, k); ok {
		return fileResult{sum: sum, ok: true, cached: true, key: k, cacheable: true}
	}
	start := h.now()
	// O_NONBLOCK: should the file have become a FIFO since the stat, the
	// open must not hang waiting for a writer.
	f, err := dir.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return h.failure(err)
	}
	defer f.Close()
	before, err := f.Stat()
	if err != nil {
		return h.failure(err)
	}
	if !before.Mode().IsRegular() {
		return notRegular(before)
	}
	sha := sha256.New()
	n, err := io.CopyBuffer(sha, onlyReader{f}, buf)
	if err != nil {
		return fileResult{code: reason.StateInconsistency, msg: "cannot be read: " + errText(err)}
	}
	after, err := f.Stat()
	if err != nil {
		return h.failure(err)
	}
	r := fileResult{ok: true, read: n, key: keyOf(before)}
	sha.Sum(r.sum[:0])
	// Cache only what is stable: unchanged while we read it, and last
	// changed long enough ago that a later write cannot share its
	// timestamps.
	r.cacheable = keyOf(after) == r.key && (h.racy < 0 || r.key.newest() < start.Add(-h.racy).UnixNano())
	return r
}

// onlyReader hides *os.File's WriteTo so that CopyBuffer uses our buffer.
type onlyReader struct{ io.Reader }

func notRegular(fi fs.FileInfo) fileResult {
	what := "not a regular file"
	if fi.IsDir() {
		what = "a directory"
	}
	return fileResult{code: reason.StateInconsistency, msg: "is " + what + ", not a file"}
}

// failure classifies an error from stat or open.
func (h *hasher) failure(err error) fileResult {
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fileResult{code: reason.StateInconsistency, msg: "does not exist"}
	case h.escape != nil && errors.Is(err, h.escape):
		return fileResult{code: reason.InvalidInput, msg: "leads outside the project root (through a symlink)"}
	case errors.Is(err, syscall.ELOOP):
		return fileResult{code: reason.InvalidInput, msg: "is a symlink loop"}
	}
	return fileResult{code: reason.StateInconsistency, msg: "cannot be read: " + errText(err)}
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// escapeSentinel returns the error os.Root gives for a path that escapes it
// (it is not exported). Resolving ".." is refused lexically, before any
// system call.
func escapeSentinel(root *os.Root) error {
	_, err := root.Stat("..")
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return nil
}

// workers resolves Options.Workers.
func workers(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// parallel splits [0, n) into parts contiguous ranges and runs fn on each in
// its own goroutine.
func parallel(n, parts int, fn func(part, lo, hi int)) {
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := n*p/parts, n*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(p, lo, hi)
		}()
	}
	wg.Wait()
}
