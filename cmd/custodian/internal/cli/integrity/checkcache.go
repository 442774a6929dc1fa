package integrity

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/custodian-dev/custodian/reconcile"
)

// What check needs from the manifest — the artifacts with their recorded
// hashes, each slice's status and review marks — is kept between runs in
// .asdd/state/checkcache, stamped with the metadata of the manifest and its
// journal. Every commit appends to the journal (its size grows), and a
// snapshot rewrite replaces the manifest file (a new inode), so while both
// stamps match, the committed state is the one the cache was made from and
// a warm check need not load, validate and decode the manifest again. The
// cache is advisory: a missing, damaged or stale one means loading the
// manifest through the store as usual; --full never uses it.

// CheckCachePath is where the check input cache lives.
var CheckCachePath = path.Join(path.Dir(asdd.Key), "checkcache")

const checkCacheVersion = 2 // 2: slices' duplicate chain agents

// checkInput is what a check takes from the manifest.
type checkInput struct {
	Revision      uint64
	Slices        []checkInputSlice
	ProjectReview []string
	Artifacts     []reconcile.Artifact
}

type checkInputSlice struct {
	ID, Status  string
	NeedsReview []string
	// DuplicateChain lists agents with two current chain entries.
	DuplicateChain []string
}

// checkCacheFile is the cache's content.
type checkCacheFile struct {
	Version  int
	Manifest reconcile.Stamp
	Journal  reconcile.Stamp
	Input    checkInput
}

func inputOf(m *asdd.Manifest) *checkInput {
	in := &checkInput{Revision: m.Revision, ProjectReview: m.ProjectContext.NeedsHumanReview}
	for _, s := range m.Slices {
		in.Slices = append(in.Slices, checkInputSlice{ID: s.SliceID, Status: s.Status, NeedsReview: s.NeedsHumanReview, DuplicateChain: s.DuplicateChainAgents()})
		in.Artifacts = append(in.Artifacts, sliceArtifacts(s)...)
	}
	return in
}

// stateStamps stamps the manifest and its live journal; ok is false when
// the manifest is missing or either cannot be stat'ed. A journal just
// sealed into a segment is absent until the next commit creates it: its
// stamp is then the zero stamp (the next commit changes it).
func stateStamps(root *os.Root) (m, j reconcile.Stamp, ok bool) {
	mi, err := root.Stat(manifestFile)
	if err != nil {
		return m, j, false
	}
	if ji, err := root.Stat(JournalFile); err == nil {
		j = reconcile.StampOf(ji)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return m, j, false
	}
	return reconcile.StampOf(mi), j, true
}

// encodeCheckCache and decodeCheckCache are the cache's format (gob).
func encodeCheckCache(c *checkCacheFile) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(c); err != nil {
		return nil, fmt.Errorf("encode check cache: %w", err)
	}
	return buf.Bytes(), nil
}

// maxCheckCache bounds what decodeCheckCache reads.
const maxCheckCache = 256 << 20

func decodeCheckCache(b []byte) (*checkCacheFile, error) {
	if len(b) > maxCheckCache {
		return nil, errors.New("check cache too large")
	}
	var c checkCacheFile
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&c); err != nil {
		return nil, fmt.Errorf("decode check cache: %w", err)
	}
	if c.Version != checkCacheVersion {
		return nil, fmt.Errorf("check cache version %d", c.Version)
	}
	return &c, nil
}

// loadCheckInput returns what the check needs from the manifest: from the
// cache when the state files are as they were, else through the store
// (which also recovers them), refreshing the cache.
func loadCheckInput(ctx context.Context, app *cmdutil.App, root *os.Root, full, readOnly bool) (*checkInput, error) {
	ms, js, stamped := stateStamps(root)
	if stamped && !full {
		if b, err := root.ReadFile(CheckCachePath); err == nil {
			if c, err := decodeCheckCache(b); err == nil && c.Manifest == ms && c.Journal == js {
				return &c.Input, nil
			}
		}
	}
	m, err := cmdutil.LoadManifest(ctx, app)
	if err != nil {
		return nil, err
	}
	in := inputOf(m)
	// Stamps taken before the load: a commit in between makes them stale,
	// never wrong. A load that recovered the files changed them too.
	if ms2, js2, ok := stateStamps(root); !readOnly && stamped && ok && ms2 == ms && js2 == js {
		if b, err := encodeCheckCache(&checkCacheFile{Version: checkCacheVersion, Manifest: ms, Journal: js, Input: *in}); err == nil {
			tmp := CheckCachePath + ".tmp-" + strconv.FormatUint(rand.Uint64(), 36)
			if err := root.WriteFile(tmp, b, 0o644); err == nil {
				if err := root.Rename(tmp, CheckCachePath); err != nil {
					_ = root.Remove(tmp)
				}
			}
		}
	}
	return in, nil
}
