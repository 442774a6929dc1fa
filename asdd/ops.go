package asdd

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/custodian-dev/custodian/managed"
	"github.com/custodian-dev/custodian/reason"
)

// Op is one operation on the manifest: a proposal, a lock, a resolution, a
// heartbeat… Apply runs it. Every door (CLI, daemon API, MCP, runner) asks
// the operation about itself through these methods instead of switching
// on its type: adding an operation is its type and apply in a file of its
// own, and its entry in opinfo.go (Ops and its methods there).
type Op interface {
	// OpName is the operation's name: the daemon API's route (POST
	// /v1/asdd/{name}) and the body's type there.
	OpName() string
	// Actor is who asks for the operation (an agent or a role).
	Actor() string
	// SliceID is the slice the operation is about and the doors show
	// once it committed, "" for none. A quick fix without an id has
	// none before Apply chooses it: Outcome.Slice says which.
	SliceID() string
	// HumanDecision names the human decision the operation is (an agent
	// may not make it: docs/security.md), "" for an agent's operation.
	HumanDecision() string
	apply(t *tx) error
}

// Event is a domain event produced by an operation; it is recorded in the
// store's journal with the commit.
type Event struct {
	Type  string         `json:"type"`
	Slice string         `json:"slice,omitempty"`
	Agent string         `json:"agent,omitempty"`
	Data  map[string]any `json:"data,omitempty"`
}

// Outcome is what Apply returns: the next manifest, the events, the side
// effects to apply to files once the commit succeeded, and — when the
// committed state is a halt — the verdict the proposer must hear.
type Outcome struct {
	Manifest *Manifest
	Events   []Event
	Effects  []Effect
	// Verdict is not nil when the operation committed a halt: the slice is
	// BLOCKED and the proposal was not accepted. Commit the manifest, then
	// report the verdict (its code gives the exit code).
	Verdict *reason.Error
	// Summary says in a sentence what happened, for the journal's reason.
	Summary string
	// Slice is the slice the operation was about (Op.SliceID, or the id
	// Apply chose for a quick fix), "" for none.
	Slice string
}

// What an operation did, as every door reports it ("outcome" in --json and
// the API, with "committed"): accepted and halted are committed; a
// rejection changes nothing.
const (
	ResultAccepted = "accepted"
	ResultHalted   = "halted"
	ResultRejected = "rejected"
)

// Result is ResultHalted for a committed halt, ResultAccepted for any other
// committed outcome. A rejection has no Outcome: its result is
// ResultRejected, and nothing was committed.
func (o *Outcome) Result() string {
	if o != nil && o.Verdict != nil {
		return ResultHalted
	}
	return ResultAccepted
}

func (t *tx) touch(s *Slice) { s.UpdatedAt = t.ts }

var (
	// Compiled on first use, not at package init: every custodian process
	// pays for package init (IDPattern's {0,127} alone was 3 % of the CPU
	// of custodian version). A task id has the form of a slice id.
	sliceIDRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(IDPattern) })
	artNameRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`) })
	hashRE     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) })
	taskIDRE   = sliceIDRE
	statusWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z_]{0,31}$`) })
)

// CleanRelPath checks that p is a project-relative path: not empty, not
// absolute, no "..", no backslashes, already clean. Symlink escapes are the
// I/O layer's to refuse (os.Root).
func CleanRelPath(p string) error {
	switch {
	case p == "":
		return reason.New(reason.InvalidInput, "empty artifact path")
	case strings.HasPrefix(p, "/") || (len(p) > 1 && p[1] == ':'):
		return reason.New(reason.InvalidInput, "artifact path %q is absolute; give it relative to the project root", p)
	case strings.Contains(p, "\\"):
		return reason.New(reason.InvalidInput, "artifact path %q contains a backslash", p)
	case strings.ContainsRune(p, 0):
		return reason.New(reason.InvalidInput, "artifact path contains a NUL byte")
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return reason.New(reason.InvalidInput, "artifact path %q leaves the project", p)
		}
		if part == "" || part == "." {
			return reason.New(reason.InvalidInput, "artifact path %q is not clean", p)
		}
	}
	return nil
}

// CleanPath checks that p is a project-relative artifact path (CleanRelPath)
// and not one of the custodian's own files (managed.Owned: journals,
// snapshots, locks, config, notices, the failure log, cycle and run
// files), where a halt would write its marker. Symlinks that lead to such
// a file are the I/O layer's to refuse (asdd/effects).
func CleanPath(p string) error {
	if err := CleanRelPath(p); err != nil {
		return err
	}
	if what, ok := managed.What(p); ok {
		return reason.New(reason.InvalidInput, "artifact path %q is one of the custodian's own files (%s); name an ordinary project file", p, what).With("path", p)
	}
	return nil
}

func (t *tx) needRole(role string) error {
	if role == "" {
		return reason.New(reason.InvalidInput, "a named role is required (one of %s)", strings.Join(t.cfg.Roles, ", "))
	}
	if !slices.Contains(t.cfg.Roles, role) {
		return reason.New(reason.InvalidInput, "unknown role %q (roles: %s)", role, strings.Join(t.cfg.Roles, ", "))
	}
	return nil
}

func (t *tx) agent(name string) (*Agent, error) {
	if name == "" {
		return nil, reason.New(reason.InvalidInput, "an agent name is required")
	}
	a, ok := t.cfg.Agent(name)
	if !ok {
		names := make([]string, len(t.cfg.Agents))
		for i := range t.cfg.Agents {
			names[i] = t.cfg.Agents[i].Name
		}
		return nil, reason.New(reason.InvalidInput, "unknown agent %q (agents: %s)", name, strings.Join(names, ", "))
	}
	return a, nil
}

// checkLock refuses a change to s by who while someone else holds its lease.
func (t *tx) checkLock(s *Slice, who string) error {
	if s.Lock == nil || lockExpired(s.Lock, t.now) {
		return nil
	}
	if s.Lock.Holder == who || HeartbeatKey(s.Lock.Holder) == HeartbeatKey(who) {
		return nil
	}
	return reason.New(reason.SliceLocked, "slice %s is locked by %s until %s", s.SliceID, s.Lock.Holder, s.Lock.Expires).
		With("holder", s.Lock.Holder).With("expires", s.Lock.Expires)
}
