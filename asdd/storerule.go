package asdd

import "github.com/custodian-dev/custodian/store"

// Generic writes (rollback, the HTTP document API) must leave a manifest
// that passes the schema, as every rule-driven commit does.
func init() {
	store.RegisterValidator(".asdd/state/manifest.json", func(key string, prev, next []byte) error {
		_, err := Decode(next)
		return err
	})
}
