//go:build unix

package app_test

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/wire"
)

// The plan `impl --init` hashes is read by the rules of artifacts, in the
// daemon as in direct mode: a file inside the project, regular, size
// capped, never waited on. A file outside the project (its hash would be
// disclosed), a FIFO (it would pin the request), a device (/dev/zero would
// exhaust memory) are INVALID_INPUT and nothing is committed; an ordinary
// plan is hashed.
func TestImplInitReadsOnlyAPlanInsideTheProject(t *testing.T) {
	both(t, func(t *testing.T, p *project) []string {
		p.write(t, "docs/plan.md", "# Plan\n")
		if err := os.Symlink("/etc/hostname", filepath.Join(p.root, "docs", "out.md")); err != nil {
			t.Fatal(err)
		}
		fifo := filepath.Join(p.root, "docs", "fifo.md")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/zero", filepath.Join(p.root, "docs", "zero.md")); err != nil {
			t.Fatal(err)
		}
		initWith := func(plan string) string {
			done := make(chan error, 1)
			go func() {
				_, err := p.agent.Impl(p.ctx(true), wire.ImplRequest{Op: "init", PlanPath: plan, PlanNumber: "1", PlanTitle: "T", Force: true})
				done <- err
			}()
			select {
			case err := <-done:
				return plan + ": " + string(reason.CodeOf(err))
			case <-time.After(time.Minute): // a guard against hanging, not a timing check
				w, _ := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
				w.Close() // releases the reader
				<-done
				return plan + ": hung"
			}
		}
		var got []string
		// Safe to try on a custodian that reads anything: these fail
		// without harm; /dev/zero only once they passed.
		for _, plan := range []string{"/etc/hostname", "../../etc/hostname", "docs/out.md", "docs/fifo.md", ".asdd/state/journal.ndjson", "docs/zero.md", "/dev/zero"} {
			r := initWith(plan)
			got = append(got, r)
			if !strings.HasSuffix(r, ": INVALID_INPUT") {
				t.Fatalf("impl --init --plan-path %s", r)
			}
		}
		got = append(got, initWith("docs/plan.md"))
		if r := initWith(filepath.Join(p.root, "docs", "plan.md")); !strings.HasSuffix(r, ": ") {
			t.Errorf("an absolute path inside the project: %s", r)
		}
		m, _, err := p.svc.ImplManifest(p.ctx(false))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("sha256:%x", sha256.Sum256([]byte("# Plan\n"))); m.Plan.SHA256 != want {
			t.Errorf("the plan's hash is %q, want %s", m.Plan.SHA256, want)
		}
		return append(got, "hash "+m.Plan.SHA256)
	})
}
