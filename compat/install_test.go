package compat_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/custodian-dev/custodian/compat"
	"github.com/custodian-dev/custodian/reason"
)

// A backup record that names a path outside the plugin directory (by
// "..", an absolute path, a symlink leading out) or a mode beyond the
// permission bits is refused whole by uninstall: nothing is written
// anywhere, the plugin's files and the backup are left as they are.
func TestUninstallWritesOnlyInsideThePluginDirectory(t *testing.T) {
	evil := []byte("#!/bin/sh\necho pwned\n")
	h := sha256.Sum256(evil)
	for _, tc := range []struct {
		name string
		path string
		mode os.FileMode
		link bool // skills/out is a symlink to the victim directory
	}{
		{"dot-dot", "../../victim/evil.sh", 0o755, false},
		{"absolute", "VICTIM/evil.sh", 0o755, false},
		{"through a symlink", "skills/out/evil.sh", 0o755, true},
		{"setuid mode", "skills/spawn/evil.sh", 0o755 | os.ModeSetuid, false},
		{"into the backups", ".custodian-compat/principled/manifest.json", 0o644, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plugin := principledPlugin(t)
			victim := filepath.Join(filepath.Dir(filepath.Dir(plugin)), "victim")
			if err := os.MkdirAll(victim, 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := compat.Install(compat.Principled, plugin); err != nil {
				t.Fatal(err)
			}
			p := tc.path
			if p == "VICTIM/evil.sh" {
				p = filepath.ToSlash(filepath.Join(victim, "evil.sh"))
			}
			if tc.link {
				if err := os.Symlink(victim, filepath.Join(plugin, "skills", "out")); err != nil {
					t.Fatal(err)
				}
			}
			bdir := filepath.Join(plugin, compat.BackupDir("principled"))
			rec := filepath.Join(bdir, "manifest.json")
			var bk map[string]any
			raw, err := os.ReadFile(rec)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &bk); err != nil {
				t.Fatal(err)
			}
			bk["files"] = append(bk["files"].([]any), map[string]any{"path": p, "sha256": hex.EncodeToString(h[:]), "mode": uint32(tc.mode)})
			b, _ := json.Marshal(bk)
			write(t, rec, string(b), 0o644)
			// The "original" the record names, where uninstall looks for it.
			write(t, filepath.Join(bdir, "originals", filepath.FromSlash(p)), string(evil), 0o644)
			before := snapshotDir(t, filepath.Dir(plugin))

			_, err = compat.Uninstall(compat.Principled, plugin)
			if reason.CodeOf(err) != reason.InvalidInput {
				t.Errorf("uninstall with a record naming %q (mode %v): %v, want INVALID_INPUT", p, tc.mode, err)
			}
			if _, err := os.Stat(filepath.Join(victim, "evil.sh")); err == nil {
				t.Errorf("uninstall wrote %s outside the plugin directory", filepath.Join(victim, "evil.sh"))
			}
			if after := snapshotDir(t, filepath.Dir(plugin)); len(after) != len(before) {
				t.Errorf("uninstall changed files: %d before, %d after", len(before), len(after))
			}
		})
	}
}
