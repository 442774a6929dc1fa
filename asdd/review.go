package asdd

import (
	"slices"
	"strings"

	"github.com/custodian-dev/custodian/reason"
)

// ClearReview clears NEEDS_HUMAN_REVIEW markers (of a slice, or of the
// project context when Slice is "") after a human checked them.
type ClearReview struct {
	Slice     string `json:"slice,omitempty"`
	Role      string `json:"role,omitempty"`
	By        string `json:"by,omitempty"`
	Rationale string `json:"rationale,omitempty"`
	// Hashes are the artifacts' hashes as the human accepted them.
	Hashes map[string]string `json:"hashes,omitempty"`
	// Config accepts .asdd/config.yaml as it is now instead (its SHA-256
	// becomes the manifest's pin, ProjectContext.ConfigSHA256).
	Config bool `json:"config,omitempty"`
}

// Actor is the reviewing role.
func (o ClearReview) Actor() string { return o.Role }

func (o ClearReview) apply(t *tx) error {
	if err := t.needRole(o.Role); err != nil {
		return err
	}
	if strings.TrimSpace(o.Rationale) == "" {
		return reason.New(reason.InvalidInput, "a review needs a rationale")
	}
	if o.Config {
		return t.acceptConfig(o)
	}
	if o.Slice == "" {
		if len(t.m.ProjectContext.NeedsHumanReview) == 0 {
			return reason.New(reason.InvalidTransition, "the project context has nothing marked %s", NeedsHumanReview)
		}
		t.event("review_cleared", "", "", map[string]any{"role": o.Role, "fields": t.m.ProjectContext.NeedsHumanReview, "rationale": o.Rationale})
		t.m.ProjectContext.NeedsHumanReview = nil
		t.summary("%s reviewed the project context", o.Role)
		return nil
	}
	s, err := t.find(o.Slice)
	if err != nil {
		return err
	}
	if len(s.NeedsHumanReview) == 0 {
		return reason.New(reason.InvalidTransition, "slice %s has nothing marked %s", s.SliceID, NeedsHumanReview)
	}
	if s.Status == NeedsHumanReview {
		return reason.New(reason.InvalidTransition, "slice %s has status %s: set its status first", s.SliceID, NeedsHumanReview)
	}
	t.clearReview(s, o.Role, o.Rationale, o.Hashes)
	return nil
}

func (t *tx) clearReview(s *Slice, role, rationale string, hashes map[string]string) {
	t.event("review_cleared", s.SliceID, "", map[string]any{"role": role, "fields": s.NeedsHumanReview, "rationale": rationale})
	s.NeedsHumanReview = nil
	t.recordHashes(s, hashes)
	t.touch(s)
	t.summary("%s reviewed slice %s", role, s.SliceID)
}

// recordHashes stores the given hashes for the paths the slice names.
func (t *tx) recordHashes(s *Slice, hashes map[string]string) {
	named := s.Artifacts()
	for p, h := range hashes {
		if _, ok := slices.BinarySearch(named, p); ok && hashRE().MatchString(h) {
			if s.ArtifactHashes == nil {
				s.ArtifactHashes = map[string]string{}
			}
			s.ArtifactHashes[p] = h
		}
	}
}

// acceptConfig pins the configuration the rules now run with.
func (t *tx) acceptConfig(o ClearReview) error {
	if o.Slice != "" {
		return reason.New(reason.InvalidInput, "a configuration is accepted for the project, not for slice %s", o.Slice)
	}
	sum, was := t.cfg.SHA256(), t.m.ProjectContext.ConfigSHA256
	if sum == "" {
		return reason.New(reason.InvalidInput, "the configuration was not read from %s", ConfigPath)
	}
	if sum == was {
		return reason.New(reason.InvalidTransition, "%s is already the accepted configuration (%s)", ConfigPath, sum)
	}
	t.m.ProjectContext.ConfigSHA256 = sum
	t.event("config_accepted", "", "", map[string]any{"role": o.Role, "from": was, "to": sum, "rationale": o.Rationale})
	t.summary("%s accepted %s (%s)", o.Role, ConfigPath, sum)
	return nil
}

// checkConfig refuses every operation but a configuration's acceptance
// while the configuration is not the one the manifest pins: a
// configuration changed behind the custodian (a lowered minimum) must not
// decide anything until a human accepts it.
func checkConfig(m *Manifest, op Op, cfg *Config) error {
	if r, ok := op.(ClearReview); ok && r.Config {
		return nil
	}
	return ConfigDrift(m, cfg)
}

// ConfigDrift is a STATE_DRIFT when cfg was read from another file than
// the one m pins (ProjectContext.ConfigSHA256); nil when it is that one,
// when m pins none, or when cfg was built by hand.
func ConfigDrift(m *Manifest, cfg *Config) error {
	pinned, sum := m.ProjectContext.ConfigSHA256, cfg.SHA256()
	if pinned == "" || sum == "" || pinned == sum {
		return nil
	}
	return reason.New(reason.StateDrift, "%s changed behind the custodian (it is %s; the accepted one is %s): no rule runs on it until a human accepts it with `custodian approve --config --role TL --rationale TEXT` (or restores the file)", ConfigPath, sum, pinned).
		With("path", ConfigPath)
}
