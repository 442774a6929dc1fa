package claude

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/custodian-dev/custodian/managed"
)

// Kind is the custodian document family a managed path belongs to; it
// decides which door the hook names instead.
type Kind int

// The kinds of managed paths.
const (
	NotManaged Kind = iota
	ASDD            // .asdd/state/**, .asdd/escalations/**, docs/agent-failure-log.md
	Config          // .asdd/config.yaml
	Impl            // .impl/manifest.json and its journal, lock, temp files
	AgentState      // .agents/tmp/state.json and its journal, locks
	Cycle           // .workflow/.cycle/* (documents, journals, locks, .progress/)
	Settings        // .claude/settings.json, .claude/settings.local.json
)

// Classify says whether rel (a slash-separated path relative to the project
// root, cleaned, not leading outside it) is a file the custodian owns.
//
// The custodian's own files are package managed's list (the one the halt
// markers are kept off), less the two areas agents write themselves: the
// state-manager's phase outputs and the runner's run directory.
func Classify(rel string) Kind {
	rel = path.Clean(rel)
	if !managed.Owned(rel) || under(rel, managed.PhasesDir) || under(rel, managed.RunDir) {
		return NotManaged
	}
	switch {
	case rel == managed.ConfigPath:
		return Config
	case under(rel, ".impl"):
		return Impl
	case under(rel, ".agents/tmp"):
		return AgentState
	case under(rel, managed.CycleDir):
		return Cycle
	case rel == managed.ClaudeSettingsPath || rel == managed.ClaudeLocalSettingsPath:
		return Settings
	}
	return ASDD
}

func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// Contains reports whether removing or replacing the directory rel (relative
// to the root) would take managed files with it: rel is the root itself or
// an ancestor of a managed area.
func Contains(rel string) bool {
	rel = path.Clean(rel)
	if rel == "." {
		return true
	}
	for _, area := range []string{".asdd/state", ".asdd/escalations", ".asdd/config.yaml", ".impl/manifest.json", ".agents/tmp/state.json", ".workflow/.cycle", "docs/agent-failure-log.md",
		managed.ClaudeSettingsPath, managed.ClaudeLocalSettingsPath} {
		if under(area, rel) {
			return true
		}
	}
	return false
}

// managedTails are the last components of managed paths: a relative path
// whose directory is unknown (after `cd "$X"`) and that ends like one of
// them might be managed.
var managedTails = []string{"manifest.json", "state.json", "journal.ndjson", "config.yaml", "agent-failure-log.md"}

// MightBeManaged reports whether text seen only in part (a word with an
// unknown variable, a relative path from an unknown directory, inline code,
// input that does not parse) could name a managed file: it mentions a
// managed area, or one of its path-like tokens ends like a managed file.
func MightBeManaged(s string) bool {
	for _, frag := range []string{".asdd", ".impl/manifest", ".impl/.manifest", ".agents/tmp", ".workflow/.cycle", "agent-failure-log", ".claude/settings"} {
		if strings.Contains(s, frag) {
			return true
		}
	}
	if i := strings.Index(s, ".impl/"); i >= 0 && strings.ContainsAny(s[i:], "*?[") {
		return true // a pattern over .impl/
	}
	if !strings.Contains(s, "manifest") && !strings.Contains(s, "state") && !strings.Contains(s, "journal") && !strings.Contains(s, "config.yaml") {
		return false
	}
	tokens := strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '"' || r == '\'' || r == '=' || r == '(' || r == ')' || r == ',' || r == ';' || r == '<' || r == '>' || r == '|' || r == '&' || r == '`'
	})
	for _, tok := range tokens {
		base := path.Base(tok)
		for _, t := range managedTails {
			stem, ext := strings.TrimSuffix(t, path.Ext(t)), path.Ext(t)
			if strings.HasPrefix(base, stem) && strings.Contains(base[len(stem):], ext) {
				return true
			}
		}
		if strings.HasPrefix(base, "manifest.journal") || strings.HasPrefix(base, "state.journal") ||
			base == ".manifest.lock" || base == ".state.lock" {
			return true
		}
	}
	return false
}

// UserSettings reports whether the absolute path p is the user's Claude
// Code settings under home (where `hook install --scope user` puts the
// hook), or with dir a directory holding them (with root, home itself
// too); rel is p as ~/….
func UserSettings(home, p string, dir, root bool) (rel string, ok bool) {
	if home == "" {
		return "", false
	}
	r, err := filepath.Rel(home, p)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", false
	}
	r = filepath.ToSlash(r)
	for _, s := range []string{managed.ClaudeSettingsPath, managed.ClaudeLocalSettingsPath} {
		if r == s || (dir && under(s, r) && (root || r != ".")) {
			return "~/" + s, true
		}
	}
	return "", false
}
