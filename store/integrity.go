package store

import "context"

// Beyond the contract: what a backend that keeps files (store/file) offers
// for a person settling its integrity. The application layer uses it when
// the store has it (app.Local.Verify, app.Local.Repair).

// VerifyReport is what a verification found on a document that passed.
type VerifyReport struct {
	Key      string `json:"key"`
	Revision uint64 `json:"revision"`
	// Recovery lists the states an ordinary crash leaves that the next
	// open recovers (silently, under the lock), and what it will do:
	// they are not corruption.
	Recovery []string `json:"recovery,omitempty"`
	// Anchored is the revision the anchor names (0: no anchor);
	// Authenticated, that a journal key checked the anchor and every MAC.
	Anchored      uint64 `json:"anchored"`
	Authenticated bool   `json:"authenticated"`
	// Witnessed is the revision the witness (a copy of the anchor outside
	// the work tree) names; 0: none.
	Witnessed uint64 `json:"witnessed,omitempty"`
}

// A ReportingVerifier's VerifyDocument is Verify saying what it found.
type ReportingVerifier interface {
	VerifyDocument(ctx context.Context, key string) (VerifyReport, error)
}

// RepairKeep says which side of a document whose journal and snapshot
// disagree in a way recovery must not decide (the journal lost records or
// is missing, its history was rewritten, its anchor is not authenticated)
// a repair keeps.
type RepairKeep string

// What a repair keeps.
const (
	// KeepJournal makes the journal, as it is, the document's history: the
	// anchor is set to its head (and authenticated, with a key), and a
	// snapshot that is no revision of it is moved aside.
	KeepJournal RepairKeep = "journal"
	// KeepSnapshot does the same and then commits the snapshot's value as a
	// new revision (by the repair's actor), so nothing of it is lost. A
	// snapshot whose journal is missing starts a new journal.
	KeepSnapshot RepairKeep = "snapshot"
)

// RepairResult says what a repair did.
type RepairResult struct {
	Key       string   `json:"key"`
	Kept      string   `json:"kept"`
	Revision  uint64   `json:"revision"`
	Committed bool     `json:"committed"`       // the snapshot's value was committed as Revision
	Aside     []string `json:"aside,omitempty"` // files moved aside (never deleted)
}

// A Repairer settles, with the document's writers stopped, what its
// opens refuse with CORRUPT_STATE because only a person can choose.
type Repairer interface {
	Repair(ctx context.Context, key string, keep RepairKeep, actor, why string) (RepairResult, error)
}
