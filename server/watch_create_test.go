package server_test

import (
	"bufio"
	"context"
	"io/fs"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/store"
)

// A watch only reads: a key that is no document is refused (400) and one
// that is a document not written yet streams nothing, and neither creates
// a directory, a lock or any file, wherever the key points (under .git
// included), with or without a token.
func TestAWatchCreatesNothing(t *testing.T) {
	d := start(t, server.Options{Documents: app.DocumentKey}) // no token: reads are open
	files := func() []string {
		var out []string
		filepath.WalkDir(d.dir, func(p string, e fs.DirEntry, err error) error {
			if err == nil && p != d.dir {
				rel, _ := filepath.Rel(d.dir, p)
				out = append(out, filepath.ToSlash(rel))
			}
			return nil
		})
		sort.Strings(out)
		return out
	}
	before := strings.Join(files(), "\n")
	for _, tc := range []struct {
		key    string
		status int
	}{
		{"made/by/a/watch/x.json", http.StatusBadRequest},
		{".git/hooks/x.json", http.StatusBadRequest},
		{"../outside.json", http.StatusBadRequest},
		{".workflow/.cycle/cycle-v1-20261125T120000-abcdef.json", http.StatusOK},
		{".impl/manifest.json", http.StatusOK},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, "GET", d.url+"/v1/watch?key="+tc.key, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tc.status {
			t.Errorf("watch %s: status %d, want %d", tc.key, resp.StatusCode, tc.status)
		}
		if resp.StatusCode == http.StatusOK {
			line, _ := bufio.NewReader(resp.Body).ReadString('\n') // ": watching KEY"
			if !strings.Contains(line, "watching") {
				t.Errorf("watch %s: %q", tc.key, line)
			}
		}
		cancel()
		resp.Body.Close()
		if after := strings.Join(files(), "\n"); after != before {
			t.Errorf("watch %s created files:\n%s\n(before:\n%s)", tc.key, after, before)
			before = after
		}
	}
	// A watch of a document not written yet still sees its first commit.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", d.url+"/v1/watch?key=.impl/manifest.json", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, _ := br.ReadString('\n'); !strings.Contains(line, "watching") {
		t.Fatalf("watch: %q", line)
	}
	if _, err := d.st.Update(ctx, ".impl/manifest.json", func(store.Document) (store.Change, error) {
		return store.Change{Value: []byte(`{"a":1}`), Actor: "t"}, nil
	}, store.Create()); err != nil {
		t.Fatal(err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before the first commit: %v", err)
		}
		if strings.HasPrefix(line, "event: commit") {
			break
		}
	}
	cancel()
	http.DefaultClient.CloseIdleConnections()
}
