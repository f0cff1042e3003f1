package solver

import (
	"context"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// BenchmarkSolve solves klondike and klondike-draw3 deals 1..8 with a
// budget of 200,000 nodes each (nodes only, so the work does not depend on
// the machine's speed) and reports the nodes searched per solve.
func BenchmarkSolve(b *testing.B) {
	for _, variant := range []string{"klondike", "klondike-draw3"} {
		b.Run(variant, func(b *testing.B) {
			var deals []*domain.State
			for seed := uint64(1); seed <= 8; seed++ {
				deals = append(deals, seeded(b, variant, domain.Options{}, seed))
			}
			var nodes int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, s := range deals {
					nodes += Solve(context.Background(), s, Budget{Nodes: 200_000, Time: time.Hour}).Nodes
				}
			}
			b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
		})
	}
}

// BenchmarkTable inserts, looks up and removes 1<<16 keys of the search's
// transposition table, the layout every position's visit goes through.
func BenchmarkTable(b *testing.B) {
	keys := benchKeys()
	for i := 0; i < b.N; i++ {
		t := newTable(10)
		for _, k := range keys {
			t.insert(k)
		}
		for _, k := range keys {
			if !t.has(k) {
				b.Fatal("key lost")
			}
		}
		for _, k := range keys[:len(keys)/2] {
			t.remove(k)
		}
	}
}

// BenchmarkIndexMap puts, gets and deletes 1<<16 keys of the talon
// dominance's map from keys to indices.
func BenchmarkIndexMap(b *testing.B) {
	keys := benchKeys()
	for i := 0; i < b.N; i++ {
		m := newIndexMap(10)
		for j, k := range keys {
			m.put(k, int32(j))
		}
		for j, k := range keys {
			if v, ok := m.get(k); !ok || v != int32(j) {
				b.Fatal("key lost")
			}
		}
		for _, k := range keys[:len(keys)/2] {
			m.del(k)
		}
	}
}

// benchKeys are 1<<16 distinct well-mixed keys, the same on every run.
func benchKeys() []uint64 {
	keys := make([]uint64, 1<<16)
	for i := range keys {
		keys[i] = splitmix(uint64(i))
	}
	return keys
}
