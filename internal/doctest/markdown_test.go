package doctest

import (
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	doc := "# Title\n\n```sh\ncustodian init\n```\n\n<!-- doctest: timeout 2m; skip needs etcd; a cluster -->\n```sh\ncustodian --store etcd://x status\n```\n\n  - item\n\n    ```console\n    $ custodian version\n    custodian …\n    $ custodian foo \\\n      bar\n    custodian: …\n    [exit 2]\n    ```\n\n```\nbare\n```\n"
	blocks, err := Parse("x.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 4 {
		t.Fatalf("%d blocks: %+v", len(blocks), blocks)
	}
	if b := blocks[0]; b.Line != 3 || b.Lang != "sh" || !b.Runs() || strings.Join(b.Body, "|") != "custodian init" {
		t.Errorf("block 0: %+v", b)
	}
	if b := blocks[1]; b.Runs() || b.Do.Skip != "needs etcd; a cluster" || b.Do.Timeout != 2*time.Minute {
		t.Errorf("block 1: %+v", b)
	}
	cmds, err := blocks[2].Commands()
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 2 || cmds[0].Text != "custodian version" || cmds[1].Text != "custodian foo \n  bar" || cmds[1].Exit != 2 || len(cmds[1].Want) != 1 || cmds[0].Line != 15 {
		t.Errorf("commands: %+v", cmds)
	}
	if b := blocks[3]; b.Lang != "" || b.Runs() {
		t.Errorf("bare block: %+v", b)
	}
	for _, bad := range []string{"<!-- doctest: skip -->\n```sh\nx\n```\n", "<!-- doctest: nonsense -->\n```sh\nx\n```\n", "```sh\nnever closed\n"} {
		if _, err := Parse("bad.md", bad); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		want, got string
		ok        bool
	}{
		{"a\nb", "a\nb\n", true},
		{"a\nb", "a\nc", false},
		{"revision …: added", "revision 12: added", true},
		{"a\n…\nz", "a\nb\nc\nz", true},
		{"a\n…\nz", "a\nz", true},
		{"a\n…", "a\nb", true},
		{"a", "a\nextra", false},
		{"x  ", "x", true},
		{"(a.b)", "(aXb)", false},
	} {
		if got := Match(strings.Split(tc.want, "\n"), strings.Split(tc.got, "\n")); got != tc.ok {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.want, tc.got, got, tc.ok)
		}
	}
}

func TestIndentedCommands(t *testing.T) {
	doc := "text\n\n    custodian init\n    custodian status\n\n- a list\n    custodian in a list item\n\n```sh\n    custodian fenced\n```\n"
	if got := IndentedCommands(doc); len(got) != 2 || got[0] != 3 || got[1] != 4 {
		t.Errorf("IndentedCommands = %v, want [3 4]", got)
	}
}
