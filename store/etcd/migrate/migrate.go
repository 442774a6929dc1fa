// Package migrate copies a project's state between store backends — the
// embedded file store and etcd — keeping every journal record byte for
// byte, so the hash chains still verify on the other side.
//
// Copy reads each document's full journal and current value from the
// source (which must verify), writes them to the target through its Import
// (which refuses to overwrite a document), and verifies each document on
// the target. Nothing is deleted from the source.
package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/custodian-dev/custodian/internal/atomicfile"
	"github.com/custodian-dev/custodian/mirror"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/store/etcd"
	"github.com/custodian-dev/custodian/store/file"
)

// Target is where documents are copied to.
type Target interface {
	// Has reports whether the document exists on the target.
	Has(ctx context.Context, key string) (bool, error)
	// Import writes a new document with its journal records verbatim.
	Import(ctx context.Context, key string, recs []store.Record, value []byte) error
	// Verify checks the document as the target's own verify does.
	Verify(ctx context.Context, key string) error
}

// Doc is the outcome of copying one document.
type Doc struct {
	Key      string `json:"key"`
	Revision uint64 `json:"revision"`
	Records  int    `json:"records"`
	Bytes    int    `json:"bytes"`
	Verified bool   `json:"verified"`
}

// Copy copies the documents keys of src (all of them when keys is empty)
// to dst. Before writing anything it verifies every source document and
// checks that none exists on the target; it then imports and verifies them
// one by one, calling progress after each.
func Copy(ctx context.Context, src store.Store, dst Target, keys []string, progress func(Doc)) ([]Doc, error) {
	if len(keys) == 0 {
		var err error
		if keys, err = src.Keys(ctx); err != nil {
			return nil, fmt.Errorf("list source documents: %w", err)
		}
	}
	for _, k := range keys {
		if err := src.Verify(ctx, k); err != nil {
			return nil, fmt.Errorf("source %s does not verify, nothing copied: %w", k, err)
		}
		has, err := dst.Has(ctx, k)
		if err != nil {
			return nil, err
		}
		if has {
			return nil, reason.New(reason.Conflict, "%s already exists on the target; nothing copied (migrate never overwrites)", k)
		}
	}
	out := make([]Doc, 0, len(keys))
	for _, k := range keys {
		doc, err := src.Get(ctx, k)
		if err != nil {
			return out, err
		}
		recs, err := src.History(ctx, k, 0, 0)
		if err != nil {
			return out, err
		}
		if len(recs) == 0 || recs[len(recs)-1].Rev != doc.Revision {
			return out, reason.New(reason.CorruptState, "%s: revision %d but the journal has %d records (it changed during the copy?)", k, doc.Revision, len(recs))
		}
		if err := dst.Import(ctx, k, recs, doc.Value); err != nil {
			return out, fmt.Errorf("copy %s: %w", k, err)
		}
		if err := dst.Verify(ctx, k); err != nil {
			return out, fmt.Errorf("copied %s does not verify: %w", k, err)
		}
		d := Doc{Key: k, Revision: doc.Revision, Records: len(recs), Bytes: len(doc.Value), Verified: true}
		out = append(out, d)
		if progress != nil {
			progress(d)
		}
	}
	return out, nil
}

var _ Target = (*etcd.Store)(nil)

// FileTarget writes documents in the file backend's format under a project
// root (see package store/file): the journal, then the snapshot, each as a
// temporary file in the same directory, fsynced, renamed into place, and
// the directory fsynced.
type FileTarget struct {
	Root string
}

var _ Target = FileTarget{}

// files returns the snapshot and journal paths of key, named as the file
// backend names them.
func files(key string) (snap, journal string) {
	dir, base := path.Split(key)
	if base == "manifest.json" {
		return key, dir + "journal.ndjson"
	}
	return key, dir + strings.TrimSuffix(base, ".json") + ".journal.ndjson"
}

// Has reports whether the snapshot or any journal file (live or sealed
// segment) of key exists.
func (f FileTarget) Has(ctx context.Context, key string) (bool, error) {
	r, err := os.OpenRoot(f.Root)
	if err != nil {
		return false, fmt.Errorf("open %s: %w", f.Root, err)
	}
	defer r.Close()
	snap, _ := files(key)
	journals, err := file.JournalFilesIn(f.Root, key)
	if err != nil {
		return false, err
	}
	if len(journals) > 0 {
		return true, nil
	}
	if _, err := r.Lstat(snap); err == nil {
		// An intact mirror of the etcd document (package mirror) is a
		// copy the migration replaces, not a document of this store.
		if ms, err := mirror.Read(f.Root, key); err == nil && ms.State == "ok" {
			return false, nil
		}
		return true, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("%s: %w", snap, err)
	}
	return false, nil
}

// Import writes the journal and the snapshot of a new document.
func (f FileTarget) Import(ctx context.Context, key string, recs []store.Record, value []byte) error {
	lines, err := etcd.CheckJournal(key, recs, value)
	if err != nil {
		return err
	}
	if has, err := f.Has(ctx, key); err != nil {
		return err
	} else if has {
		return reason.New(reason.Conflict, "%s already exists under %s; migrate never overwrites", key, f.Root)
	}
	var journal []byte
	for _, l := range lines {
		journal = append(append(journal, l...), '\n')
	}
	snapBytes, err := store.Indent(bytes.TrimRight(value, " \t\r\n"))
	if err != nil {
		return reason.New(reason.CorruptState, "%s: %v", key, err)
	}
	r, err := os.OpenRoot(f.Root)
	if err != nil {
		return fmt.Errorf("open %s: %w", f.Root, err)
	}
	defer r.Close()
	snap, jname := files(key)
	if err := r.MkdirAll(path.Dir(key), 0o755); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	// Journal first: a snapshot with no journal would be adopted as a
	// foreign file, a journal with no snapshot is rebuilt from it.
	if err := replace(r, jname, journal); err != nil {
		return err
	}
	if err := replace(r, snap, snapBytes); err != nil {
		return err
	}
	// The file is the document now, no longer a mirror of it.
	if err := mirror.Forget(f.Root, key); err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	return nil
}

// replace writes name durably: temporary file in the same directory,
// fsync, rename, directory fsync.
func replace(r *os.Root, name string, data []byte) error {
	return atomicfile.Write(r, name, data, 0o644)
}

// Verify opens the file store and verifies the document.
func (f FileTarget) Verify(ctx context.Context, key string) error {
	s, err := file.Open(filepath.Clean(f.Root), file.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Verify(ctx, key)
}
