package wire

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/cycle"
	"github.com/custodian-dev/custodian/reason"
)

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// Every field of every operation body, nested ones too, has a snake_case
// JSON name.
func TestOperationFieldsAreSnakeCase(t *testing.T) {
	var check func(op string, t0 reflect.Type, seen map[reflect.Type]bool)
	check = func(op string, typ reflect.Type, seen map[reflect.Type]bool) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || seen[typ] || typ.PkgPath() == "time" {
			return
		}
		seen[typ] = true
		for f := range typ.Fields() {
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !snakeCase.MatchString(name) {
				t.Errorf("%s: %s.%s has JSON name %q, want snake_case", op, typ.Name(), f.Name, name)
			}
			check(op, f.Type, seen)
		}
	}
	for _, name := range ASDDOps() {
		typ, ok := ASDDOpType(name)
		if !ok {
			t.Fatalf("no type for %s", name)
		}
		check(name, typ, map[reflect.Type]bool{})
	}
	for name := range cycleOps {
		typ, _ := CycleOpType(name)
		check("cycle "+name, typ, map[reflect.Type]bool{})
	}
}

// A body from the previous release, which named an operation's fields by
// their Go names, still decodes; what is refused stays refused.
func TestPreviousReleaseFieldNames(t *testing.T) {
	seven := 7
	for _, tc := range []struct {
		op, body string
		want     asdd.Op
	}{
		{"propose", `{"Agent":"spec","Slice":"S","Score":0.9,"BaseRevision":7,"FeatureBranch":"f","Retro":{"Validated":7}}`,
			asdd.Proposal{Agent: "spec", Slice: "S", Score: 0.9, BaseRevision: 7, FeatureBranch: "f", Retro: &asdd.Retro{Validated: &seven}}},
		{"propose", `{"agent":"spec","slice":"S","score":0.9,"base_revision":7,"feature_branch":"f"}`,
			asdd.Proposal{Agent: "spec", Slice: "S", Score: 0.9, BaseRevision: 7, FeatureBranch: "f"}},
		{"add-slice", `{"ID":"S","GovernanceMode":"MANUAL"}`, asdd.AddSlice{ID: "S", GovernanceMode: "MANUAL"}},
		{"heartbeat", `{"Agent":"a","Status":"ACTIVE","Wave":7}`, asdd.Beat{Agent: "a", Status: "ACTIVE", Wave: &seven}},
	} {
		got, err := DecodeASDDOp(tc.op, []byte(tc.body))
		if err != nil {
			t.Errorf("%s %s: %v", tc.op, tc.body, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s: decoded %#v, want %#v", tc.op, tc.body, got, tc.want)
		}
	}
	got, err := DecodeCycleOp("exploration", []byte(`{"ArchitectureSummary":"layers","IdentifiedRisks":["r"]}`))
	if want := (cycle.SetExploration{ArchitectureSummary: "layers", IdentifiedRisks: []string{"r"}}); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("cycle exploration: %#v, %v; want %#v", got, err, want)
	}
	for _, body := range []string{
		`{"BaseRevision":1} x`,                       // trailing data
		`{"BaseRevision":1,"base_revision":2}`,       // the same field twice
		`{"BaseRevision":1,"Nope":2}`,                // unknown
		"{\"BaseRevision\":1,\"Agent\":\"\xff\"}",    // invalid UTF-8
		`{"BaseRevision":1,"Agent":"a","agent":"b"}`, // duplicate in any case
	} {
		if _, err := DecodeASDDOp("propose", []byte(body)); reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("%q: %v, want INVALID_INPUT", body, err)
		}
	}
}
