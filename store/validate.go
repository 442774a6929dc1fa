package store

import "path"

// A Validator checks a proposed next value of a document against its
// domain's rules (schema, append-only history, …): generic writes such as
// rollback and the HTTP document API run it, so they cannot bypass what
// the domain's own commands enforce. prev is nil when the document is new.
type Validator func(key string, prev, next []byte) error

// Rule is a Validator for the keys matching Pattern (path.Match syntax,
// e.g. ".workflow/.cycle/*.json").
type Rule struct {
	Pattern string
	Check   Validator
}

// Rules are the validators of a set of documents, handed to the generic
// write paths by the composition root.
type Rules []Rule

// Validate runs every rule whose pattern matches key.
func (rs Rules) Validate(key string, prev, next []byte) error {
	for _, r := range rs {
		if ok, _ := path.Match(r.Pattern, key); ok {
			if err := r.Check(key, prev, next); err != nil {
				return err
			}
		}
	}
	return nil
}
