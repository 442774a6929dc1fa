package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/bench"
	"github.com/custodian-dev/custodian/store/file"
)

// BenchmarkDirectHeartbeat is what a CLI heartbeat does without a daemon,
// minus the process start: open the store (direct mode), run the
// heartbeat through the application layer, close. Its cost on 1,000
// slices against 10 is the store's and the rules' share of `bench daemon`'s
// "CLI commit cost" (go test ./app -bench DirectHeartbeat -cpuprofile ...).
func BenchmarkDirectHeartbeat(b *testing.B) {
	for _, n := range []int{10, 1000} {
		b.Run(fmt.Sprintf("slices=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			doc, err := bench.Manifest(n, 0)
			if err != nil {
				b.Fatal(err)
			}
			if err := bench.Seed(dir, doc); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			for i := 0; b.Loop(); i++ {
				st, err := file.Open(dir, file.Options{})
				if err != nil {
					b.Fatal(err)
				}
				l := app.NewLocal(app.Options{Store: st, Root: dir, Logger: slog.New(slog.DiscardHandler)})
				done := i
				if _, err := l.ASDD(ctx, asdd.Beat{Agent: "spec", Status: asdd.HeartbeatActive, Completed: &done}); err != nil {
					b.Fatal(err)
				}
				if err := st.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
