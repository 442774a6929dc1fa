package impl

import "github.com/custodian-dev/custodian/store"

// Generic writes (rollback, the HTTP document API) must leave a valid task
// manifest.
func init() {
	store.RegisterValidator(Key, func(key string, prev, next []byte) error {
		_, err := Decode(next)
		return err
	})
}
