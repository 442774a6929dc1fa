package reconcile

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Where Scan looks, relative to the project root.
const (
	SpecsDir  = ".asdd/specs"
	TracesDir = ".asdd/traces"
)

// Stage says what the presence of an agent's work tells about a slice: the
// agent works in Phase; once its artifact (or its reasoning trace) exists,
// the slice has reached status Reached.
type Stage struct {
	Agent    string // e.g. "design"; trace files are named <slice>-<agent>.md
	Artifact string // phase_data name it produces, e.g. "design"; "" for none
	Phase    string // the lifecycle phase it works in
	Reached  string // the status a slice is in once this stage's work exists
}

// Lifecycle is the phase order of seed 000.
var Lifecycle = []string{"DISCOVERY", "SPEC", "VALIDATION", "DESIGN", "IMPLEMENTATION", "CI_CD", "OBSERVABILITY", "DONE"}

// DefaultStages mirror the default ASDD configuration: the discovery agent
// completes DISCOVERY with intent, spec completes SPEC with requirements,
// validation completes VALIDATION, domain provides the domain model within
// DESIGN, design completes DESIGN, task planning provides tasks within
// IMPLEMENTATION, and so on to observability, which completes the slice.
var DefaultStages = []Stage{
	{Agent: "discovery", Artifact: "intent", Phase: "DISCOVERY", Reached: "SPEC"},
	{Agent: "spec", Artifact: "requirements", Phase: "SPEC", Reached: "VALIDATION"},
	{Agent: "validation", Phase: "VALIDATION", Reached: "DESIGN"},
	{Agent: "domain", Artifact: "domain_model", Phase: "DESIGN", Reached: "DESIGN"},
	{Agent: "design", Artifact: "design", Phase: "DESIGN", Reached: "IMPLEMENTATION"},
	{Agent: "task_planning", Artifact: "tasks", Phase: "IMPLEMENTATION", Reached: "IMPLEMENTATION"},
	{Agent: "implementation", Phase: "IMPLEMENTATION", Reached: "CI_CD"},
	{Agent: "qa", Phase: "IMPLEMENTATION", Reached: "IMPLEMENTATION"},
	{Agent: "refactor", Phase: "IMPLEMENTATION", Reached: "IMPLEMENTATION"},
	{Agent: "security", Phase: "CI_CD", Reached: "CI_CD"},
	{Agent: "devops", Phase: "CI_CD", Reached: "OBSERVABILITY"},
	{Agent: "observability", Phase: "OBSERVABILITY", Reached: "DONE"},
}

// DefaultMarkers are the first lines a halted phase artifact carries (seed
// 004's rollback procedure and the discovery agent's action).
var DefaultMarkers = []string{"DRAFT — AGENT HALTED", "DRAFT — AWAITING CLARIFICATION"}

// ScanOptions adjusts a Scan.
type ScanOptions struct {
	Stages    []Stage  // nil: DefaultStages
	Lifecycle []string // nil: Lifecycle
	Markers   []string // nil: DefaultMarkers
	Workers   int      // 0: GOMAXPROCS
	// Progress, when set, is called after each file is read, with the
	// number done and the total; calls are serialised.
	Progress func(done, total int)
}

// ScannedSlice is a slice reconstructed from the files.
type ScannedSlice struct {
	ID        string            `json:"slice_id"`
	Dir       string            `json:"dir"` // .asdd/specs/<dir>
	Name      string            `json:"name"`
	Type      string            `json:"type"`
	Status    string            `json:"status"`
	PhaseData map[string]string `json:"phase_data"` // artifact name -> path
	Traces    []string          `json:"reasoning_traces"`
	// Hashes maps every phase artifact and trace path to its hash.
	Hashes map[string]string `json:"artifact_hashes"`
	// Set when an artifact carries a halt marker.
	BlockedAtPhase string `json:"blocked_at_phase,omitempty"`
	LKGPhase       string `json:"lkg_phase,omitempty"`
	BlockReason    string `json:"block_reason,omitempty"`
	// Others are files of the slice directory that are no phase artifact.
	Others  []string  `json:"others,omitempty"`
	Created time.Time `json:"created"` // oldest mtime among its files
	Updated time.Time `json:"updated"` // newest mtime among its files
	// Guessed lists the manifest fields that are guesses and need a
	// human's review (NEEDS_HUMAN_REVIEW).
	Guessed []string `json:"guessed"`
	// Evidence says, in sentences, what the guesses rest on.
	Evidence []string `json:"evidence"`
}

// ScanResult is what Scan found.
type ScanResult struct {
	Slices   []ScannedSlice `json:"slices"`
	Files    int            `json:"files"`    // files read and hashed
	Warnings []string       `json:"warnings"` // entries skipped and why
}

// scanFile is one file to read.
type scanFile struct {
	path  string
	hash  string
	mtime time.Time
	head  headInfo
	err   error
}

// Scan reconstructs slices from the project's files (seed 000, manifest
// recovery): one slice per directory under .asdd/specs, its phase artifacts
// named by their file stem (intent.md, requirements.md, domain-model.md,
// design.md, tasks.md), its traces from .asdd/traces/<slice>-<agent>.md,
// its status from the furthest stage whose work exists, its times from the
// files; an open escalation notice under .asdd/escalations marks it halted. Every file is read through root; entries that lead outside it are
// skipped with a warning.
func Scan(ctx context.Context, root *os.Root, opt ScanOptions) (*ScanResult, error) {
	stages := orDefault(opt.Stages, DefaultStages)
	life := orDefault(opt.Lifecycle, Lifecycle)
	markers := orDefault(opt.Markers, DefaultMarkers)
	res := &ScanResult{Slices: []ScannedSlice{}, Warnings: []string{}}

	dirs, err := listDir(root, SpecsDir, true, res)
	if err != nil {
		return nil, err
	}
	traceNames, err := listDir(root, TracesDir, false, res)
	if err != nil {
		return nil, err
	}

	// Everything to read, in one list.
	var files []*scanFile
	type sliceFiles struct {
		dir   string
		files []*scanFile
	}
	var sfs []sliceFiles
	for _, d := range dirs {
		names, err := listDir(root, path.Join(SpecsDir, d), false, res)
		if err != nil {
			return nil, err
		}
		sf := sliceFiles{dir: d}
		for _, n := range names {
			f := &scanFile{path: path.Join(SpecsDir, d, n)}
			sf.files = append(sf.files, f)
			files = append(files, f)
		}
		sfs = append(sfs, sf)
	}
	traces := make([]*scanFile, len(traceNames))
	for i, n := range traceNames {
		traces[i] = &scanFile{path: path.Join(TracesDir, n)}
		files = append(files, traces[i])
	}
	if err := readAll(ctx, root, files, markers, opt); err != nil {
		return nil, err
	}
	for _, f := range files {
		if f.err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s skipped: %v", f.path, f.err))
		} else {
			res.Files++
		}
	}

	ids := map[string]string{} // slice id -> its directory
	for _, sf := range sfs {
		s := buildSlice(sf.dir, sf.files, stages, life)
		if other, dup := ids[s.ID]; dup {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s and %s both claim slice id %s: the second keeps its directory name", other, s.Dir, s.ID))
			s.ID = sf.dir
			if !slices.Contains(s.Guessed, "slice_id") {
				s.Guessed = append([]string{"slice_id"}, s.Guessed...)
			}
		}
		ids[s.ID] = s.Dir
		res.Slices = append(res.Slices, s)
	}
	slices.SortStableFunc(res.Slices, func(a, b ScannedSlice) int { return cmp.Compare(a.ID, b.ID) })
	attachTraces(res, traces, stages, life)
	notices, err := readNotices(root, res)
	if err != nil {
		return nil, err
	}
	applyNotices(res, notices, life)
	return res, nil
}

// listDir lists the names of directories (dirs) or regular files (!dirs)
// in dir, following symlinks only within root. A missing dir is empty.
func listDir(root *os.Root, dir string, dirs bool, res *ScanResult) ([]string, error) {
	f, err := root.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s skipped: %v", dir, errText(err)))
		return nil, nil
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		typ := e.Type()
		if typ&fs.ModeSymlink != 0 {
			fi, err := root.Stat(path.Join(dir, name))
			if err != nil {
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s skipped: %s", path.Join(dir, name), symlinkProblem(err)))
				continue
			}
			typ = fi.Mode().Type()
		}
		if (dirs && typ == fs.ModeDir) || (!dirs && typ.IsRegular()) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

func symlinkProblem(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "dangling symlink"
	}
	return "symlink leads outside the project root or cannot be followed: " + errText(err)
}

// headSize is how much of each file Scan reads for its marker, id and title.
const headSize = 4 << 10

// readAll hashes every file and reads its head, in parallel.
func readAll(ctx context.Context, root *os.Root, files []*scanFile, markers []string, opt ScanOptions) error {
	var done atomic.Int64
	var mu sync.Mutex
	n := workers(opt.Workers)
	parallel(len(files), min(n, max(len(files), 1)), func(_, lo, hi int) {
		buf := make([]byte, 64<<10)
		for _, f := range files[lo:hi] {
			if ctx.Err() != nil {
				return
			}
			f.hash, f.mtime, f.head, f.err = readOne(root, f.path, markers, buf)
			d := done.Add(1)
			if opt.Progress != nil {
				mu.Lock()
				opt.Progress(int(d), len(files))
				mu.Unlock()
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	return nil
}

func readOne(root *os.Root, p string, markers []string, buf []byte) (string, time.Time, headInfo, error) {
	f, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0) // a FIFO must not hang the scan
	if err != nil {
		return "", time.Time{}, headInfo{}, errors.New(errText(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", time.Time{}, headInfo{}, err
	}
	if !fi.Mode().IsRegular() {
		return "", time.Time{}, headInfo{}, errors.New("not a regular file")
	}
	sha := sha256.New()
	head := make([]byte, 0, headSize)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			sha.Write(buf[:n])
			if room := headSize - len(head); room > 0 {
				head = append(head, buf[:min(n, room)]...)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", time.Time{}, headInfo{}, errors.New(errText(err))
		}
	}
	var sum [32]byte
	sha.Sum(sum[:0])
	return FormatHash(sum), fi.ModTime(), parseHead(head, markers), nil
}

// stem is a file name without its extension, lower case, '-' and ' ' as '_'.
func stem(name string) string {
	s := strings.TrimSuffix(name, path.Ext(name))
	return strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(s))
}

// strongID matches ids like SLICE-001 or RETRO-AUTH-001: a directory so
// named is taken as the slice id without review.
var strongID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9]*(?:[-_][A-Z0-9]+)*-[0-9]+$`) })

func buildSlice(dir string, files []*scanFile, stages []Stage, life []string) ScannedSlice {
	s := ScannedSlice{
		Dir: path.Join(SpecsDir, dir), PhaseData: map[string]string{}, Hashes: map[string]string{},
		Traces: []string{}, Guessed: []string{}, Evidence: []string{},
	}
	byArtifact := map[string]Stage{}
	for _, st := range stages {
		if st.Artifact != "" {
			if _, dup := byArtifact[st.Artifact]; !dup {
				byArtifact[st.Artifact] = st
			}
		}
	}
	var idFrom, title string
	reached := 0 // index in life
	var halted *scanFile
	var haltedStage Stage
	// Phase artifacts first in stage order, so that id and title come from
	// the earliest artifact.
	slices.SortStableFunc(files, func(a, b *scanFile) int {
		return cmp.Compare(stageIndex(stages, stem(path.Base(a.path))), stageIndex(stages, stem(path.Base(b.path))))
	})
	for _, f := range files {
		if f.err != nil {
			continue
		}
		s.touch(f.mtime)
		st, ok := byArtifact[stem(path.Base(f.path))]
		if !ok || s.PhaseData[st.Artifact] != "" {
			s.Others = append(s.Others, f.path)
			continue
		}
		s.PhaseData[st.Artifact] = f.path
		s.Hashes[f.path] = f.hash
		if f.head.id != "" && s.ID == "" {
			s.ID, idFrom = f.head.id, f.path
		}
		if f.head.title != "" && title == "" {
			title = trimArtifactSuffix(f.head.title, st.Artifact)
		}
		if f.head.marker != "" {
			if halted == nil {
				halted, haltedStage = f, st
			}
			continue // a halted draft was not accepted: it proves no progress
		}
		if i := slices.Index(life, st.Reached); i > reached {
			reached = i
			s.Evidence = append(s.Evidence, fmt.Sprintf("%s exists: %s reached", f.path, st.Reached))
		}
	}
	slices.Sort(s.Others)

	switch {
	case s.ID != "":
		s.Evidence = append(s.Evidence, fmt.Sprintf("slice id %s read from %s", s.ID, idFrom))
	case strongID().MatchString(dir):
		s.ID = dir
	case strongID().MatchString(strings.ToUpper(dir)):
		s.ID = strings.ToUpper(dir)
		s.Guessed = append(s.Guessed, "slice_id")
		s.Evidence = append(s.Evidence, fmt.Sprintf("slice id %s from the directory name %q", s.ID, dir))
	default:
		s.ID = dir
		s.Guessed = append(s.Guessed, "slice_id")
		s.Evidence = append(s.Evidence, fmt.Sprintf("no slice id found in the artifacts: the directory name %q stands in", dir))
	}
	s.Name = cmp.Or(title, dir)
	s.Type = "FEATURE"
	if strings.HasPrefix(strings.ToUpper(s.ID), "RETRO") {
		s.Type = "RETRO_SPEC"
	}
	s.Status = life[reached]
	if halted != nil {
		s.BlockedAtPhase = haltedStage.Phase
		s.LKGPhase = previous(life, haltedStage.Phase)
		s.Status = "BLOCKED"
		s.BlockReason = fmt.Sprintf("rebuilt from the filesystem: %s is marked %q", halted.path, halted.head.marker)
		s.Evidence = append(s.Evidence, s.BlockReason)
	}
	s.Guessed = append(s.Guessed, "name", "type", "status", "governance_mode", "confidence_chain", "created_at")
	if halted != nil {
		s.Guessed = append(s.Guessed, "blocked_at_phase", "lkg_phase")
	}
	if s.PhaseData["tasks"] != "" {
		s.Guessed = append(s.Guessed, "tasks")
	}
	return s
}

func stageIndex(stages []Stage, artifact string) int {
	for i, st := range stages {
		if st.Artifact != "" && st.Artifact == artifact {
			return i
		}
	}
	return len(stages)
}

func previous(life []string, phase string) string {
	i := slices.Index(life, phase)
	if i <= 0 {
		return life[0]
	}
	return life[i-1]
}

func (s *ScannedSlice) touch(t time.Time) {
	if t.IsZero() {
		return
	}
	if s.Created.IsZero() || t.Before(s.Created) {
		s.Created = t
	}
	if t.After(s.Updated) {
		s.Updated = t
	}
}

// attachTraces gives each trace to the slice whose id prefixes its name
// (the longest such id), and lets the trace's agent advance the status.
func attachTraces(res *ScanResult, traces []*scanFile, stages []Stage, life []string) {
	for _, f := range traces {
		if f.err != nil {
			continue
		}
		base := strings.TrimSuffix(path.Base(f.path), path.Ext(f.path))
		var owner *ScannedSlice
		for i := range res.Slices {
			s := &res.Slices[i]
			if strings.HasPrefix(base, s.ID+"-") && (owner == nil || len(s.ID) > len(owner.ID)) {
				owner = s
			}
		}
		if owner == nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s belongs to no slice directory under %s", f.path, SpecsDir))
			continue
		}
		owner.Traces = append(owner.Traces, f.path)
		owner.Hashes[f.path] = f.hash
		owner.touch(f.mtime)
		agent := stem(strings.TrimPrefix(base, owner.ID+"-"))
		st, ok := traceStage(stages, agent)
		if !ok || owner.Status == "BLOCKED" {
			continue
		}
		if i, cur := slices.Index(life, st.Reached), slices.Index(life, owner.Status); i > cur {
			owner.Status = st.Reached
			owner.Evidence = append(owner.Evidence, fmt.Sprintf("%s exists: the %s agent ran, %s reached", f.path, st.Agent, st.Reached))
		}
	}
}

// traceStage finds the stage of the agent a trace name starts with
// ("design", "design-2", "task_planning"): the longest agent name that is
// the whole name or followed by "_".
func traceStage(stages []Stage, name string) (Stage, bool) {
	var best Stage
	found := false
	for _, st := range stages {
		a := stem(st.Agent)
		if (name == a || strings.HasPrefix(name, a+"_")) && len(a) > len(best.Agent) {
			best, found = st, true
		}
	}
	return best, found
}

// headInfo is what the head of an artifact says about its slice.
type headInfo struct {
	marker string // the halt marker on its first line, if any
	id     string // slice id from a "slice_id:" line
	title  string // title from front matter or the first "# " heading
}

var (
	idLine = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^\s*[-*]?\s*\**\s*(?:slice_id|slice|slice id)\s*\**\s*:\s*\**\s*([^\s*]+)`)
	})
	titleLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^(?:title|name)\s*:\s*(.+)$`) })
	validID   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`) })
)

// parseHead reads the marker, slice id and title from the first bytes of an
// artifact. It never fails: what it cannot read it leaves empty.
func parseHead(b []byte, markers []string) headInfo {
	var h headInfo
	text := strings.ToValidUTF8(string(b), "\uFFFD")
	lines := strings.Split(text, "\n")
	if len(lines) > 0 {
		first := strings.TrimSpace(strings.TrimPrefix(lines[0], "\uFEFF"))
		for _, m := range markers {
			if m != "" && first == m {
				h.marker = m
			}
		}
	}
	inFront := false
	for i, raw := range lines {
		line := strings.TrimRight(raw, "\r")
		trimmed := strings.TrimSpace(line)
		if trimmed == "---" && (i == 0 || (i <= 2 && h.marker != "") || inFront) {
			inFront = !inFront
			continue
		}
		if h.id == "" {
			if m := idLine().FindStringSubmatch(line); m != nil {
				id := strings.Trim(m[1], "\"'`")
				if validID().MatchString(id) {
					h.id = id
				}
			}
		}
		if h.title == "" {
			if inFront {
				if m := titleLine().FindStringSubmatch(trimmed); m != nil {
					h.title = cleanTitle(m[1])
				}
			} else if t, ok := strings.CutPrefix(trimmed, "# "); ok {
				h.title = cleanTitle(t)
			}
		}
	}
	return h
}

func cleanTitle(s string) string {
	s = strings.Trim(strings.TrimSpace(s), "\"'")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "")
	}
	return s
}

func orDefault[T any](v, d []T) []T {
	if len(v) == 0 {
		return d
	}
	return v
}

// trimArtifactSuffix drops a trailing " — intent" (or " - intent", ": intent")
// naming the artifact from a title: "Audit Trail — intent" names the slice
// "Audit Trail".
func trimArtifactSuffix(title, artifact string) string {
	words := strings.ReplaceAll(artifact, "_", " ")
	for _, sep := range []string{" — ", " – ", " - ", ": "} {
		if head, tail, ok := strings.Cut(title, sep); ok && head != "" && (strings.EqualFold(tail, artifact) || strings.EqualFold(tail, words)) {
			return head
		}
	}
	return title
}
