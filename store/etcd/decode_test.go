package etcd

import (
	"bytes"
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

func FuzzDecodeDoc(f *testing.F) {
	f.Add([]byte("{\"rev\":3,\"hash\":\"sha256:ab\",\"sum\":\"sha256:cd\"}\n{\n  \"a\": 1\n}\n"))
	f.Add([]byte("{\"rev\":0}\n{}"))
	f.Add([]byte("no header"))
	f.Add([]byte("{\"rev\":1,\"extra\":1}\n{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, v, err := decodeDoc("k.json", b)
		if err != nil {
			if reason.CodeOf(err) != reason.CorruptState {
				t.Fatalf("error without CORRUPT_STATE: %v", err)
			}
			return
		}
		if h.Rev == 0 {
			t.Fatal("accepted revision 0")
		}
		again, err := encodeDoc(h, v)
		if err != nil {
			t.Fatal(err)
		}
		h2, v2, err := decodeDoc("k.json", again)
		if err != nil || h2 != h || !bytes.Equal(v2, v) {
			t.Fatalf("re-encoded document does not decode the same: %v", err)
		}
	})
}

func FuzzRevOfJournalKey(f *testing.F) {
	f.Add([]byte("/p/journal/a.json//00000000000000000042"))
	f.Add([]byte("/p/journal/a.json/00000000000000000042"))
	f.Add([]byte("//"))
	f.Fuzz(func(t *testing.T, k []byte) {
		n, ok := revOfJournalKey(k)
		if !ok {
			return
		}
		s := &Store{prefix: "/p/"}
		if got, ok := revOfJournalKey([]byte(s.journalKey("a.json", n))); !ok || got != n {
			t.Fatalf("journal key of revision %d parses to %d", n, got)
		}
	})
}
