package storeopen

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"log/slog"

	"go.yaml.in/yaml/v3"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/daemon"
	"github.com/custodian-dev/custodian/mirror"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
)

// The etcd backend is chosen by --store etcd://… ($CUSTODIAN_STORE) or by
// `store: etcd://…` in .asdd/config.yaml; the flag wins.
func OpenEtcdStore(app *cmdutil.App) (store.Store, bool, error) {
	u, err := ConfiguredStoreURL(app)
	if err != nil {
		return nil, false, err
	}
	if !IsEtcdURL(u) {
		if u == "" {
			// Nothing chosen: the file store, unless the files here
			// are mirrors of an etcd store (a machine of a fleet whose
			// --store was forgotten): committing to them would fork
			// the state.
			if err := RefuseMirrors(app); err != nil {
				return nil, false, err
			}
		}
		return nil, false, nil
	}
	s, err := OpenEtcd(u)
	if err != nil {
		return nil, false, err
	}
	// Without a daemon, the command refreshes the mirrors of the
	// documents it reads or commits.
	m, err := openMirror(app, s)
	if err != nil {
		s.Close()
		return nil, false, err
	}
	return mirror.Wrap(s, m), true, nil
}

// openMirror opens the mirrors of the project's documents, for an etcd
// store: written by this process, reported on its stderr.
func openMirror(app *cmdutil.App, s *etcd.Store) (*mirror.Mirror, error) {
	root, err := app.Root()
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(app.Err, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return mirror.Open(root, mirror.Options{Source: s.Source(), Logger: log, Now: app.Now})
}

// IsEtcdURL reports whether u names an etcd store (etcd://…).
func IsEtcdURL(u string) bool { return daemon.IsEtcdURL(u) }

// ConfiguredStoreURL returns the store URL this invocation names: --store
// (or $CUSTODIAN_STORE), else the store: key of the project's
// .asdd/config.yaml, else "" (the embedded file store).
func ConfiguredStoreURL(app *cmdutil.App) (string, error) {
	if app.StoreURL != "" {
		return app.StoreURL, nil
	}
	root, err := app.Root()
	if err != nil {
		return "", err
	}
	return storeFromConfig(filepath.Join(root, ".asdd", "config.yaml"))
}

// storeFromConfig reads the store: key of a project config. A missing file
// or key means the default; a file that is not YAML is left for the
// commands that read the whole config to report.
func storeFromConfig(path string) (string, error) {
	data, err := app.ReadProjectFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return storeKey(data), nil
}

// storeKey extracts the top-level store: string of a YAML document ("" when
// absent or not a string, or when the document does not parse).
func storeKey(data []byte) string {
	var c struct {
		Store any `yaml:"store"`
	}
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&c); err != nil {
		return ""
	}
	s, _ := c.Store.(string)
	return strings.TrimSpace(s)
}

// OpenEtcd opens the etcd store a URL names, with credentials the URL does
// not give taken from $CUSTODIAN_ETCD_USER and $CUSTODIAN_ETCD_PASSWORD.
func OpenEtcd(raw string) (*etcd.Store, error) { return openEtcdWith(raw, etcd.Options{}) }

// openEtcdWith is OpenEtcd with store options (the URL's prefix and request
// limit override opts').
func openEtcdWith(raw string, opts etcd.Options) (*etcd.Store, error) {
	return daemon.OpenEtcd(raw, opts)
}

// mirrorDirs are the directories of the documents' mirrors.
var mirrorDirs = []string{".asdd/state", ".impl", ".agents/tmp", ".workflow/.cycle"}

// RefuseMirrors fails when the project's documents are mirrors of an etcd
// store (a mirror state file names it), naming that store.
func RefuseMirrors(app *cmdutil.App) error {
	root, err := app.Root()
	if err != nil {
		return err
	}
	for _, d := range mirrorDirs {
		rel := d + "/.mirror"
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			continue
		}
		var st struct {
			Store string `json:"store"`
		}
		_ = json.Unmarshal(b, &st)
		from := cmp.Or(st.Store, "an etcd store")
		return reason.Usage("the documents here are read-only mirrors of %s (%s): run with --store %s, $CUSTODIAN_STORE or store: in .asdd/config.yaml; to move the project back to files, custodian migrate --to file --from %s",
			from, rel, cmp.Or(st.Store, "etcd://…"), cmp.Or(st.Store, "etcd://…"))
	}
	return nil
}
