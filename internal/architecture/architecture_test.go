package architecture_test

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/custodian-dev/custodian/"

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// list runs go list -json on patterns and returns the packages by their
// path inside the module.
func list(t *testing.T, deps bool, patterns ...string) map[string]pkg {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal("go is needed to read the import graph")
	}
	args := append([]string{"list", "-json"}, patterns...)
	if deps {
		args = append([]string{"list", "-json", "-deps"}, patterns...)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module)] = p
	}
	return pkgs
}

// under reports whether path is one of roots or below one.
func under(path string, roots ...string) bool {
	for _, r := range roots {
		if path == r || strings.HasPrefix(path, r+"/") {
			return true
		}
	}
	return false
}

var (
	domains  = []string{"asdd", "impl", "agentstate", "cycle", "reconcile", "monitor"}
	stores   = []string{"store"}
	backends = []string{"store/file", "store/etcd"}
	doors    = []string{"cmd/custodian/internal/cli", "server", "mcp", "hook", "runner", "board", "daemon", "cmd"}
	// The composition roots open the store backends; migrate's job is
	// copying between them.
	compositionRoots = []string{"daemon", "cmd", "cmd/custodian/internal/cli/cmdutil", "cmd/custodian/internal/cli/storeopen", "cmd/custodian/internal/cli/migrate"}
	// debt: doors that still reach a backend; each is to move behind app.
	debt = map[string]string{}
	// Doors read through app.Service (its Reader for documents as
	// stored): these doors import the store contract for its value types
	// and pure helpers only, never to open or read a store; every other
	// door imports no store package at all.
	storeTypes = map[string]string{
		"server":                           "the document API's bodies are store.Document, store.Record, store.Commit; store.Depth",
		"mcp":                              "the history tool's store.Record",
		"cmd/custodian/internal/cli/doc":   "store.Indent, store.Diff, store.Record; debug write commits to the store on purpose",
		"cmd/custodian/internal/cli/state": "store.Indent",
		"cmd/custodian/internal/cli/apply": "store.CheckKey",
	}
)

// TestLayering checks docs/architecture.md's "Never" list: domains import
// neither app, a store nor a door; the store imports no domain; app imports
// no door and no backend; doors reach a backend only through a
// composition root.
func TestLayering(t *testing.T) {
	pkgs := list(t, false, "./...")
	for path, p := range pkgs {
		for _, imp := range p.Imports {
			dep, ours := strings.CutPrefix(imp, module)
			if !ours {
				continue
			}
			var broken string
			switch {
			case under(path, domains...) && (under(dep, "app", "wire", "client") || under(dep, stores...) || under(dep, doors...)):
				broken = "a domain imports neither app, a store, wire, client nor a door"
			case under(path, stores...) && (under(dep, domains...) || under(dep, "app", "wire", "client") || under(dep, doors...)):
				broken = "the store imports no domain, app, wire or door"
			case under(path, "app") && (under(dep, doors...) || under(dep, backends...)):
				broken = "app imports no door and no store backend"
			case under(path, doors...) && !under(path, compositionRoots...) && under(dep, backends...):
				if _, known := debt[path]; known {
					continue
				}
				broken = "a door reaches a store backend only through a composition root"
			case under(path, doors...) && !under(path, compositionRoots...) && dep == "store":
				if _, known := storeTypes[path]; known {
					continue
				}
				broken = "a door reads through app.Service, not a store (the store's value types: list the package in storeTypes)"
			}
			if broken != "" {
				t.Errorf("%s imports %s: %s (docs/architecture.md)", path, dep, broken)
			}
		}
	}
	for path, why := range debt {
		p, ok := pkgs[path]
		if !ok {
			t.Errorf("debt %s: no such package any more: remove it from the list", path)
			continue
		}
		still := false
		for _, imp := range p.Imports {
			if under(strings.TrimPrefix(imp, module), backends...) {
				still = true
			}
		}
		if !still {
			t.Errorf("%s no longer imports a backend (%s was paid): remove it from the debt list", path, why)
		}
	}
	for path := range storeTypes {
		if p, ok := pkgs[path]; !ok || !slices.Contains(p.Imports, module+"store") {
			t.Errorf("storeTypes %s: it no longer imports the store: remove it from the list", path)
		}
	}
}

// TestBinaryLinksNoTestCode: the default binary carries none of the test
// harnesses (an embedded etcd server, the conformance suite, a browser
// driver).
func TestBinaryLinksNoTestCode(t *testing.T) {
	for path := range list(t, true, "./cmd/custodian") {
		for _, banned := range []string{"store/etcd/etcdtest", "store/storetest", "github.com/chromedp/", "go.etcd.io/etcd/server/", "internal/testbin", "mcp/mcptest"} {
			if strings.Contains(path, banned) {
				t.Errorf("cmd/custodian links %s", path)
			}
		}
	}
}
