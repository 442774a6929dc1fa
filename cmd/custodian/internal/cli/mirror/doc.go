// Package mirror is `custodian mirror`: the local read-only mirrors of the
// etcd documents.
package mirror
