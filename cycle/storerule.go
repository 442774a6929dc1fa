package cycle

// ValidateWrite checks a generic write of a cycle (a rollback, a human's
// raw write): a valid CycleState, and history that only grows.
func ValidateWrite(key string, prev, next []byte) error {
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
}
