package asdd

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/custodian-dev/custodian/reason"
)

// Schema is the JSON Schema (draft 2020-12) of the manifest, as printed by
// `custodian schema asdd`.
//
//go:embed schema.json
var Schema []byte

var printer = message.NewPrinter(language.English)

var (
	schemaOnce sync.Once
	schemaC    *jsonschema.Schema
	schemaErr  error
)

func compiled() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema))
		if err != nil {
			schemaErr = fmt.Errorf("embedded schema: %w", err)
			return
		}
		c := jsonschema.NewCompiler()
		const url = "asdd-manifest.json"
		if err := c.AddResource(url, doc); err != nil {
			schemaErr = fmt.Errorf("embedded schema: %w", err)
			return
		}
		schemaC, schemaErr = c.Compile(url)
	})
	return schemaC, schemaErr
}

// Validate checks raw against the manifest schema and the invariants a
// schema cannot say (unique slice ids). A violation is an INVALID_INPUT
// error naming the member.
func Validate(raw []byte) error {
	sch, err := compiled()
	if err != nil {
		return err
	}
	// The slices are validated one at a time against their part of the
	// schema (the manifest's items are exactly that part), so that a large
	// manifest is never held whole in the validator's generic form, several
	// times its size. Anything that is not an object with a slices array
	// takes the whole-document path, which names the problem.
	var top map[string]json.RawMessage
	var items []json.RawMessage
	if json.Unmarshal(raw, &top) != nil || json.Unmarshal(top["slices"], &items) != nil || items == nil {
		return validateWhole(sch, raw)
	}
	top["slices"] = json.RawMessage("[]")
	rest, err := json.Marshal(top)
	if err != nil {
		return validateWhole(sch, raw)
	}
	if err := validateWhole(sch, rest); err != nil {
		return err
	}
	ps, err := compiledParts()
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(items))
	for i, item := range items {
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(item))
		if err != nil {
			return reason.New(reason.InvalidInput, "manifest is not valid JSON: %v", err)
		}
		if err := ps[partSlice].Validate(v); err != nil {
			var ve *jsonschema.ValidationError
			if errors.As(err, &ve) {
				return reason.New(reason.InvalidInput, "manifest does not match its schema: %s", describeAt(ve, "/slices/"+strconv.Itoa(i)))
			}
			return reason.New(reason.InvalidInput, "manifest does not match its schema: %v", err)
		}
		id, _ := v.(map[string]any)["slice_id"].(string)
		if seen[id] {
			return reason.New(reason.InvalidInput, "manifest does not match its schema: slices[%d]: duplicate slice_id %q", i, id)
		}
		seen[id] = true
	}
	return nil
}

// validateWhole checks raw against the whole schema in one piece.
func validateWhole(sch *jsonschema.Schema, raw []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return reason.New(reason.InvalidInput, "manifest is not valid JSON: %v", err)
	}
	if err := sch.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return reason.New(reason.InvalidInput, "manifest does not match its schema: %s", describe(ve))
		}
		return reason.New(reason.InvalidInput, "manifest does not match its schema: %v", err)
	}
	if obj, ok := v.(map[string]any); ok {
		if list, ok := obj["slices"].([]any); ok {
			seen := map[string]bool{}
			for i, s := range list {
				id, _ := s.(map[string]any)["slice_id"].(string)
				if seen[id] {
					return reason.New(reason.InvalidInput, "manifest does not match its schema: slices[%d]: duplicate slice_id %q", i, id)
				}
				seen[id] = true
			}
		}
	}
	return nil
}

// describe returns the deepest, most specific causes of a validation error
// as "at /slices/0/ccs: maximum: got 1.2, want 1" lines joined by "; ".
func describe(ve *jsonschema.ValidationError) string { return describeAt(ve, "") }
