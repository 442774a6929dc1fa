//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package effects

const openFlags = 0
