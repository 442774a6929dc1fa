package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/custodian-dev/custodian/asdd"
)

// Random pipelines, cut short at a random agent start (as a runner that
// dies there), then run again from the committed state: no agent ever
// starts for a phase it has a committed run of, no sub-agent for a task
// already done, and the second run leaves no slice with work it could do.
func TestPropertyNeverRepeatsCommittedWork(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := testConfig(time.Minute)
		nSlices := rapid.IntRange(1, 3).Draw(rt, "slices")
		ids := make([]string, nSlices)
		for i := range ids {
			ids[i] = fmt.Sprintf("S%d", i)
		}
		st := newMemState(t, cfg, ids...)
		scores := map[string]float64{}
		tasks := map[string]string{}
		for _, id := range ids {
			for _, a := range cfg.Agents {
				scores[id+"/"+a.Name] = rapid.SampledFrom([]float64{0.97, 0.97, 0.97, 0.9, 0.5}).Draw(rt, id+"/"+a.Name)
			}
			var ts []string
			for i := range rapid.IntRange(0, 5).Draw(rt, id+"/tasks") {
				ts = append(ts, fmt.Sprintf(`{"id":"T%d","wave":%d}`, i, rapid.IntRange(1, 3).Draw(rt, fmt.Sprintf("%s/T%d", id, i))))
			}
			tasks[id] = "[" + strings.Join(ts, ",") + "]"
		}
		cut := rapid.IntRange(1, 40).Draw(rt, "cut")
		parallel := rapid.IntRange(1, 4).Draw(rt, "parallel")

		var mu sync.Mutex
		var violations []string
		starts := 0
		var cancel context.CancelFunc
		behave := func(env map[string]string) fakeRun {
			slice, agent, task := env["CUSTODIAN_SLICE"], env["CUSTODIAN_AGENT"], env["CUSTODIAN_TASK"]
			s := st.slice(slice)
			mu.Lock()
			defer mu.Unlock()
			starts++
			if cancel != nil && starts == cut {
				cancel()
			}
			if task != "" {
				if tk := findTask(s, task); tk == nil || tk.Status == asdd.TaskDone {
					violations = append(violations, fmt.Sprintf("task %s of %s started again", task, slice))
				}
				return fakeRun{sleep: time.Millisecond}
			}
			if ranIn(s, agent, s.Status) {
				violations = append(violations, fmt.Sprintf("%s started again for %s of %s", agent, s.Status, slice))
			}
			score := scores[slice+"/"+agent]
			out := result(agent, score)
			if agent == "task_planning" {
				out = strings.TrimSuffix(strings.TrimSpace(out), "}") + `, "tasks": ` + tasks[slice] + "}\n"
			}
			return fakeRun{out: out}
		}
		ctx, c := context.WithCancel(context.Background())
		cancel = c
		r1 := newTestRunner(t, cfg, st, &fakeStarter{behave: behave}, Options{MaxParallel: parallel})
		if _, err := r1.Run(ctx, nil); err != nil {
			rt.Fatal(err)
		}
		mu.Lock()
		cancel = nil
		mu.Unlock()
		r2 := newTestRunner(t, cfg, st, &fakeStarter{behave: behave}, Options{MaxParallel: parallel, Resume: true})
		sum, err := r2.Run(context.Background(), nil)
		if err != nil {
			rt.Fatal(err)
		}
		if len(violations) > 0 {
			rt.Fatalf("%s", strings.Join(violations, "\n"))
		}
		for _, x := range sum.Slices {
			if x.Outcome == OutcomeInterrupted || x.Outcome == OutcomeError {
				rt.Fatalf("second run: %+v", x)
			}
			if k := Next(st.slice(x.Slice), cfg, "").Kind; k == StepAgent || k == StepTasks {
				rt.Fatalf("%s left with work: %s (%+v)", x.Slice, k, x)
			}
		}
	})
}
