package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/custodian-dev/custodian/asdd"
)

// ErrExhausted ends a proposal run that used up its slices.
var ErrExhausted = errors.New("every seeded slice has been proposed")

// ProposalManifest returns a manifest of n slices in DISCOVERY with no
// history: each takes one accepted discovery proposal.
func ProposalManifest(n int) ([]byte, error) {
	m := asdd.New()
	m.ProjectContext.CurrentSprint = "BENCH"
	list := make([]*asdd.Slice, 0, n)
	for i := range n {
		list = append(list, &asdd.Slice{
			SliceID: fmt.Sprintf("SLICE-%05d", i), Name: "bench slice", Type: "FEATURE", Status: "DISCOVERY",
			GovernanceMode: "MANUAL", CreatedAt: "2026-11-01T00:00:00Z", UpdatedAt: "2026-11-01T00:00:00Z",
		})
	}
	m.Slices = list
	m.Revision = 1
	return asdd.Encode(m)
}

// SeedArtifact writes the artifact the proposals name (the daemon hashes
// it on every proposal) and returns its path relative to dir.
func SeedArtifact(dir string) (string, error) {
	rel := "specs/bench/intent.md"
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	return rel, os.WriteFile(p, []byte("# Intent\n\nThe benchmark's slice: what the user wants, in a paragraph or two of Markdown.\n"), 0o644)
}

// RealProposals measures accepted proposals/s through the daemon with
// clients concurrent clients: each is a discovery agent's result for its
// own slice, naming an artifact file that the daemon reads and hashes
// itself, checked against the rules (lifecycle, gate, CCS, drift) and
// committed durably. The manifest must come from ProposalManifest(slices).
func RealProposals(d *Daemon, name, artifact string, clients, slices int, budget time.Duration) (Result, error) {
	ctx := context.Background()
	var next atomic.Int64
	// One untimed proposal first: the daemon decodes the manifest on its
	// first use, a one-time cost per start that is not a commit's.
	propose := func(n int) error {
		resp, err := d.Client.Op(ctx, "propose", asdd.Proposal{Agent: "discovery", Slice: fmt.Sprintf("SLICE-%05d", n), Score: 0.97,
			Artifacts: []asdd.Artifact{{Name: "intent", Path: artifact}}})
		if err != nil {
			return err
		}
		if !resp.Committed || resp.Verdict != nil {
			return fmt.Errorf("proposal for SLICE-%05d was not accepted: %s", n, resp.Summary)
		}
		return nil
	}
	if err := propose(int(next.Add(1)) - 1); err != nil {
		return Result{}, err
	}
	lat, el, err := Run(clients, budget, 2*clients, func(w, i int) error {
		n := int(next.Add(1)) - 1
		if n >= slices {
			return ErrExhausted
		}
		return propose(n)
	})
	if errors.Is(err, ErrExhausted) {
		err = nil
	}
	return Stats(name, clients, 0, lat, el), err
}

// CLIHeartbeats measures one custodian process per heartbeat on the
// project at dir (no daemon), at least minOps of them.
func CLIHeartbeats(exe, dir, name string, budget time.Duration, minOps int) (Result, error) {
	r, err := CLIProposals(exe, dir, budget, minOps)
	r.Name = name
	return r, err
}

// Alternate measures two commands as whole processes, alternating one run
// of each, so that both see the same machine: the first's result and the
// second's.
func Alternate(a, b Command, budget time.Duration, minOps int) (Result, Result, error) {
	var la, lb []time.Duration
	start := time.Now()
	for i := 0; i < minOps || time.Since(start) < budget; i++ {
		for _, c := range []struct {
			cmd Command
			lat *[]time.Duration
		}{{a, &la}, {b, &lb}} {
			t0 := time.Now()
			if err := c.cmd.Run(i); err != nil {
				return Result{}, Result{}, fmt.Errorf("%s: %w", c.cmd.Name, err)
			}
			*c.lat = append(*c.lat, time.Since(t0))
		}
	}
	sum := func(l []time.Duration) (d time.Duration) {
		for _, x := range l {
			d += x
		}
		return d
	}
	return Stats(a.Name, 1, 0, la, sum(la)), Stats(b.Name, 1, 0, lb, sum(lb)), nil
}

// Command is a whole process to run, once per call of Run.
type Command struct {
	Name string
	Run  func(i int) error
}
