// Package storeopen opens the stores a command may work on besides the
// embedded file store: a running daemon (--server, or the project's socket)
// and etcd (--store, $CUSTODIAN_STORE or the project config's store: setting).
// The composition root (package cli) hands them to cmdutil.App as Openers.
package storeopen
