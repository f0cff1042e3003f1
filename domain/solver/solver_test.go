package solver

import (
	"context"
	"testing"

	"github.com/openpatience/solitaire/domain"
)

// R7.1: every deal an independent solver won comes out winnable, under the
// rules its lines need (relaxed: unlimited passes, take-back, player flips;
// klassik likewise with draw 3), and the line wins through domain.Decide.
func TestR71SolvedDealsAreWinnable(t *testing.T) {
	t.Parallel()
	for _, file := range []string{"klondike-solved-draw1.jsonl", "klondike-solved-draw3.jsonl"} {
		for _, d := range loadSolved(t, file) {
			variants := []string{"relaxed"}
			if d.Draw == 3 {
				variants = append(variants, "klassik")
			}
			for _, v := range variants {
				o := domain.Options{}
				if v == "relaxed" {
					o.Draw = &d.Draw
				}
				s := newGame(t, v, o, d.position(t))
				res := Solve(context.Background(), s, Budget{})
				if res.Verdict != Winnable {
					t.Errorf("%s %s: %s after %d nodes, want winnable", d.ID, v, res.Verdict, res.Nodes)
					continue
				}
				if end := play(t, s, res.Line); end.Status != domain.StatusWon {
					t.Errorf("%s %s: line ends %s", d.ID, v, end.Status)
				}
				t.Logf("%s %s: %d moves, %d nodes, %v", d.ID, v, len(res.Line), res.Nodes, res.Elapsed)
			}
		}
	}
}
