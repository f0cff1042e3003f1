package persistence_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// BenchmarkAppend measures appends of one event (a draw, as most moves
// are), each in its own transaction, by 1 and by 16 concurrent writers,
// each writer on its own game, with the default snapshot interval. It
// reports appends/s over all writers. PostgreSQL is the production
// database; SQLite is measured for comparison.
func BenchmarkAppend(b *testing.B) {
	for _, db := range []string{"postgres", "sqlite"} {
		for _, writers := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/writers=%d", db, writers), func(b *testing.B) {
				cfg := persistence.Config{SnapshotEvery: persistence.DefaultSnapshotEvery}
				if db == "postgres" {
					cfg.DatabaseURL = pgtest.DSN(b)
				} else {
					cfg.SQLitePath = filepath.Join(b.TempDir(), "bench.db")
				}
				s, err := persistence.Open(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				benchAppends(b, s, writers)
			})
		}
	}
}

// benchAppends runs b.N appends of one draw each through s, spread over
// writers goroutines, each on its own game, and reports appends/s. Each
// writer makes one append before the timing starts (it opens the
// writer's connection and prepares the statements).
func benchAppends(b *testing.B, s *persistence.Store, writers int) {
	b.Helper()
	ids := make([]string, writers)
	states := make([]*domain.State, writers)
	for i := range writers {
		ids[i], states[i] = appendN(b, s, 0)
	}
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var ready, wg sync.WaitGroup
	start := make(chan struct{})
	for w := range writers {
		ready.Add(1)
		wg.Go(func() {
			var once sync.Once
			defer once.Do(ready.Done)
			st := states[w]
			at := st.LastAt
			for i := 0; ; i++ {
				if i == 1 {
					once.Do(ready.Done)
					<-start
				}
				if i > 0 && next.Add(1) > int64(b.N) {
					break
				}
				at = at.Add(time.Second)
				e := drawEvent(st, at)
				st.Apply(e)
				if _, err := s.Append(context.Background(), ids[w], st.Version-1, []domain.Event{e}, app.AfterOf(st.Clone()), nil); err != nil { // the store keeps the clone
					failed.Store(&err)
					return
				}
			}
		})
	}
	ready.Wait()
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}
