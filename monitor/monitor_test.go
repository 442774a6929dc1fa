package monitor

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// clock is a fake clock tests move by hand.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time          { return c.now }
func (c *clock) Advance(d time.Duration) { c.now = c.now.Add(d) }
func newClock() *clock                   { return &clock{now: time.Date(2026, 4, 20, 15, 0, 0, 0, time.UTC)} }
func intp(v int) *int                    { return &v }
func kinds(as []Action) (out []string) {
	for _, a := range as {
		out = append(out, a.Agent+" "+string(a.Kind))
	}
	return out
}

var policy = Policy{Timeout: 15 * time.Minute, Retries: 1}

// world is a manifest's heartbeats as the monitor's caller keeps them.
type world struct {
	c   *clock
	hbs map[string]Heartbeat
}

// beat records a heartbeat and keeps the monitor's markers, as a writer
// that does not know them would: the monitor itself must clear them.
func (w *world) beat(agent, status string) {
	old := w.hbs[agent]
	w.hbs[agent] = Heartbeat{Agent: agent, Status: status, Slice: "SLICE-003", Wave: intp(2), TasksDone: intp(7), TasksRemaining: intp(4), Last: w.c.Now(),
		RetryRequested: old.RetryRequested, Escalated: old.Escalated}
}

// tick runs the monitor and records its actions, as monitor --once does.
func (w *world) tick(p Policy) []Action {
	var hbs []Heartbeat
	for _, h := range w.hbs {
		hbs = append(hbs, h)
	}
	acts := Evaluate(hbs, p, w.c.Now())
	for _, a := range acts {
		w.hbs[a.Agent] = Apply(w.hbs[a.Agent], a)
	}
	return acts
}

func TestTimeoutRetryEscalationRecovery(t *testing.T) {
	c := newClock()
	w := &world{c: c, hbs: map[string]Heartbeat{}}
	w.beat("implementation_agent", Active)
	w.beat("discovery_agent", "IDLE")

	steps := []struct {
		advance time.Duration
		beat    string // agent that sends a heartbeat before the tick
		want    []string
	}{
		{advance: 10 * time.Minute, want: nil},                                         // within the timeout
		{advance: 5 * time.Minute, want: nil},                                          // exactly at it: not yet
		{advance: time.Second, want: []string{"implementation_agent retry_requested"}}, // past it
		{advance: time.Minute, want: nil},                                              // retry asked once only
		{advance: 14 * time.Minute, want: nil},                                         // a further timeout not yet over
		{advance: time.Minute, want: []string{"implementation_agent escalated"}},       // now it is
		{advance: time.Hour, want: nil},                                                // escalated once only
		{beat: "implementation_agent", want: []string{"implementation_agent cleared"}}, // recovery
		{advance: 15 * time.Minute, want: nil},
		{advance: time.Second, want: []string{"implementation_agent retry_requested"}}, // the cycle starts again
	}
	for i, st := range steps {
		c.Advance(st.advance)
		if st.beat != "" {
			// A heartbeat committed through a rule that does not clear the
			// markers (the monitor must clear them itself).
			h := w.hbs[st.beat]
			h.Last = c.Now()
			w.hbs[st.beat] = h
		}
		got := w.tick(policy)
		if diff := cmp.Diff(st.want, kinds(got)); diff != "" {
			t.Fatalf("step %d at +%s (-want +got):\n%s", i, c.Now().Sub(newClock().Now()), diff)
		}
	}
}

func TestMessagesNameTheSilenceAndTheProgress(t *testing.T) {
	c := newClock()
	w := &world{c: c, hbs: map[string]Heartbeat{}}
	w.beat("implementation_agent", Active)
	c.Advance(20 * time.Minute)
	acts := w.tick(policy)
	if len(acts) != 1 {
		t.Fatal(acts)
	}
	for _, want := range []string{"silent for 20m0s", "timeout 15m0s", "slice SLICE-003", "wave 2", "tasks 7 done, 4 remaining"} {
		if !strings.Contains(acts[0].Message, want) {
			t.Errorf("message %q lacks %q", acts[0].Message, want)
		}
	}
	if acts[0].Silent != 20*time.Minute || acts[0].Slice != "SLICE-003" || !acts[0].At.Equal(c.Now()) {
		t.Errorf("%+v", acts[0])
	}
}

func TestPolicies(t *testing.T) {
	start := newClock().Now()
	tests := []struct {
		name string
		h    Heartbeat
		p    Policy
		at   time.Duration // after start
		want []string
	}{
		{"no retry: escalate at once", Heartbeat{Agent: "a", Status: Active, Last: start}, Policy{Timeout: time.Minute}, 2 * time.Minute, []string{"a escalated"}},
		{"custom escalation delay", Heartbeat{Agent: "a", Status: Active, Last: start, RetryRequested: start.Add(2 * time.Minute)}, Policy{Timeout: time.Minute, EscalateAfter: 10 * time.Minute, Retries: 1}, 11 * time.Minute, nil},
		{"custom escalation delay over", Heartbeat{Agent: "a", Status: Active, Last: start, RetryRequested: start.Add(2 * time.Minute)}, Policy{Timeout: time.Minute, EscalateAfter: 10 * time.Minute, Retries: 1}, 12*time.Minute + time.Second, []string{"a escalated"}},
		{"no timeout configured", Heartbeat{Agent: "a", Status: Active, Last: start}, Policy{}, 100 * time.Hour, nil},
		{"unreadable last heartbeat", Heartbeat{Agent: "a", Status: Active}, policy, 0, []string{"a retry_requested"}},
		{"idle agents are not watched", Heartbeat{Agent: "a", Status: "IDLE", Last: start}, policy, 100 * time.Hour, nil},
		{"leaving ACTIVE clears", Heartbeat{Agent: "a", Status: "PAUSED", Last: start, Escalated: start.Add(time.Hour)}, policy, 2 * time.Hour, []string{"a cleared"}},
		{"clock behind the heartbeat", Heartbeat{Agent: "a", Status: Active, Last: start.Add(time.Hour)}, policy, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Evaluate([]Heartbeat{tc.h}, tc.p, start.Add(tc.at))
			if diff := cmp.Diff(tc.want, kinds(got)); diff != "" {
				t.Fatal(diff)
			}
		})
	}
}

func TestEvaluateSortsByAgent(t *testing.T) {
	start := newClock().Now()
	var hbs []Heartbeat
	for _, a := range []string{"c", "a", "b"} {
		hbs = append(hbs, Heartbeat{Agent: a, Status: Active, Last: start})
	}
	got := Evaluate(hbs, policy, start.Add(time.Hour))
	if diff := cmp.Diff([]string{"a retry_requested", "b retry_requested", "c retry_requested"}, kinds(got)); diff != "" {
		t.Fatal(diff)
	}
}

// TestMonitorStateMachine drives heartbeats and time at random and checks
// the monitor's promises: an escalation always follows a retry request by
// more than the escalation delay, no action repeats without a heartbeat in
// between, an agent silent long enough is always escalated, and a heartbeat
// always clears.
func TestMonitorStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := newClock()
		w := &world{c: c, hbs: map[string]Heartbeat{}}
		agents := []string{"spec_agent", "implementation_agent"}
		for _, a := range agents {
			w.beat(a, Active)
		}
		p := Policy{Timeout: 15 * time.Minute, Retries: rapid.IntRange(0, 1).Draw(t, "retries")}
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			agent := rapid.SampledFrom(agents).Draw(t, "agent")
			before := w.hbs[agent]
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0:
				w.beat(agent, rapid.SampledFrom([]string{Active, Active, "IDLE"}).Draw(t, "status"))
				acts := w.tick(p)
				if (!before.RetryRequested.IsZero() || !before.Escalated.IsZero()) && !hasKind(acts, agent, Clear) {
					t.Fatalf("heartbeat of %s did not clear its markers: %v", agent, kinds(acts))
				}
			default:
				c.Advance(time.Duration(rapid.IntRange(0, 40).Draw(t, "minutes")) * time.Minute)
				acts := w.tick(p)
				for _, a := range acts {
					prev := before
					if a.Agent != agent {
						continue
					}
					switch a.Kind {
					case RequestRetry:
						if !prev.RetryRequested.IsZero() || p.Retries == 0 {
							t.Fatalf("second retry request for %s, or retry with no retries", agent)
						}
					case Escalate:
						if !prev.Escalated.IsZero() {
							t.Fatalf("second escalation for %s", agent)
						}
						if p.Retries > 0 && (prev.RetryRequested.IsZero() || c.Now().Sub(prev.RetryRequested) <= p.Timeout) {
							t.Fatalf("escalation of %s without a retry request a timeout earlier", agent)
						}
					case Clear:
						t.Fatalf("clear without a heartbeat")
					}
				}
			}
			// Liveness: silent past both delays and still ACTIVE means escalated.
			for _, h := range w.hbs {
				if h.Status == Active && c.Now().Sub(h.Last) > 2*p.Timeout+40*time.Minute && h.Escalated.IsZero() {
					t.Fatalf("%s silent %s and not escalated", h.Agent, c.Now().Sub(h.Last))
				}
			}
		}
	})
}

func hasKind(acts []Action, agent string, k Kind) bool {
	for _, a := range acts {
		if a.Agent == agent && a.Kind == k {
			return true
		}
	}
	return false
}

func TestLoopTicksOnTheInjectedTimer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	timer := make(chan time.Time)
	ticks := make(chan int, 10)
	n := 0
	done := make(chan error)
	go func() {
		done <- Loop(ctx, time.Minute, func(d time.Duration) <-chan time.Time {
			if d != time.Minute {
				t.Errorf("interval %s", d)
			}
			return timer
		}, func(context.Context) error {
			n++
			ticks <- n
			return nil
		})
	}()
	<-ticks // at the start
	timer <- time.Time{}
	<-ticks
	timer <- time.Time{}
	if got := <-ticks; got != 3 {
		t.Fatalf("tick %d", got)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("loop ended with %v", err)
	}
	boom := errors.New("boom")
	if err := Loop(context.Background(), time.Minute, nil, func(context.Context) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("loop error %v", err)
	}
}
