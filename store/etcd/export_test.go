package etcd

// SetPageSize sets how many records or keys one range request fetches, and
// returns a function restoring it.
func SetPageSize(n int64) func() {
	old := pageSize
	pageSize = n
	return func() { pageSize = old }
}
