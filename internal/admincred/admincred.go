// Package admincred keeps the admin credential of a project: the token a
// human decision (approve, resolve, review, rollback, init, repair,
// rebuild, a forced unlock, correct-assumption) must carry on every door of
// the daemon, the unix socket included. It lives outside the project, in
// $XDG_CONFIG_HOME/custodian/<project-id>/admin-token (mode 0600, in
// directories of mode 0700), so that only the human's own processes read
// it: the agent's sandbox denies reading Dir (hook install --claude writes
// that rule), and an agent never finds it in the project's files.
//
// The human's first `custodian init` or `custodian serve` creates it; the
// CLI attaches it to its requests when it can read it, so a person at the
// terminal notices nothing, and a command that cannot read it (an agent in
// its sandbox) gets agent rights.
package admincred

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FileName is the credential's file name in the project's directory.
const FileName = "admin-token"

// Dir returns the directory holding every project's credential:
// $XDG_CONFIG_HOME/custodian (by default ~/.config/custodian).
func Dir() (string, error) {
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("admin credential: %w", err)
	}
	return filepath.Join(base, "custodian"), nil
}

// ProjectID names a project in Dir: the base name of its root and a hash
// of the root's real absolute path, so that two checkouts never share a
// credential and a moved project gets a new one.
func ProjectID(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	sum := sha256.Sum256([]byte(abs))
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, filepath.Base(abs))
	return strings.TrimLeft(name, ".") + "-" + hex.EncodeToString(sum[:8]), nil
}

// Path returns the credential file of the project at root.
func Path(root string) (string, error) {
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	id, err := ProjectID(root)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, id, FileName), nil
}

// Read returns the project's credential. The error wraps fs.ErrNotExist
// when there is none, fs.ErrPermission when it cannot be read.
func Read(root string) (string, error) {
	p, err := Path(root)
	if err != nil {
		return "", err
	}
	return readFile(p)
}

func readFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("%s is empty: remove it and run custodian serve or init to make a new one", p)
	}
	return t, nil
}

// Ensure returns the project's credential, creating it when there is none
// (created says so). Two processes that create it at once agree on one:
// the file is written aside and linked into place, and the loser reads the
// winner's.
func Ensure(root string) (token string, created bool, err error) {
	p, err := Path(root)
	if err != nil {
		return "", false, err
	}
	if t, err := readFile(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return t, false, err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", false, fmt.Errorf("admin credential: %w", err)
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", false, fmt.Errorf("admin credential: %w", err)
	}
	t := hex.EncodeToString(b)
	tmp, err := os.CreateTemp(filepath.Dir(p), ".admin-token-*")
	if err != nil {
		return "", false, fmt.Errorf("admin credential: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(t + "\n")
	if err := errors.Join(werr, tmp.Chmod(0o600), tmp.Sync(), tmp.Close()); err != nil {
		return "", false, fmt.Errorf("admin credential: %w", err)
	}
	if err := os.Link(tmp.Name(), p); errors.Is(err, fs.ErrExist) {
		t, err := readFile(p)
		return t, false, err
	} else if err != nil {
		return "", false, fmt.Errorf("admin credential: %w", err)
	}
	return t, true, nil
}
