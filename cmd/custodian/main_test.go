package main_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/internal/testbin"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// Every custodian command pays for the package initialisation of the whole
// binary before it does anything, so no package may do at init what a
// command can do on first use (compile a JSON Schema, a long regular
// expression, parse the default configuration). The runtime reports what
// each package's init allocated (GODEBUG=inittrace=1): bytes, not time, so
// the check does not depend on the machine's load. For scale: compiling
// santhosh-tekuri/jsonschema's meta-schemas allocated 1.7 MB, the id and
// name patterns of asdd 5 MB; the whole binary's init allocates about
// 1.7 MB.
func TestPackageInitAllocatesLittle(t *testing.T) {
	const perPackage, total = 512 << 10, 3 << 20
	cmd := exec.Command(testbin.Path(t), "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("custodian version: %v\n%s", err, stderr.String())
	}
	line := regexp.MustCompile(`^init (\S+) @.*, (\d+) bytes, (\d+) allocs$`)
	type pkg struct {
		name  string
		bytes int
	}
	var pkgs []pkg
	sum := 0
	for l := range strings.SplitSeq(stderr.String(), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2])
		pkgs = append(pkgs, pkg{m[1], n})
		sum += n
	}
	if len(pkgs) < 10 {
		t.Fatalf("no init trace in the output of custodian version (has the runtime's format changed?):\n%s", stderr.String())
	}
	slices.SortFunc(pkgs, func(a, b pkg) int { return b.bytes - a.bytes })
	top := func() string {
		var s []string
		for _, p := range pkgs[:min(5, len(pkgs))] {
			s = append(s, fmt.Sprintf("%s %d KB", p.name, p.bytes>>10))
		}
		return strings.Join(s, ", ")
	}
	// The project's own packages have no reason to do more at init than
	// fill a few tables: a regular expression compiled there (asdd's
	// {0,127} id pattern: 200 KB, 3 % of the CPU of custodian version) is
	// compiled on first use instead.
	const ownPackage = 32 << 10
	for _, p := range pkgs {
		if strings.HasPrefix(p.name, "github.com/custodian-dev/custodian") && p.bytes > ownPackage {
			t.Errorf("package %s allocates %d KB at init (at most %d KB for the project's own): do that work on first use", p.name, p.bytes>>10, ownPackage>>10)
		}
		if p.bytes > perPackage {
			t.Errorf("package %s allocates %d KB at init (at most %d KB): do that work on first use", p.name, p.bytes>>10, perPackage>>10)
		}
	}
	if sum > total {
		t.Errorf("package init allocates %d KB in all (at most %d KB); the most: %s", sum>>10, total>>10, top())
	}
	t.Logf("package init: %d packages, %d KB; the most: %s", len(pkgs), sum>>10, top())
}
