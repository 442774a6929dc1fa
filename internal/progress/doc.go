// Package progress draws a progress bar for long work (check, rebuild,
// migrate, bench, run) on stderr — and only when stderr is a terminal, so
// logs, pipes, CI and --json output never see one. It wraps
// github.com/schollz/progressbar/v3.
//
// The one-line use:
//
//	bar := progress.Start(app.Err, total, "checking artifacts")
//	defer bar.Finish()
//	… bar.Add(1) per item …
//
// A *Bar is never nil and every method is safe on a disabled bar, so the
// calling code does not branch on whether a terminal is there. Set
// CUSTODIAN_NO_PROGRESS=1 to turn bars off on a terminal too.
package progress
