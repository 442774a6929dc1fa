package agentstate

// ValidateWrite checks a generic write of the state (a rollback, a human's
// raw write): the next value must be a valid schema v2 state.
func ValidateWrite(key string, prev, next []byte) error {
	o, err := Decode(next)
	if err != nil {
		return err
	}
	return Validate(o)
}
