package unixsock

// maxPath is the size of sockaddr_un's sun_path; Go binds a path of fewer
// bytes (it needs room for the terminating NUL).
const maxPath = 108

// procFD: Linux names an open directory /proc/self/fd/N.
const procFD = true
