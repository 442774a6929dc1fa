package asdd

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/custodian-dev/custodian/reason"
)

// Part names a part of the manifest schema that a member of a manifest
// can be checked against on its own (ValidatePart): a slice, a heartbeat,
// the project context.
type Part string

// The parts of the manifest schema compiled on their own.
const (
	PartSlice     Part = partSlice
	PartHeartbeat Part = partHeartbeat
	PartContext   Part = partContext
)

const (
	partSlice     = "#/$defs/slice"
	partHeartbeat = "#/$defs/heartbeat"
	partContext   = "#/properties/project_context"
)

var (
	partsOnce sync.Once
	parts     map[Part]*jsonschema.Schema
	partsErr  error
)

func compiledParts() (map[Part]*jsonschema.Schema, error) {
	partsOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
		if err != nil {
			partsErr = fmt.Errorf("embedded schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		const url = "asdd-manifest.json"
		if err := c.AddResource(url, doc); err != nil {
			partsErr = fmt.Errorf("embedded schema: %w", err)
			return
		}
		parts = map[Part]*jsonschema.Schema{}
		for _, p := range []Part{partSlice, partHeartbeat, partContext} {
			s, err := c.Compile(url + string(p))
			if err != nil {
				partsErr = fmt.Errorf("embedded schema %s: %w", p, err)
				return
			}
			parts[p] = s
		}
	})
	return parts, partsErr
}

// ValidatePart checks raw, the member of a manifest at JSON pointer at,
// against its part of the schema: INVALID_INPUT naming the member when it
// does not match.
func ValidatePart(part Part, raw []byte, at string) error { return validatePart(part, raw, at) }

func validatePart(part Part, raw []byte, at string) error {
	ps, err := compiledParts()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return reason.New(reason.InvalidInput, "encoded manifest fails its schema: %s is not valid JSON: %v", at, err)
	}
	if err := ps[part].Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return reason.New(reason.InvalidInput, "encoded manifest fails its schema: manifest does not match its schema: %s", describeAt(ve, at))
		}
		return reason.New(reason.InvalidInput, "encoded manifest fails its schema: manifest does not match its schema: at %s: %v", at, err)
	}
	return nil
}

// describeAt is describe for a member validated on its own at pointer at.
func describeAt(ve *jsonschema.ValidationError, at string) string {
	var leaves []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := at
			if len(e.InstanceLocation) > 0 || loc == "" {
				loc += "/" + strings.Join(e.InstanceLocation, "/")
			}
			leaves = append(leaves, fmt.Sprintf("at %s: %s", loc, e.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(leaves) > 3 {
		leaves = append(leaves[:3], fmt.Sprintf("and %d more", len(leaves)-3))
	}
	return strings.Join(leaves, "; ")
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

// encChunkSize is how many slices samePointers compares at a time when
// ApplyFinalized looks for the slices an operation changed.
const encChunkSize = 64

// samePointers reports whether a and b (of equal length) hold the same
// pointers.
func samePointers(a, b []*Slice) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
