// Package doc holds the commands on a store's documents and their history:
// get, history, diff, rollback (and the hidden debug commands).
package doc
