// Package migrate is `custodian migrate`: the project's state copied between
// the file store and etcd, journals and all.
package migrate
