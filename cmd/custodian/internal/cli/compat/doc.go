// Package compat is `custodian compat`: drop-ins inside third-party plugins so
// that their scripts change state through the custodian.
package compat
