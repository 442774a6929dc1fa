package asdd

import "github.com/custodian-dev/custodian/reason"

// Observer is what the custodian sees of the project's files for an
// operation, whatever its caller sent: package app reads the files and a
// committed manifest for it, and the rules trust only what it says.
type Observer interface {
	// Artifact is artifact name at path as it is on disk: its hash, and
	// the hash it will have once marked with marker.
	Artifact(name, path, marker string) (Artifact, error)
	// Observed is the hashes on disk of the artifacts a recent manifest
	// names for slice id, "" for a missing one; none for an unknown slice
	// or no manifest.
	Observed(id string) (map[string]string, error)
	// Slice is slice id as last committed (NOT_FOUND when there is none).
	Slice(id string) (*Slice, error)
	// Files is the hashes on disk of paths, "" for a missing one.
	Files(paths []string) (map[string]string, error)
}

// Observing is an operation that names files the custodian reads itself:
// Observe fills in what it sees (hashes of artifacts, of the slice's files,
// the versions a human accepts), Unobserved drops it, so that nothing a
// caller computed travels to the daemon (which observes again anyway).
type Observing interface {
	Op
	Observe(ob Observer, cfg *Config) (Op, error)
	Unobserved() Op
}

var (
	_ Observing = Proposal{}
	_ Observing = Quick{}
	_ Observing = ReportFailure{}
	_ Observing = Resolve{}
	_ Observing = Approve{}
	_ Observing = ClearReview{}
	_ Observing = FlagDrift{}
)

// observeAll is as, as the files are on disk.
func observeAll(ob Observer, as []Artifact, marker string) ([]Artifact, error) {
	if as == nil {
		return nil, nil
	}
	out := make([]Artifact, len(as))
	for i, a := range as {
		var err error
		if out[i], err = ob.Artifact(a.Name, a.Path, marker); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// bare is as named only: name and path.
func bare(as []Artifact) []Artifact {
	if as == nil {
		return nil
	}
	out := make([]Artifact, len(as))
	for i, a := range as {
		out[i] = Artifact{Name: a.Name, Path: a.Path}
	}
	return out
}

// present is slice id's files that are on disk, with their hashes: the
// versions a human accepts.
func present(ob Observer, id string) (map[string]string, error) {
	obs, err := ob.Observed(id)
	if err != nil {
		return nil, err
	}
	for k, v := range obs {
		if v == "" {
			delete(obs, k)
		}
	}
	return obs, nil
}

// Observe hashes the artifacts and the trace (marked as the agent's
// configuration says) and the slice's files (drift).
func (p Proposal) Observe(ob Observer, cfg *Config) (Op, error) {
	marker := DefaultMarker
	if a, ok := cfg.Agent(p.Agent); ok {
		marker = a.ArtifactMarker()
	}
	var err error
	if p.Artifacts, err = observeAll(ob, p.Artifacts, marker); err != nil {
		return nil, err
	}
	if p.Trace != nil {
		t, err := ob.Artifact("trace", p.Trace.Path, marker)
		if err != nil {
			return nil, err
		}
		p.Trace = &t
	}
	if p.Observed, err = ob.Observed(p.Slice); err != nil {
		return nil, err
	}
	return p, nil
}

func (p Proposal) Unobserved() Op {
	p.Artifacts, p.Observed = bare(p.Artifacts), nil
	if p.Trace != nil {
		p.Trace = &Artifact{Name: p.Trace.Name, Path: p.Trace.Path}
	}
	return p
}

// Observe hashes the fix's artifacts.
func (o Quick) Observe(ob Observer, _ *Config) (Op, error) {
	var err error
	o.Artifacts, err = observeAll(ob, o.Artifacts, DefaultMarker)
	if err != nil {
		return nil, err
	}
	return o, nil
}

func (o Quick) Unobserved() Op {
	o.Artifacts = bare(o.Artifacts)
	return o
}

// Observe hashes the conflicting artifacts, and what the slice's phase
// artifacts will hash to once marked DRAFT — AGENT HALTED: the rules mark
// them (seed 004).
func (o ReportFailure) Observe(ob Observer, _ *Config) (Op, error) {
	var err error
	if o.Artifacts, err = observeAll(ob, o.Artifacts, DefaultMarker); err != nil {
		return nil, err
	}
	o.Marked = map[string]string{}
	if s, err := ob.Slice(o.Slice); err == nil {
		for name, path := range s.PhaseData {
			if a, err := ob.Artifact(name, path, DefaultMarker); err == nil && a.MarkedSHA256 != "" {
				o.Marked[path] = a.MarkedSHA256
			}
		}
	}
	return o, nil
}

func (o ReportFailure) Unobserved() Op {
	o.Artifacts = bare(o.Artifacts)
	return o
}

// Observe records the slice's files as they are now: the versions the
// human accepts.
func (o Resolve) Observe(ob Observer, _ *Config) (Op, error) {
	var err error
	o.Hashes, err = present(ob, o.Slice)
	if err != nil {
		return nil, err
	}
	return o, nil
}

func (o Resolve) Unobserved() Op {
	o.Hashes = nil
	return o
}

// Observe records the slice's files as they are now: the versions the
// human accepts.
func (o Approve) Observe(ob Observer, _ *Config) (Op, error) {
	var err error
	o.Hashes, err = present(ob, o.Slice)
	if err != nil {
		return nil, err
	}
	return o, nil
}

func (o Approve) Unobserved() Op {
	o.Hashes = nil
	return o
}

// Observe records the slice's files as they are now (none for the project
// context's review): the versions the reviewer accepts.
func (o ClearReview) Observe(ob Observer, _ *Config) (Op, error) {
	o.Hashes = nil
	if o.Slice != "" {
		var err error
		if o.Hashes, err = present(ob, o.Slice); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func (o ClearReview) Unobserved() Op {
	o.Hashes = nil
	return o
}

// Observe keeps only the paths that really drifted from the hash the
// manifest recorded, with their hash on disk.
func (o FlagDrift) Observe(ob Observer, _ *Config) (Op, error) {
	s, err := ob.Slice(o.Slice)
	if err != nil {
		return nil, err
	}
	obs, err := ob.Files(s.Artifacts())
	if err != nil {
		return nil, err
	}
	drifted := map[string]string{}
	for p := range o.Paths {
		if got, named := obs[p]; named && got != s.ArtifactHashes[p] {
			drifted[p] = got
		}
	}
	if len(drifted) == 0 {
		return nil, reason.New(reason.InvalidInput, "slice %s: none of the paths given has drifted from the hash the manifest recorded", o.Slice)
	}
	o.Paths = drifted
	return o, nil
}

// Unobserved is o: the paths it names are the caller's; Observe keeps
// those that drifted.
func (o FlagDrift) Unobserved() Op { return o }
