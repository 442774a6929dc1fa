package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
)

// The etcd backend is chosen by --store etcd://… ($CUSTODIAN_STORE) or by
// `store: etcd://…` in .asdd/config.yaml; the flag wins.
func init() { RegisterStoreOpener("etcd", 20, openEtcdStore) }

func openEtcdStore(app *App) (store.Store, bool, error) {
	u, err := ConfiguredStoreURL(app)
	if err != nil {
		return nil, false, err
	}
	if !isEtcdURL(u) {
		return nil, false, nil
	}
	s, err := OpenEtcd(u)
	if err != nil {
		return nil, false, err
	}
	return s, true, nil
}

func isEtcdURL(u string) bool {
	return strings.HasPrefix(u, "etcd://") || strings.HasPrefix(u, "etcds://")
}

// ConfiguredStoreURL returns the store URL this invocation names: --store
// (or $CUSTODIAN_STORE), else the store: key of the project's
// .asdd/config.yaml, else "" (the embedded file store).
func ConfiguredStoreURL(app *App) (string, error) {
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
	data, err := readProjectFile(path)
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
	cfg, err := etcd.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	cfg.FromEnv(os.Getenv)
	s, err := etcd.Open(cfg, opts)
	if err != nil {
		if reason.CodeOf(err) != "" {
			return nil, err
		}
		return nil, fmt.Errorf("%w (is etcd running at %s?)", err, strings.Join(cfg.Endpoints, ", "))
	}
	return s, nil
}
