package projectroot

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// WitnessEnv names the environment variable that overrides WitnessDir: a
// directory (outside the project) to keep the witnesses in, or "off".
const WitnessEnv = "CUSTODIAN_WITNESS_DIR"

// WitnessDir returns the directory where the store of the project rooted
// at root keeps its witnesses (store/file's witness.go: a copy of each
// document's anchor where git and backups of the work tree do not reach): $CUSTODIAN_WITNESS_DIR when set ("" for
// "off"); in a git repository <git common dir>/custodian; else
// $XDG_STATE_HOME/custodian/projects/<hash of root> (~/.local/state when
// XDG_STATE_HOME is unset). "" with a nil error means no witness.
func WitnessDir(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	if v, ok := os.LookupEnv(WitnessEnv); ok {
		if v == "off" || v == "" {
			return "", nil
		}
		w, err := filepath.Abs(v)
		if err != nil {
			return "", reason.New(reason.InvalidInput, "$%s=%q: %v", WitnessEnv, v, err)
		}
		if inside(abs, w) {
			return "", reason.New(reason.InvalidInput, "$%s=%q is inside the project: a witness beside the state is rewound with it", WitnessEnv, v)
		}
		return w, nil
	}
	if common := CommonDir(abs); common != "" {
		return filepath.Join(common, "custodian"), nil
	}
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			return "", nil // nowhere outside the project to keep it
		}
		base = filepath.Join(home, ".local", "state")
	}
	if inside(abs, base) {
		return "", nil
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(base, "custodian", "projects", hex.EncodeToString(sum[:8])), nil
}

// inside reports whether path is root or below it.
func inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
