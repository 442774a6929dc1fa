// Package managed knows which files of a project belong to the custodian:
// its documents, their journals, segments, snapshots, locks and marks, its
// configuration, escalation notices, the agent failure log, cycle progress
// files, the runner's files and the Claude Code settings that install its
// hook. Nothing but the custodian may write them:
// an artifact that resolves to one is refused, and the Claude Code hook
// denies an agent's direct write of one.
//
// Paths are relative to the project root, slash-separated and clean (as
// reconcile.CleanPath leaves them). They are compared without regard to
// case, so that a differently cased name that reaches the same file on a
// case-insensitive file system (macOS, Windows) is owned too.
package managed

import (
	"path"
	"strings"
)

// The keys of the custodian's documents, the four kinds it serves.
const (
	// ASDDKey is the ASDD manifest (package asdd).
	ASDDKey = ".asdd/state/manifest.json"
	// ImplKey is the implementation task manifest (package impl).
	ImplKey = ".impl/manifest.json"
	// StateKey is the agent state document (package agentstate).
	StateKey = ".agents/tmp/state.json"
	// CycleDir holds one document per dev cycle, <id>.json, and its
	// progress files, <id>.progress/ (package cycle).
	CycleDir = ".workflow/.cycle"
)

// DocumentKeys are the document keys, the cycle documents as a pattern
// (path.Match syntax).
var DocumentKeys = []string{ASDDKey, ImplKey, StateKey, CycleDir + "/*.json"}

// Other files and directories the custodian writes.
const (
	// StateDir holds the ASDD manifest, its journal, segments, lock and
	// marks, the daemon's pid file and socket, and the stat cache.
	StateDir = ".asdd/state"
	// ConfigPath is the project's configuration.
	ConfigPath = ".asdd/config.yaml"
	// EscalationDir holds the escalation notices.
	EscalationDir = ".asdd/escalations"
	// SteeringProposalDir holds the steering-update proposals of
	// escalations, awaiting a human's approval.
	SteeringProposalDir = ".asdd/steering-proposals"
	// RunDir holds the runner's run file, lock, context packets and logs.
	RunDir = ".asdd/runs"
	// FailureLogPath is the agent failure log.
	FailureLogPath = "docs/agent-failure-log.md"
	// PhasesDir holds the phase outputs the agent state records.
	PhasesDir = ".agents/tmp/phases"
	// ClaudeSettingsPath and ClaudeLocalSettingsPath are the Claude Code
	// settings that hold the custodian's hook and sandbox: an agent that
	// rewrote them would switch its own protection off.
	ClaudeSettingsPath      = ".claude/settings.json"
	ClaudeLocalSettingsPath = ".claude/settings.local.json"
)

// owned lists what is owned, most specific first: a directory owns
// everything under it.
var owned = []struct {
	path string
	dir  bool
	what string
}{
	{StateDir, true, "the custodian's state directory (the ASDD manifest, its journal, segments, lock and marks, the daemon's pid file and socket)"},
	{ConfigPath, false, "the custodian's configuration"},
	{EscalationDir, true, "the escalation notices"},
	{SteeringProposalDir, true, "the steering-update proposals awaiting approval"},
	{RunDir, true, "the runner's run files and logs"},
	{FailureLogPath, false, "the agent failure log"},
	{PhasesDir, true, "the agent state's phase outputs"},
	{CycleDir, true, "the dev cycle documents and their progress files"},
	{ClaudeSettingsPath, false, "the Claude Code settings that hold the custodian's hook and sandbox"},
	{ClaudeLocalSettingsPath, false, "the Claude Code settings that hold the custodian's hook and sandbox"},
}

// IsDocument reports whether key names one of the custodian's documents.
func IsDocument(key string) bool {
	for _, k := range DocumentKeys {
		if ok, _ := path.Match(k, key); ok {
			return true
		}
	}
	return false
}

// Owned reports whether the file at rel (relative to the project root) is
// the custodian's own.
func Owned(rel string) bool {
	_, ok := What(rel)
	return ok
}

// What names what the custodian keeps at rel, for error messages; ok is
// false when rel is not the custodian's.
func What(rel string) (what string, ok bool) {
	p := strings.ToLower(path.Clean(strings.TrimPrefix(rel, "./")))
	for _, o := range owned {
		if p == o.path || (o.dir && strings.HasPrefix(p, o.path+"/")) {
			return o.what, true
		}
	}
	// The files of a document kept outside those directories: the
	// snapshot, its temporary and set-aside copies, the journal and its
	// segments and broken copies, the lock, the marks and the chain's
	// anchor (store/file).
	for _, key := range []string{ImplKey, StateKey} {
		dir, base := path.Split(key)
		stem := strings.TrimSuffix(base, ".json")
		journal, hidden := stem+".journal.", "."+stem+"."
		if base == "manifest.json" { // store/file's names beside a manifest.json
			journal, hidden = "journal.", "."
		}
		fdir, fbase := path.Split(p)
		if fdir != dir {
			continue
		}
		switch {
		case fbase == base, strings.HasPrefix(fbase, base+"."),
			strings.HasPrefix(fbase, journal), ownHidden(fbase, hidden):
			return "the document " + key + " and its journal, lock and marks", true
		}
	}
	return "", false
}

// ownHidden reports the store's hidden files of a document, given their
// prefix ("." beside a manifest.json, ".<stem>." otherwise): the lock, the
// marks, the chain's anchor and the open's checkpoint (and their set-aside
// copies).
func ownHidden(base, prefix string) bool {
	rest, ok := strings.CutPrefix(base, prefix)
	if !ok {
		return false
	}
	for _, f := range []string{"lock", "marks", "head", "checkpoint"} {
		if rest == f || strings.HasPrefix(rest, f+".") {
			return true
		}
	}
	return false
}

// SandboxPaths are the paths, relative to the project root, that an
// agent's OS sandbox must keep read-only (hook install --claude writes them
// into Claude Code's sandbox block): every owned directory and file, and
// whole the directories of the two documents kept outside them (.impl,
// .agents/tmp), since a sandbox takes literal paths only (bubblewrap has
// no patterns) while the store makes its journal, lock and temporary files
// there on the fly. Those two directories hold nothing but the documents'
// files and the phase outputs.
func SandboxPaths() []string {
	out := make([]string, 0, len(owned)+2)
	for _, o := range owned {
		if o.path != PhasesDir { // under .agents/tmp, below
			out = append(out, o.path)
		}
	}
	for _, key := range []string{ImplKey, StateKey} {
		out = append(out, path.Dir(key))
	}
	return out
}
