package store

import (
	"path"
	"sync"
)

// A Validator checks a proposed next value of a document against its
// domain's rules (schema, append-only history, …): generic writes such as
// rollback and the HTTP document API run it, so they cannot bypass what
// the domain's own commands enforce. prev is nil when the document is new.
type Validator func(key string, prev, next []byte) error

var (
	validatorsMu sync.RWMutex
	validators   []registered
)

type registered struct {
	pattern string
	v       Validator
}

// RegisterValidator registers v for the keys matching pattern (path.Match
// syntax, e.g. ".workflow/.cycle/*.json"). Domains call it from init.
func RegisterValidator(pattern string, v Validator) {
	if _, err := path.Match(pattern, ""); err != nil {
		panic("store: bad validator pattern " + pattern)
	}
	validatorsMu.Lock()
	defer validatorsMu.Unlock()
	validators = append(validators, registered{pattern, v})
}

// Validate runs every validator registered for key.
func Validate(key string, prev, next []byte) error {
	validatorsMu.RLock()
	defer validatorsMu.RUnlock()
	for _, r := range validators {
		if ok, _ := path.Match(r.pattern, key); ok {
			if err := r.v(key, prev, next); err != nil {
				return err
			}
		}
	}
	return nil
}
