// Package quick is `custodian quick`: a QUICK_FIX slice.
package quick
