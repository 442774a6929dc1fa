// Package schema is `custodian schema`: the JSON Schema of a state document.
package schema
