package runner

import (
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/reason"
)

func TestParseResult(t *testing.T) {
	for _, c := range []struct {
		name  string
		out   string
		ok    bool
		err   bool
		check func(*Result) bool
	}{
		{"whole output", `{"score": 0.9, "uncertainty_factors": ["x"]}`, true, false, func(r *Result) bool { return *r.Score == 0.9 && r.Uncertainty[0] == "x" }},
		{"last line after chatter", "thinking…\n{\"log\": 1}\nmore\n{\"score\": 1, \"artifacts\": {\"intent\": \"a.md\"}}\n", true, false, func(r *Result) bool { return r.Artifacts["intent"] == "a.md" }},
		{"indented whole object", "{\n  \"score\": 0.5,\n  \"to\": \"PARTIAL\"\n}\n", true, false, func(r *Result) bool { return r.To == "PARTIAL" }},
		{"tasks", `{"score": 0.97, "tasks": [{"id": "T1", "wave": 1}, {"id": "T2", "wave": 2, "depends_on": ["T1"]}]}`, true, false, func(r *Result) bool { return len(r.Tasks) == 2 && r.Tasks[1].DependsOn[0] == "T1" }},
		{"halt", `{"halt": {"mode": "HALLUCINATED_SPEC_SECTION", "reason": "REQ-4 uses Settlement", "flag": ["REQ-4"]}}`, true, false, func(r *Result) bool { return r.Halt.Flag[0] == "REQ-4" }},
		{"no result", "all done\n", false, false, nil},
		{"empty", "", false, false, nil},
		{"other JSON", `{"log": "x"}`, false, false, nil},
		{"no score", `{"artifacts": {"a": "b"}, "score": null}`, true, true, nil},
		{"score out of range", `{"score": 1.5}`, true, true, nil},
		{"negative score", `{"score": -0.1}`, true, true, nil},
		{"unknown member", `{"score": 0.9, "scroe": 1}`, true, true, nil},
		{"broken result", `{"score": 0.9,`, true, true, nil},
		{"task without id", `{"score": 0.9, "tasks": [{"wave": 1}]}`, true, true, nil},
		{"task wave 0", `{"score": 0.9, "tasks": [{"id": "T", "wave": 0}]}`, true, true, nil},
		{"task twice", `{"score": 0.9, "tasks": [{"id": "T", "wave": 1}, {"id": "T", "wave": 1}]}`, true, true, nil},
		{"task on itself", `{"score": 0.9, "tasks": [{"id": "T", "wave": 1, "depends_on": ["T"]}]}`, true, true, nil},
		{"halt without reason", `{"halt": {"mode": "X"}}`, true, true, nil},
		{"empty artifact", `{"score": 0.9, "artifacts": {"a": ""}}`, true, true, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, ok, err := ParseResult([]byte(c.out))
			if ok != c.ok || (err != nil) != c.err {
				t.Fatalf("ok %v err %v, want ok %v err %v", ok, err, c.ok, c.err)
			}
			if err != nil && reason.CodeOf(err) != reason.InvalidInput {
				t.Errorf("error code %v", err)
			}
			if c.check != nil && !c.check(r) {
				t.Errorf("result %+v", r)
			}
		})
	}
}

func FuzzParseResult(f *testing.F) {
	for _, s := range []string{`{"score": 0.9}`, "x\n{\"score\":1,\"tasks\":[{\"id\":\"a\",\"wave\":1}]}", `{"halt":{"mode":"m","reason":"r"}}`, "{", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok, err := ParseResult(b)
		switch {
		case err != nil:
			if !ok || r != nil || reason.CodeOf(err) != reason.InvalidInput {
				t.Fatalf("error %v with ok %v r %v", err, ok, r)
			}
		case ok:
			if r.Halt == nil && (r.Score == nil || *r.Score < 0 || *r.Score > 1) {
				t.Fatalf("accepted %+v", r)
			}
			_ = r.String()
		default:
			if r != nil {
				t.Fatal("a result with ok false")
			}
		}
	})
}

func TestRequirementText(t *testing.T) {
	doc := `# Requirements

## REQ-001 Login
WHEN a user submits valid credentials THE SYSTEM SHALL sign them in.
- see REQ-002 for lockout

## REQ-002 Lockout
WHEN five attempts fail THE SYSTEM SHALL lock the account.

## Notes
REQ-0010 is not REQ-001.
`
	got := RequirementText([]byte(doc), "REQ-001")
	if !strings.HasPrefix(got, "## REQ-001 Login") || !strings.Contains(got, "see REQ-002") || strings.Contains(got, "five attempts") {
		t.Errorf("REQ-001:\n%s", got)
	}
	if got := RequirementText([]byte(doc), "REQ-002"); !strings.Contains(got, "five attempts") || strings.Contains(got, "Notes") {
		t.Errorf("REQ-002:\n%s", got)
	}
	list := "- REQ-1: one\n  more of one\n- REQ-2: two\n"
	if got := RequirementText([]byte(list), "REQ-1"); got != "- REQ-1: one\n  more of one" {
		t.Errorf("list item: %q", got)
	}
	if got := RequirementText([]byte(doc), "REQ-9"); got != "" {
		t.Errorf("missing: %q", got)
	}
}

func TestDomainTerms(t *testing.T) {
	doc := `# Domain model
- Aggregate: not a term outside the section

## Ubiquitous language
- **Settlement**: the transfer of funds that closes a trade
- Ledger — the book of record
* ` + "`Account`" + `: who holds funds
| Term | Definition |
|------|------------|
| Trade | an agreed exchange |

## Aggregates
- Order: not in the language section
`
	terms := DomainTerms([]byte(doc))
	var names []string
	for _, x := range terms {
		names = append(names, x.Term+"="+x.Definition)
	}
	want := "Settlement=the transfer of funds that closes a trade|Ledger=the book of record|Account=who holds funds|Trade=an agreed exchange"
	if strings.Join(names, "|") != want {
		t.Errorf("terms\n got %s\nwant %s", strings.Join(names, "|"), want)
	}
	if got := Applicable(terms, "Repository for settlement records"); len(got) != 1 || got[0].Term != "Settlement" {
		t.Errorf("applicable: %+v", got)
	}
	if got := Applicable(terms, ""); len(got) != 4 {
		t.Errorf("no focus: %+v", got)
	}
	if got := DomainTerms([]byte("- A: a\n- B: b\n")); len(got) != 2 {
		t.Errorf("no section: %+v", got)
	}
}

func FuzzRequirementText(f *testing.F) {
	f.Add([]byte("## REQ-1 x\ntext\n## REQ-2\n"), "REQ-1")
	f.Add([]byte("- REQ-1: a\n"), "REQ-1")
	f.Fuzz(func(t *testing.T, doc []byte, id string) {
		got := RequirementText(doc, id)
		if len(got) > maxRequirement {
			t.Fatalf("%d bytes", len(got))
		}
		if got != "" && !strings.Contains(string(doc), strings.TrimSpace(strings.SplitN(got, "\n", 2)[0])) {
			t.Fatalf("text not from the document: %q", got)
		}
	})
}

func FuzzDomainTerms(f *testing.F) {
	f.Add([]byte("## Ubiquitous language\n- **A**: a\n| T | D |\n|--|--|\n| B | b |\n"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		terms := DomainTerms(doc)
		if len(terms) > maxTerms {
			t.Fatalf("%d terms", len(terms))
		}
		seen := map[string]bool{}
		for _, x := range terms {
			k := strings.ToLower(x.Term)
			if x.Term == "" || seen[k] {
				t.Fatalf("term %q empty or twice", x.Term)
			}
			seen[k] = true
		}
	})
}
