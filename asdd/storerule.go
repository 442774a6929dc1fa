package asdd

// ValidateWrite checks a generic write of the manifest (a rollback, a
// human's raw write): the next value must pass the schema, as every
// rule-driven commit does. The composition root hands it to the store's
// generic write paths (app.DocumentRules).
func ValidateWrite(key string, prev, next []byte) error {
	_, err := Decode(next)
	return err
}
