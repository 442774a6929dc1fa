//go:build !linux

package unixsock

// maxPath is the size of sockaddr_un's sun_path on the BSDs and macOS (the
// smallest of the Unix systems Go supports); Go binds a path of fewer
// bytes.
const maxPath = 104

const procFD = false
