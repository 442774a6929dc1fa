package compat

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/custodian-dev/custodian/internal/atomicfile"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// A Drop-in replaces files inside a plugin's directory with versions that
// call the custodian, keeping the originals to restore byte for byte.
type Dropin struct {
	Name string
	// Identify returns the plugin's files to replace (relative, slash
	// form), or an error saying why dir is not the plugin.
	Identify func(dir string) ([]string, error)
	// Replace returns the drop-in version of a file, given the original.
	Replace func(orig []byte) []byte
	// Installed reports whether content already is the drop-in version.
	Installed func(content []byte) bool
}

// Dropins are the known drop-ins, by name.
var Dropins = map[string]Dropin{"principled": Principled, "state-manager": StateManager}

// BackupDir is where a drop-in keeps the originals, inside the plugin dir.
func BackupDir(name string) string { return filepath.Join(".custodian-compat", name) }

// backup is the record of an installed drop-in (BackupDir/manifest.json).
type backup struct {
	Dropin string       `json:"dropin"`
	Files  []backupFile `json:"files"`
}

type backupFile struct {
	Path   string      `json:"path"`
	SHA256 string      `json:"sha256"`
	Mode   fs.FileMode `json:"mode"`
}

// Report says what install or uninstall did.
type Report struct {
	Dropin    string   `json:"dropin"`
	PluginDir string   `json:"plugin_dir"`
	Changed   []string `json:"changed"`
	Unchanged []string `json:"unchanged"`
	Skipped   []string `json:"skipped,omitempty"` // uninstall: changed since install, left as is
	Backup    string   `json:"backup"`
}

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// Install replaces the plugin's files in dir with the drop-in's versions,
// keeping each original under BackupDir first. Running it again changes
// nothing; a file the plugin changed since (an update) is backed up anew.
// A dir that is not the plugin is an INVALID_INPUT error and nothing is
// changed. Every file is read and written through dir as an os.Root: a
// path or symlink that leads outside it is refused.
func Install(d Dropin, dir string) (Report, error) {
	rep := Report{Dropin: d.Name, PluginDir: dir, Changed: []string{}, Unchanged: []string{}}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return rep, reason.New(reason.InvalidInput, "plugin directory %s: not a directory", dir)
	}
	files, err := d.Identify(dir)
	if err != nil {
		return rep, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return rep, fmt.Errorf("plugin directory %s: %w", dir, err)
	}
	defer root.Close()
	brel := filepath.ToSlash(BackupDir(d.Name))
	rep.Backup = filepath.Join(dir, BackupDir(d.Name))
	bk, err := readBackup(root, brel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return rep, err
	}
	bk.Dropin = d.Name
	type plan struct {
		rel  string
		orig []byte
		mode fs.FileMode
	}
	var todo []plan
	for _, rel := range files {
		if err := pluginPath(rel); err != nil {
			return rep, err
		}
		b, err := root.ReadFile(rel)
		if err != nil {
			return rep, fmt.Errorf("read %s: %w", filepath.Join(dir, filepath.FromSlash(rel)), err)
		}
		st, err := root.Stat(rel)
		if err != nil {
			return rep, err
		}
		if d.Installed(b) {
			rep.Unchanged = append(rep.Unchanged, rel)
			continue
		}
		todo = append(todo, plan{rel, b, st.Mode().Perm()})
	}
	if len(todo) == 0 {
		return rep, nil
	}
	// Originals first, durably, then the manifest naming them.
	for _, t := range todo {
		if err := atomicfile.Write(root, path.Join(brel, "originals", t.rel), t.orig, t.mode); err != nil {
			return rep, fmt.Errorf("back up %s: %w", t.rel, err)
		}
		bk.Files = slices.DeleteFunc(bk.Files, func(f backupFile) bool { return f.Path == t.rel })
		bk.Files = append(bk.Files, backupFile{Path: t.rel, SHA256: sum(t.orig), Mode: t.mode})
	}
	sort.Slice(bk.Files, func(i, j int) bool { return bk.Files[i].Path < bk.Files[j].Path })
	if err := writeBackup(root, brel, bk); err != nil {
		return rep, err
	}
	for i, t := range todo {
		if err := atomicfile.Write(root, t.rel, d.Replace(t.orig), t.mode); err != nil {
			// Put back what was replaced so far.
			for _, u := range todo[:i] {
				_ = atomicfile.Write(root, u.rel, u.orig, u.mode)
			}
			return rep, fmt.Errorf("replace %s: %w (the files replaced before were restored)", t.rel, err)
		}
		rep.Changed = append(rep.Changed, t.rel)
	}
	return rep, nil
}

// pluginPath refuses a path a backup record may not name: one that is not
// a clean relative path inside the plugin directory (absolute, "..", a
// backslash), or one inside the backups themselves.
func pluginPath(rel string) error {
	if rel == "" || strings.ContainsAny(rel, "\\\x00") || path.IsAbs(rel) || path.Clean(rel) != rel || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return reason.New(reason.InvalidInput, "%q is not a path inside the plugin directory: nothing restored", rel).With("path", rel)
	}
	if first, _, _ := strings.Cut(rel, "/"); first == ".custodian-compat" {
		return reason.New(reason.InvalidInput, "%q is inside the drop-in's backups, not a plugin file: nothing restored", rel).With("path", rel)
	}
	return nil
}

// Uninstall restores the originals byte for byte (and mode) and removes the
// backup. A file changed since the install (neither the drop-in nor its
// original) is left as it is and reported. A dir where the drop-in is not
// installed is an INVALID_INPUT error. The backup record is checked whole
// before anything is restored: every path it names must be a plugin file
// inside dir (written through dir as an os.Root, so no symlink leads out),
// and a mode is only permission bits.
func Uninstall(d Dropin, dir string) (Report, error) {
	rep := Report{Dropin: d.Name, PluginDir: dir, Changed: []string{}, Unchanged: []string{}}
	rep.Backup = filepath.Join(dir, BackupDir(d.Name))
	root, err := os.OpenRoot(dir)
	if err != nil {
		return rep, reason.New(reason.InvalidInput, "plugin directory %s: %v", dir, err)
	}
	defer root.Close()
	brel := filepath.ToSlash(BackupDir(d.Name))
	bk, err := readBackup(root, brel)
	if errors.Is(err, fs.ErrNotExist) {
		return rep, reason.New(reason.InvalidInput, "%s: the %s drop-in is not installed there (no %s)", dir, d.Name, BackupDir(d.Name))
	}
	if err != nil {
		return rep, err
	}
	// Check every path, original and current file before touching
	// anything.
	origs, curs, errs := map[string][]byte{}, map[string][]byte{}, map[string]error{}
	for _, f := range bk.Files {
		if err := pluginPath(f.Path); err != nil {
			return rep, fmt.Errorf("the backup record %s/manifest.json: %w", rep.Backup, err)
		}
		if f.Mode&^fs.ModePerm != 0 {
			return rep, reason.New(reason.InvalidInput, "the backup record %s/manifest.json gives %s the mode %v: only permission bits; nothing restored", rep.Backup, f.Path, f.Mode)
		}
		b, err := root.ReadFile(path.Join(brel, "originals", f.Path))
		if err != nil || sum(b) != f.SHA256 {
			return rep, reason.New(reason.CorruptState, "the backup of %s in %s is missing or damaged: nothing restored", f.Path, rep.Backup)
		}
		origs[f.Path] = b
		cur, err := root.ReadFile(f.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return rep, rootError(f.Path, err)
		}
		curs[f.Path], errs[f.Path] = cur, err
	}
	for _, f := range bk.Files {
		cur, err := curs[f.Path], errs[f.Path]
		switch {
		case err == nil && bytes.Equal(cur, origs[f.Path]):
			rep.Unchanged = append(rep.Unchanged, f.Path)
			continue
		case err == nil && !d.Installed(cur):
			rep.Skipped = append(rep.Skipped, f.Path)
			continue
		}
		if err := atomicfile.Write(root, f.Path, origs[f.Path], f.Mode); err != nil {
			return rep, fmt.Errorf("restore %s: %w", f.Path, rootError(f.Path, err))
		}
		if err := root.Chmod(f.Path, f.Mode); err != nil {
			return rep, err
		}
		rep.Changed = append(rep.Changed, f.Path)
	}
	if err := root.RemoveAll(brel); err != nil {
		return rep, err
	}
	_ = root.Remove(path.Dir(brel)) // .custodian-compat, when empty
	return rep, nil
}

// rootError names a path an os.Root refused because it leads outside the
// plugin directory (through a symlink) as INVALID_INPUT.
func rootError(rel string, err error) error {
	if strings.Contains(err.Error(), "path escapes") {
		return reason.New(reason.InvalidInput, "%s leads outside the plugin directory (through a symlink): nothing restored", rel).With("path", rel)
	}
	return err
}

func readBackup(root *os.Root, brel string) (backup, error) {
	b, err := root.ReadFile(path.Join(brel, "manifest.json"))
	if err != nil {
		return backup{}, err
	}
	var bk backup
	if err := json.Unmarshal(b, &bk); err != nil {
		return backup{}, reason.New(reason.CorruptState, "%s/manifest.json: %v", brel, err)
	}
	return bk, nil
}

func writeBackup(root *os.Root, brel string, bk backup) error {
	b, err := json.MarshalIndent(bk, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(root, path.Join(brel, "manifest.json"), append(b, '\n'), 0o644)
}

// PrincipledShim is the one script that replaces every copy of
// principled-implementation's task-manifest.sh: the copies stay
// byte-identical, so the plugin's own copy-drift check passes.
const PrincipledShim = `#!/usr/bin/env bash
# task-manifest.sh: served by Custodian (custodian compat install principled).
# .impl/manifest.json is kept by the custodian: every change is validated,
# journalled and written atomically; the arguments, output and exit codes are
# this script's. Restore the original: custodian compat uninstall principled
exec custodian impl "$@"
`

// Principled is the drop-in for alexnodeland/principled's
// principled-implementation plugin.
var Principled = Dropin{
	Name: "principled",
	Identify: func(dir string) ([]string, error) {
		if err := pluginNamed(dir, "principled-implementation"); err != nil {
			return nil, err
		}
		var files []string
		err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() && (e.Name() == ".custodian-compat" || e.Name() == ".git") {
				return filepath.SkipDir
			}
			if e.Type().IsRegular() && e.Name() == "task-manifest.sh" {
				rel, _ := filepath.Rel(dir, p)
				files = append(files, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, reason.New(reason.InvalidInput, "%s has no task-manifest.sh: not the principled-implementation plugin", dir)
		}
		sort.Strings(files)
		return files, nil
	},
	Replace:   func([]byte) []byte { return []byte(PrincipledShim) },
	Installed: func(b []byte) bool { return string(b) == PrincipledShim },
}

// pluginNamed checks dir/.claude-plugin/plugin.json names the plugin.
func pluginNamed(dir, name string) error {
	b, err := os.ReadFile(filepath.Join(dir, ".claude-plugin", "plugin.json"))
	if err != nil {
		return reason.New(reason.InvalidInput, "%s is not a Claude Code plugin (no .claude-plugin/plugin.json): give the %s plugin's directory", dir, name)
	}
	var m struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return reason.New(reason.InvalidInput, "%s/.claude-plugin/plugin.json: %v", dir, err)
	}
	if m.Name != name {
		return reason.New(reason.InvalidInput, "%s is the plugin %q, not %s: nothing changed", dir, m.Name, name)
	}
	return nil
}

// stateBlockStart and stateBlockEnd mark the drop-in's block in state.sh.
const (
	stateBlockStart = "# >>> custodian drop-in (custodian compat install state-manager) >>>"
	stateBlockEnd   = "# <<< custodian drop-in <<<"
)

// StateBlock is appended to a state-manager plugin's hooks/lib/state.sh: it
// redefines the functions that write .agents/tmp/state.json so that each
// runs as one custodian commit (bash uses the last definition). Readers
// and guards stay the plugin's own.
const StateBlock = stateBlockStart + `
# Writes of .agents/tmp/state.json go through the custodian: the jq program
# runs on the latest committed state inside a commit (no lost updates), the
# result must be a valid schema v2 state, and it is journalled and written
# atomically. Restore the original file: custodian compat uninstall state-manager
state_write() {
  local new_state="${1:?state_write requires a JSON string}"
  custodian apply -C "${CLAUDE_PROJECT_DIR:-.}" --quiet --key .agents/tmp/state.json \
    --jq '$new' --argjson new "$new_state"
}
state_update() {
  local expr="${1:?state_update requires a jq expression}"
  custodian apply -C "${CLAUDE_PROJECT_DIR:-.}" --quiet --key .agents/tmp/state.json \
    --jq "$expr" --arg ts "$(date -u +"%Y-%m-%dT%H:%M:%SZ")" --touch updatedAt
}
update_state() {
  local args=()
  while [[ $# -gt 1 ]]; do
    case "$1" in
      --arg|--argjson) args+=("$1" "$2" "$3"); shift 3 ;;
      *) echo "ERROR: update_state: jq option $1 is not supported by the custodian drop-in" >&2; return 1 ;;
    esac
  done
  custodian apply -C "${CLAUDE_PROJECT_DIR:-.}" --quiet --key .agents/tmp/state.json \
    --jq "${1:?update_state requires a jq filter}" --arg ts "$(date -Iseconds)" ${args[@]+"${args[@]}"}
}
` + stateBlockEnd + "\n"

// StateManager is the drop-in for the state-manager plugins of
// kenkenmain/ken-cc-plugins (subagents: state_update/state_write; minions:
// update_state) — their hooks/lib/state.sh.
var StateManager = Dropin{
	Name: "state-manager",
	Identify: func(dir string) ([]string, error) {
		const rel = "hooks/lib/state.sh"
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			return nil, reason.New(reason.InvalidInput, "%s has no %s: not a state-manager plugin (subagents, minions)", dir, rel)
		}
		s := string(b)
		if !strings.Contains(s, "state_update()") && !strings.Contains(s, "update_state()") {
			return nil, reason.New(reason.InvalidInput, "%s/%s defines neither state_update nor update_state: not a state-manager plugin", dir, rel)
		}
		return []string{rel}, nil
	},
	Replace: func(orig []byte) []byte {
		out := bytes.Clone(orig)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		return append(out, "\n"+StateBlock...)
	},
	Installed: func(b []byte) bool { return bytes.Contains(b, []byte(stateBlockStart)) },
}
