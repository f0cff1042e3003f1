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
				ids := make([]string, writers)
				states := make([]*domain.State, writers)
				for i := range writers {
					ids[i], states[i] = appendN(b, s, 0)
				}
				var next atomic.Int64
				var failed atomic.Pointer[error]
				b.ResetTimer()
				var wg sync.WaitGroup
				for w := range writers {
					wg.Go(func() {
						st, at := states[w], time.Now()
						for next.Add(1) <= int64(b.N) {
							at = at.Add(time.Second)
							e := drawEvent(st, at)
							st.Apply(e)
							if err := s.Append(context.Background(), ids[w], st.Version-1, []domain.Event{e}, st); err != nil {
								failed.Store(&err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				if err := failed.Load(); err != nil {
					b.Fatal(*err)
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
			})
		}
	}
}
