package agentstate

import "github.com/custodian-dev/custodian/store"

// Generic writes (rollback, the HTTP document API) must leave a valid
// schema v2 state.
func init() {
	store.RegisterValidator(".agents/tmp/state.json", func(key string, prev, next []byte) error {
		o, err := Decode(next)
		if err != nil {
			return err
		}
		return Validate(o)
	})
}
