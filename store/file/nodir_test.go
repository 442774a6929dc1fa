package file_test

import (
	"context"
	"os"
	"testing"

	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/file"
)

// An update (not a create) of a document whose directory does not exist is
// NOT_FOUND and leaves nothing behind: no directory, no lock file. A
// directory with no project stays as it was.
func TestUpdateOfMissingDocumentCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, file.Options{})
	called := false
	for _, key := range []string{".asdd/state/manifest.json", ".workflow/.cycle/c1.json", ".impl/manifest.json"} {
		_, err := s.Update(context.Background(), key, func(cur store.Document) (store.Change, error) {
			called = true
			return store.Change{Value: []byte(`{}`)}, nil
		})
		if reason.CodeOf(err) != reason.NotFound {
			t.Errorf("%s: %v, want NOT_FOUND", key, err)
		}
	}
	if called {
		t.Error("the update function ran for a missing document")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	// Create still makes what it needs.
	if _, err := s.Update(context.Background(), ".asdd/state/manifest.json", func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{"a":1}`)}, nil
	}, store.Create()); err != nil {
		t.Fatal(err)
	}
}
