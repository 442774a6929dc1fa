//go:build !linux

package effects

import "os"

// openBeneath is Linux's fast path (openat2); elsewhere every path is
// resolved by locate.
func (p *Project) openBeneath(string) (*os.File, bool) { return nil, false }
