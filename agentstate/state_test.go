package agentstate

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/custodian-dev/custodian/reason"
)

var t0 = time.Date(2026, 1, 29, 10, 0, 0, 0, time.UTC)

type tb interface {
	Helper()
	Fatal(args ...any)
}

func mustJSON(t tb, o any) string {
	t.Helper()
	b, err := Encode(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustObject(t testing.TB, s string) Object {
	t.Helper()
	o, err := DecodeObject([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestInitIsSchemaV2(t *testing.T) {
	st, err := Init("Add auth", t0)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"version":2,"task":"Add auth","status":"in_progress","currentStage":"EXPLORE","currentPhase":"0",` +
		`"stages":{"EXPLORE":{"status":"pending","agentCount":0},"PLAN":{"status":"pending","phases":{},"restartCount":0},` +
		`"IMPLEMENT":{"status":"pending","phases":{},"restartCount":0},"TEST":{"status":"pending","enabled":true,"restartCount":0},` +
		`"FINAL":{"status":"pending","restartCount":0}},"files":{},"failure":null,"compaction":{"lastCompactedAt":null,"history":[]},` +
		`"startedAt":"2026-01-29T10:00:00Z","updatedAt":null,"stoppedAt":null}`
	if got := mustJSON(t, st); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if err := Validate(st); err != nil {
		t.Fatal(err)
	}
	if _, err := Init("  ", t0); reason.CodeOf(err) != reason.InvalidInput {
		t.Fatalf("blank task: %v", err)
	}
}

func TestTreeKeepsOrderAndValues(t *testing.T) {
	in := `{"z":1,"a":{"y":[1,"two",null,true,{"k":1.50}],"b":"<&>"},"m":-0.0,"a2":"é\n"}`
	o := mustObject(t, in)
	if got := mustJSON(t, o); got != in {
		t.Fatalf("got %s", got)
	}
	dup := mustObject(t, `{"a":1,"b":2,"a":3}`)
	if got := mustJSON(t, dup); got != `{"a":3,"b":2}` {
		t.Fatalf("duplicate keys: %s", got)
	}
	for _, bad := range []string{``, `[]`, `{"a":}`, `{} x`, strings.Repeat("[", 70) + strings.Repeat("]", 70)} {
		if _, err := DecodeObject([]byte(bad)); err == nil {
			t.Errorf("DecodeObject(%q) accepted", bad)
		}
	}
}

func TestMerge(t *testing.T) {
	cases := []struct{ base, patch, want string }{
		{`{"a":1,"b":{"c":1,"d":2}}`, `{"b":{"d":3,"e":4}}`, `{"a":1,"b":{"c":1,"d":3,"e":4}}`},
		{`{"a":[1,2]}`, `{"a":[3]}`, `{"a":[3]}`},
		{`{"a":{"b":1}}`, `{"a":null}`, `{"a":null}`},
		{`{"a":null}`, `{"a":{"b":1}}`, `{"a":{"b":1}}`},
		{`{"a":1}`, `{}`, `{"a":1}`},
		{`{"a":{"b":{"c":{"d":1}}}}`, `{"a":{"b":{"c":{"e":2}}},"f":true}`, `{"a":{"b":{"c":{"d":1,"e":2}}},"f":true}`},
	}
	for _, c := range cases {
		base := mustObject(t, c.base)
		got := mustJSON(t, Merge(base, mustObject(t, c.patch)))
		if got != c.want {
			t.Errorf("Merge(%s, %s) = %s, want %s", c.base, c.patch, got, c.want)
		}
		if mustJSON(t, base) != c.base {
			t.Errorf("Merge modified its base: %s", mustJSON(t, base))
		}
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name  string
		patch string
		want  string // "" valid
	}{
		{"ok stage move", `{"currentStage":"PLAN","currentPhase":"1.1","stages":{"PLAN":{"status":"in_progress","phases":{"1.1":{"status":"completed"}}}}}`, ""},
		{"numeric phase", `{"currentPhase":2.1}`, ""},
		{"extra fields kept", `{"worktree":"/w","reviewFix":{"issues":[]}}`, ""},
		{"null stage and phase", `{"currentStage":null,"currentPhase":null}`, ""},
		{"bad status", `{"status":"done"}`, `status "done" is not a status`},
		{"bad stage", `{"currentStage":"DEPLOY"}`, `currentStage "DEPLOY" is not a stage`},
		{"bad phase", `{"currentPhase":"5.1"}`, `currentPhase "5.1" is not a phase`},
		{"unknown stage", `{"stages":{"DEPLOY":{"status":"pending"}}}`, `stage "DEPLOY" does not exist`},
		{"stage status", `{"stages":{"TEST":{"status":"green"}}}`, `stages.TEST.status "green" is not a status`},
		{"phase of another stage", `{"stages":{"PLAN":{"phases":{"2.1":{}}}}}`, `phase "2.1" is not a phase of PLAN`},
		{"negative count", `{"stages":{"PLAN":{"restartCount":-1}}}`, `stages.PLAN.restartCount -1 is not a whole number`},
		{"enabled string", `{"stages":{"TEST":{"enabled":"yes"}}}`, `stages.TEST.enabled must be true or false`},
		{"files not paths", `{"files":{"1.1":3}}`, `files["1.1"] must be a path`},
		{"version", `{"version":3}`, `version must be 2`},
		{"timestamp", `{"stoppedAt":"yesterday"}`, `stoppedAt "yesterday" is not an RFC 3339 timestamp`},
		{"failure phase", `{"failure":{"phase":"9","error":"x"}}`, `failure.phase "9" is not a phase`},
		{"history", `{"compaction":{"history":{}}}`, `compaction.history must be an array`},
		{"two problems", `{"status":"x","currentStage":"y"}`, `status "x" is not a status (pending, in_progress, stopped, completed, failed, blocked, restarting, skipped); currentStage "y"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, _ := Init("t", t0)
			next, err := Update(st, mustObject(t, c.patch), t0.Add(time.Minute))
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if v, _ := next.Get("updatedAt"); v != "2026-01-29T10:01:00Z" {
					t.Errorf("updatedAt = %v", v)
				}
				return
			}
			if reason.CodeOf(err) != reason.InvalidInput || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want INVALID_INPUT containing %q", err, c.want)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	st, _ := Init("t", t0)
	raw := mustJSON(t, st)
	if _, err := Decode([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	cases := map[string]reason.Code{
		`{"version": 2`:                   reason.CorruptState,
		`[1]`:                             reason.CorruptState,
		`{"version": 3, "plugin":"ants"}`: reason.InvalidInput,
		`{"version": "2"}`:                reason.InvalidInput,
		`{"task": "x"}`:                   reason.InvalidInput,
	}
	for in, code := range cases {
		if _, err := Decode([]byte(in)); reason.CodeOf(err) != code {
			t.Errorf("Decode(%s): %v, want %s", in, err, code)
		}
	}
	// A state with a bad value still decodes (an update can repair it).
	if _, err := Decode([]byte(`{"version":2,"status":"weird"}`)); err != nil {
		t.Errorf("bad value refused on read: %v", err)
	}
}

func TestRecordOutputAndFailure(t *testing.T) {
	st, _ := Init("t", t0)
	p, err := OutputPath("2.1", "json")
	if err != nil || p != ".agents/tmp/phases/2.1-output.json" {
		t.Fatalf("OutputPath = %q, %v", p, err)
	}
	for _, bad := range [][2]string{{"2.4", "md"}, {"", "md"}, {"../x", "md"}, {"1.1", "m/d"}, {"1.1", ""}, {"1.1", "md.sh"}} {
		if _, err := OutputPath(bad[0], bad[1]); reason.CodeOf(err) != reason.InvalidInput {
			t.Errorf("OutputPath(%q, %q) err %v", bad[0], bad[1], err)
		}
	}
	st, err = RecordOutput(st, "2.1", p, t0)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := Lookup(st, "files.2.1"); v != p {
		t.Fatalf("files.2.1 = %v", v)
	}
	ctx := mustObject(t, `{"completedTasks":["task-1","task-2"],"failedTask":"task-3","pendingTasks":["task-4","task-5"]}`)
	st, err = RecordFailure(st, Failure{Phase: "2.1", Error: "Task agent timeout on task-3", Context: ctx}, t0.Add(15*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	f, _ := st.Get("failure")
	want := `{"phase":"2.1","error":"Task agent timeout on task-3","failedAt":"2026-01-29T10:15:00Z","context":{"completedTasks":["task-1","task-2"],"failedTask":"task-3","pendingTasks":["task-4","task-5"]}}`
	if got := mustJSON(t, f); got != want {
		t.Fatalf("failure = %s", got)
	}
	if s, _ := st.Get("status"); s != "failed" {
		t.Fatalf("status = %v", s)
	}
	if _, err := RecordFailure(st, Failure{Phase: "7", Error: "x"}, t0); reason.CodeOf(err) != reason.InvalidInput {
		t.Errorf("bad phase: %v", err)
	}
	if _, err := RecordFailure(st, Failure{Phase: "0"}, t0); reason.CodeOf(err) != reason.InvalidInput {
		t.Errorf("no error text: %v", err)
	}
}

func TestCompact(t *testing.T) {
	st, _ := Init("t", t0)
	st, err := Compact(st, "", t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	st, err = Update(st, mustObject(t, `{"currentStage":"PLAN","currentPhase":"1.2"}`), t0.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	st, err = Compact(st, "plan drafted", t0.Add(3*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := st.Get("compaction")
	want := `{"lastCompactedAt":"2026-01-29T13:00:00Z","history":[{"compactedAt":"2026-01-29T11:00:00Z","stage":"EXPLORE","phase":"0"},{"compactedAt":"2026-01-29T13:00:00Z","stage":"PLAN","phase":"1.2","summary":"plan drafted"}]}`
	if got := mustJSON(t, c); got != want {
		t.Fatalf("compaction = %s", got)
	}
	broken := mustObject(t, `{"version":2,"compaction":{"history":"x"}}`)
	if _, err := Compact(broken, "", t0); reason.CodeOf(err) != reason.InvalidInput {
		t.Errorf("broken history: %v", err)
	}
}

func TestLookup(t *testing.T) {
	st := mustObject(t, `{"a":{"b":[1]},"files":{"2.1":"p","2":{"1":"q"}},"x.y":1}`)
	cases := map[string]string{"a.b": `[1]`, "files.2.1": `"p"`, "files.2": `{"1":"q"}`, "x.y": `1`, "": mustJSON(t, st)}
	for path, want := range cases {
		v, err := Lookup(st, path)
		if err != nil || mustJSON(t, v) != want {
			t.Errorf("Lookup(%q) = %s, %v; want %s", path, mustJSON(t, v), err, want)
		}
	}
	for _, bad := range []string{"nope", "a.c", "a.b.c"} {
		if _, err := Lookup(st, bad); reason.CodeOf(err) != reason.NotFound {
			t.Errorf("Lookup(%q) err %v", bad, err)
		}
	}
}

// TestMergeProperties: merging is idempotent, never drops a base key a
// patch does not name, and the result holds every leaf of the patch.
func TestMergeProperties(t *testing.T) {
	keys := rapid.SampledFrom([]string{"a", "b", "c", "status", "stages"})
	var gen func(depth int) *rapid.Generator[any]
	gen = func(depth int) *rapid.Generator[any] {
		return rapid.Custom(func(rt *rapid.T) any {
			k := rapid.IntRange(0, 4).Draw(rt, "kind")
			if depth > 2 {
				k = rapid.IntRange(0, 2).Draw(rt, "leaf")
			}
			switch k {
			case 0:
				return rapid.SampledFrom([]any{"x", "y", nil, true}).Draw(rt, "s")
			case 1:
				return json.Number(rapid.SampledFrom([]string{"0", "1", "2.5"}).Draw(rt, "n"))
			case 2:
				return []any{"l"}
			}
			var o Object
			for range rapid.IntRange(0, 3).Draw(rt, "len") {
				o.Set(keys.Draw(rt, "k"), gen(depth+1).Draw(rt, "v"))
			}
			if o == nil {
				o = Object{}
			}
			return o
		})
	}
	objGen := rapid.Custom(func(rt *rapid.T) Object {
		var o Object
		for range rapid.IntRange(0, 4).Draw(rt, "len") {
			o.Set(keys.Draw(rt, "k"), gen(1).Draw(rt, "v"))
		}
		if o == nil {
			o = Object{}
		}
		return o
	})
	rapid.Check(t, func(rt *rapid.T) {
		base, patch := objGen.Draw(rt, "base"), objGen.Draw(rt, "patch")
		once := Merge(base, patch)
		twice := Merge(once, patch)
		b1, _ := Encode(once)
		b2, _ := Encode(twice)
		if !bytes.Equal(b1, b2) {
			rt.Fatalf("not idempotent:\n%s\n%s", b1, b2)
		}
		out := once.(Object)
		for _, f := range base {
			if _, named := patch.Get(f.Key); !named {
				v, ok := out.Get(f.Key)
				if !ok || mustJSON(rt, v) != mustJSON(rt, f.Value) {
					rt.Fatalf("base key %q changed", f.Key)
				}
			}
		}
		for _, f := range patch {
			v, _ := out.Get(f.Key)
			if _, isObj := f.Value.(Object); !isObj && mustJSON(rt, v) != mustJSON(rt, f.Value) {
				rt.Fatalf("patch value of %q lost", f.Key)
			}
		}
	})
}

func FuzzDecodeObject(f *testing.F) {
	st, _ := Init("seed", t0)
	raw, _ := Encode(st)
	f.Add(raw)
	f.Add([]byte(`{"a":{"b":[1,2,{"c":null}]},"d":"\u00e9<"}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := DecodeObject(data)
		if err != nil {
			return
		}
		b1, err := Encode(o)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		if !json.Valid(b1) {
			t.Fatalf("invalid JSON out: %s", b1)
		}
		o2, err := DecodeObject(b1)
		if err != nil {
			t.Fatalf("re-decode %s: %v", b1, err)
		}
		b2, _ := Encode(o2)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("unstable: %s vs %s", b1, b2)
		}
		// Whatever decodes can be validated and merged without panicking.
		_ = Validate(o)
		_ = Merge(o, o)
		if st, err := Decode(data); err == nil {
			_, _ = Update(st, o, t0)
			_, _ = Compact(st, "s", t0)
		}
	})
}

func FuzzLookup(f *testing.F) {
	f.Add("stages.PLAN.status")
	f.Add("files.2.1")
	f.Add("..a..")
	f.Add("")
	st, _ := Init("fuzz", t0)
	st.Set("files", Object{{"2.1", "p"}, {"2", Object{{"1", "q"}}}})
	f.Fuzz(func(t *testing.T, path string) {
		v, err := Lookup(st, path)
		if err != nil {
			if reason.CodeOf(err) != reason.NotFound {
				t.Fatalf("error without NOT_FOUND: %v", err)
			}
			return
		}
		// What a path finds is part of the state.
		if _, err := Encode(v); err != nil {
			t.Fatalf("found an unencodable value: %v", err)
		}
	})
}

// The tree is written as the previous releases wrote it (encoding/json for
// each scalar, HTML characters unescaped, keys in order), and read back to
// the same tree.
func TestTreeEncodingUnchanged(t *testing.T) {
	fixture, err := os.ReadFile("../app/testdata/prev-release/.agents/tmp/state.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		string(fixture),
		`{"b":1,"a":[1.50,-0,1E5,2e-7,12345678901234567890],"s":"<&> \u2028 \u2029 é \" \\ \/ \b\f\n\r\t \u0001 \u007f","n":null,"t":true,"f":false}`,
		`{"dup":1,"x":{},"dup":{"z":[]},"":"empty key","wörld":"\ud83d\ude00"}`,
		"{\"bad\":\"\xff\xfe\"}",
	} {
		o, err := DecodeObject([]byte(in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		got, err := Encode(o)
		if err != nil {
			t.Fatal(err)
		}
		if want := legacyEncode(t, o); string(got) != want {
			t.Errorf("Encode:\n got %s\nwant %s", got, want)
		}
		back, err := DecodeObject(got)
		if err != nil || !reflect.DeepEqual(back, o) {
			t.Errorf("%s read back as %v, %v", got, back, err)
		}
	}
	if _, err := Encode(Object{{"n", json.Number("1.2.3")}}); err == nil {
		t.Error("an invalid number literal was written")
	}
}

// legacyEncode is the previous releases' writer: encoding/json (without
// HTML escaping) for each scalar.
func legacyEncode(t *testing.T, v any) string {
	switch x := v.(type) {
	case Object:
		var parts []string
		for _, f := range x {
			parts = append(parts, legacyEncode(t, f.Key)+":"+legacyEncode(t, f.Value))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, legacyEncode(t, e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
