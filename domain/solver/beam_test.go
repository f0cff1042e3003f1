package solver

import (
	"context"
	"testing"

	"github.com/openpatience/solitaire/domain"
)

// R7.1: seeded Harp and Tripleharp deals that the beams win within a
// small node budget come with a line that domain.Decide replays to a win
// from the deal, and the search is deterministic (the same verdict, line
// and node count twice). The seeds are among those won within the budget
// (BENCHMARKS.md "Solver"); a change that loses one of them is a change
// of the search to measure again.
func TestR71MultiDeckWinsReplay(t *testing.T) {
	t.Parallel()
	cases := []struct {
		variant string
		seed    uint64
	}{{"harp", 6}, {"harp", 16}, {"tripleharp", 19}}
	if raceBuild || testing.Short() {
		cases = cases[:1] // the others take a minute under -race
	}
	for _, c := range cases {
		s := seeded(t, c.variant, domain.Options{}, c.seed)
		b := Budget{Nodes: 1_000_000, Time: 1 << 62}
		res := Solve(context.Background(), s, b)
		if res.Verdict != Winnable {
			t.Fatalf("%s seed %d: %s after %d nodes, want winnable", c.variant, c.seed, res.Verdict, res.Nodes)
		}
		if end := play(t, s, res.Line); end.Status != domain.StatusWon {
			t.Fatalf("%s seed %d: the line ends %s", c.variant, c.seed, end.Status)
		}
		again := Solve(context.Background(), s, b)
		if again.Verdict != res.Verdict || again.Nodes != res.Nodes || len(again.Line) != len(res.Line) {
			t.Fatalf("%s seed %d: a second search gives %s in %d nodes, %d moves; the first %s in %d, %d",
				c.variant, c.seed, again.Verdict, again.Nodes, len(again.Line), res.Verdict, res.Nodes, len(res.Line))
		}
		t.Logf("%s seed %d: %d nodes, %d moves", c.variant, c.seed, res.Nodes, len(res.Line))
	}
}
