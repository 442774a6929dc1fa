package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/cycle"
)

// BenchmarkCycleChange runs `custodian cycle change` in-process (store
// commit and progress sync included, process start excluded) on a cycle
// whose change log already holds n entries.
func BenchmarkCycleChange(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("log=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			now := time.Date(2026, 1, 22, 2, 0, 0, 0, time.UTC)
			id := "cycle-v1-20260122T020000-bench0"
			s, err := cycle.New(id, "bench", "", 5, now)
			if err != nil {
				b.Fatal(err)
			}
			if s, _, err = cycle.Apply(s, cycle.Iterate{}, now); err != nil {
				b.Fatal(err)
			}
			for i := range n {
				if s, _, err = cycle.Apply(s, cycle.AppendChange{File: fmt.Sprintf("src/f%d.ts", i), Action: "create", Agent: "cd", Description: "change"}, now); err != nil {
					b.Fatal(err)
				}
			}
			raw, err := cycle.Encode(s)
			if err != nil {
				b.Fatal(err)
			}
			p := filepath.Join(dir, filepath.FromSlash(cycle.Key(id)))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, raw, 0o644); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				var out, errb bytes.Buffer
				app := &cmdutil.App{Out: &out, Err: &errb, Now: func() time.Time { return now }}
				root := NewRoot(app)
				root.SetArgs([]string{"-C", dir, "cycle", "change", id, "--file", fmt.Sprintf("src/g%d.ts", i), "--action", "modify"})
				err := root.Execute()
				if cerr := app.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					b.Fatalf("%v: %s", err, errb.String())
				}
			}
		})
	}
}
