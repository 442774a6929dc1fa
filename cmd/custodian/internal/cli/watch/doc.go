// Package watch is `custodian watch`: a document's commits as they happen.
package watch
