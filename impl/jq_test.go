package impl

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// TestOutputMatchesJQ is a differential test against jq, which the script
// used to render its output: for 200 random manifests, the text this package
// renders for --get-task, --list-tasks and --summary is what jq prints for
// the same manifest with the script's filters. All manifests go through one
// jq process, as a stream.
func TestOutputMatchesJQ(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq not installed")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	texts := []string{"plain", `quo"te`, "back\\slash", "new\nline", "<&>", "é日本", "tab\t", "pipe|bar", "", "\x01ctl", "$(echo x)"}
	text := func() string { return texts[rng.IntN(len(texts))] }
	var input bytes.Buffer
	var want strings.Builder
	for range 200 {
		m, _ := New("docs/plans/"+text()+".md", "003", text()+"x", time.Date(2026, 2, 22, 10, 0, 0, 0, time.UTC))
		n := 1 + rng.IntN(6)
		for i := range n {
			var bcs []string
			for range rng.IntN(3) {
				bcs = append(bcs, text())
			}
			nt := NewTask{ID: fmt.Sprintf("%d.%d", i%3+1, i), Phase: i%3 + 1, Description: text() + "d", BoundedContexts: bcs}
			if err := m.AddTask(nt, time.Date(2026, 2, 22, 10, i, 0, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			st := Statuses[rng.IntN(len(Statuses))]
			if _, err := m.UpdateStatus(StatusUpdate{ID: nt.ID, Status: st, Branch: text(), CheckResults: text(), Error: text()}, time.Date(2026, 2, 22, 11, 0, 0, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
		}
		pick := m.Tasks[rng.IntN(n)].ID
		m.Extra = jsontext.Value(`{"_pick":` + quote(pick) + `}`)
		raw, err := Encode(m)
		if err != nil {
			t.Fatal(err)
		}
		input.Write(raw)
		input.WriteByte('\n')
		task, _ := m.Task(pick)
		for _, l := range TaskLines(*task) {
			want.WriteString(l + "\n")
		}
		want.WriteString("--\n")
		for _, task := range m.List(Filter{}) {
			want.WriteString(TaskLine(task) + "\n")
		}
		want.WriteString("--\n")
		for _, l := range SummaryLines(m.Summary()) {
			want.WriteString(l + "\n")
		}
		want.WriteString("==\n")
	}
	count := func(s string) string {
		return fmt.Sprintf(`%s: ([.tasks[] | select(.status == "%s")] | length)`, s, s)
	}
	var counts []string
	for _, s := range Statuses {
		counts = append(counts, count(string(s)))
	}
	program := `(. as $m | .tasks[] | select(.id == $m._pick) | to_entries[] | "\(.key)=\(.value)"), "--", ` +
		`(.tasks[] | "\(.id)|\(.phase)|\(.status)|\(.description)"), "--", ` +
		`({plan_title: .plan.title, plan_number: .plan.number, total_phases: (.phases | length), total_tasks: (.tasks | length), ` +
		strings.Join(counts, ", ") + `} | to_entries[] | "\(.key)=\(.value)"), "=="`
	cmd := exec.Command("jq", "-r", program)
	cmd.Stdin = &input
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jq: %v", err)
	}
	if got := want.String(); string(out) != got {
		t.Fatalf("output differs from jq's:\n%s", firstDiff(string(out), got))
	}
}

func firstDiff(jqOut, ours string) string {
	a, b := strings.Split(jqOut, "\n"), strings.Split(ours, "\n")
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("line %d: jq %q, ours %q", i+1, a[i], b[i])
		}
	}
	return fmt.Sprintf("jq has %d lines, ours %d", len(a), len(b))
}

// TestUpdateStatusMatchesJQ is a differential test of --update-status: on
// 300 random manifests and updates, the manifest UpdateStatus produces is
// byte for byte what the script's jq update produces (written here with
// --arg-style inputs instead of the script's string interpolation, which
// is the bug the custodian fixes). Moves out of merged and abandoned, which
// the custodian rejects, are left out.
func TestUpdateStatusMatchesJQ(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq not installed")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	texts := []string{"", "impl/003/1.1", `quo"te`, "new\nline", "<&>", "é", "x | .status = \"merged\""}
	text := func() string { return texts[rng.IntN(len(texts))] }
	now := time.Date(2026, 2, 22, 12, 0, 0, 0, time.UTC)
	var input bytes.Buffer
	var want strings.Builder
	cases := 0
	for cases < 300 {
		m, _ := New("p.md", "003", "T", time.Date(2026, 2, 22, 10, 0, 0, 0, time.UTC))
		n := 1 + rng.IntN(4)
		for i := range n {
			if err := m.AddTask(NewTask{ID: fmt.Sprintf("1.%d", i), Phase: 1, Description: "d"}, time.Date(2026, 2, 22, 10, 0, 0, 0, time.UTC)); err != nil {
				t.Fatal(err)
			}
			m.Tasks[i].Status = Statuses[rng.IntN(len(Statuses))]
			m.Tasks[i].Retries = rng.IntN(3)
		}
		before, _ := Encode(m)
		u := StatusUpdate{ID: m.Tasks[rng.IntN(n)].ID, Status: Statuses[rng.IntN(len(Statuses))], Branch: text(), CheckResults: text(), Error: text()}
		if cur, _ := m.Task(u.ID); cur.Status.Terminal() && cur.Status != u.Status {
			continue
		}
		if _, err := m.UpdateStatus(u, now); err != nil {
			t.Fatal(err)
		}
		after, _ := Encode(m)
		fmt.Fprintf(&input, `{"m":%s,"u":{"id":%s,"status":%s,"branch":%s,"check":%s,"error":%s,"now":%s}}`+"\n",
			before, quote(u.ID), quote(string(u.Status)), quote(u.Branch), quote(u.CheckResults), quote(u.Error), quote(Stamp(now)))
		want.Write(after)
		want.WriteByte('\n')
		cases++
	}
	program := `.u as $u | .m | (.tasks[] | select(.id == $u.id)) |= (
		(if $u.status == "in_progress" and .status == "failed" then .retries = (.retries + 1) else . end)
		| .status = $u.status | .updated_at = $u.now
		| (if $u.branch != "" then .branch = $u.branch else . end)
		| (if $u.check != "" then .check_results = $u.check else . end)
		| (if $u.error != "" then .error = $u.error else . end))`
	cmd := exec.Command("jq", "-c", program)
	cmd.Stdin = &input
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jq: %v", err)
	}
	if string(out) != want.String() {
		t.Fatalf("manifests differ from jq's:\n%s", firstDiff(string(out), want.String()))
	}
}

func quote(s string) string {
	b, _ := jsontext.AppendQuote(nil, s)
	return string(b)
}
