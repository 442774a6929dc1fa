package asdd

import (
	"github.com/custodian-dev/custodian/reason"
)

// Part names a part of the manifest schema that a member of a manifest
// can be checked against on its own (ValidatePart): a slice, a heartbeat,
// the project context.
type Part string

// The parts of the manifest schema validated on their own.
const (
	PartSlice     Part = partSlice
	PartHeartbeat Part = partHeartbeat
	PartContext   Part = partContext
)

// ValidatePart checks raw, the member of a manifest at JSON pointer at,
// against its part of the schema: INVALID_INPUT naming the member when it
// does not match.
func ValidatePart(part Part, raw []byte, at string) error { return validatePart(string(part), raw, at) }

// validatePart checks raw, the member of the manifest at pointer at,
// against its part of the schema.
func validatePart(part string, raw []byte, at string) error {
	ss, err := compiledSchema()
	if err != nil {
		return err
	}
	v, err := decodeInstance(raw)
	if err != nil {
		return reason.New(reason.InvalidInput, "encoded manifest fails its schema: %s is not valid JSON: %v", at, err)
	}
	msg, err := ss.check(part, v, at)
	if err != nil {
		return err
	}
	if msg != "" {
		return reason.New(reason.InvalidInput, "encoded manifest fails its schema: %s", msg)
	}
	return nil
}

// heartbeatSurelyValid reports whether h certainly matches the heartbeat part of
// the schema (a status, counts not negative, no unknown members), so the
// schema need not be run on its encoding: every agent heartbeat takes this
// path. Anything else is checked against the schema, which names the
// problem. TestHeartbeatSurelyValidImpliesSchema holds the two together.
func heartbeatSurelyValid(h *Heartbeat) bool {
	nonNeg := func(p *int) bool { return p == nil || *p >= 0 }
	return h.Status != "" && len(h.Extra) == 0 && nonNeg(h.CurrentWave) && nonNeg(h.TasksCompleted) && nonNeg(h.TasksRemaining)
}

// HeartbeatSurelyValid reports whether h certainly matches the heartbeat
// part of the schema without running it (see heartbeatSurelyValid).
func HeartbeatSurelyValid(h *Heartbeat) bool { return heartbeatSurelyValid(h) }
