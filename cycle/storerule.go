package cycle

import "github.com/custodian-dev/custodian/store"

// Generic writes (rollback, the HTTP document API) must keep a cycle's
// rules: a valid CycleState, and history that only grows.
func init() {
	store.RegisterValidator(".workflow/.cycle/*.json", func(key string, prev, next []byte) error {
		n, err := Decode(next)
		if err != nil {
			return err
		}
		if err := Validate(n); err != nil {
			return err
		}
		if prev == nil {
			return nil
		}
		p, err := Decode(prev)
		if err != nil {
			return nil // a damaged previous value does not bind its successor
		}
		return CheckTransition(p, n)
	})
}
