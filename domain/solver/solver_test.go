package solver

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

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
				// A node budget only: the machine's load must not decide.
				res := Solve(context.Background(), s, Budget{Nodes: 3_000_000, Time: 10 * time.Minute})
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

// R7.1: a deadlocked layout is unwinnable (2S needs AS, which lies under
// 2H, which needs AH, which lies under 2S; clubs and diamonds are home), in
// strict klondike and in relaxed, where take-backs can rebuild the
// foundations in the tableau but never free an ace (the brute force of
// reference_test.go agrees: no win among every reachable position).
func TestR71DeadlockIsUnwinnable(t *testing.T) {
	t.Parallel()
	pos, err := domain.ParsePosition("AHKH3H4H5H6H7H8H9HTHJHQH:2S/ASKS3S4S5S6S7S8S9STSJSQS:2H/:/:/:/:/: - - " +
		"AC2C3C4C5C6C7C8C9CTCJCQCKC/AD2D3D4D5D6D7D8D9DTDJDQDKD 0")
	if err != nil {
		t.Fatal(err)
	}
	s := newGame(t, "klondike", domain.Options{}, pos)
	if res := Solve(context.Background(), s, Budget{}); res.Verdict != Unwinnable || res.Line != nil {
		t.Fatalf("klondike: %+v, want unwinnable", res)
	}
	// The same with cards in the stock that play but do not help: lost
	// all the same (2S and 2H can never leave their piles: frozen).
	pos2, _ := domain.ParsePosition("AHKH3H4H5H6H7H8H9HTHJHQH:2S/ASKS3S4S5S6S7S8S9STSJSQS:2H/:/:/:/:/: KDQCKC - " +
		"AC2C3C4C5C6C7C8C9CTCJC/AD2D3D4D5D6D7D8D9DTDJDQD 0")
	s2 := newGame(t, "klondike-draw3", domain.Options{}, pos2)
	if res := Solve(context.Background(), s2, Budget{}); res.Verdict != Unwinnable {
		t.Fatalf("klondike-draw3 with a stock: %+v, want unwinnable", res)
	}
	r := newGame(t, "relaxed", domain.Options{}, pos)
	if res := Solve(context.Background(), r, Budget{}); res.Verdict != Unwinnable || res.Nodes < 2 {
		t.Fatalf("relaxed: %+v, want unwinnable after a search", res)
	}
	if won, ok := reference(r, 100_000); won || !ok {
		t.Fatalf("brute force: won %v, exhausted %v", won, ok)
	}
}

// R7.1: a budget of one node decides nothing that needs a search; an
// expired context likewise.
func TestR71BudgetGivesUnknown(t *testing.T) {
	t.Parallel()
	s := seeded(t, "klondike", domain.Options{}, 1)
	if res := Solve(context.Background(), s, Budget{Nodes: 1}); res.Verdict != Unknown || res.Line != nil || res.Nodes > 2 {
		t.Fatalf("1 node: %+v, want unknown", res)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res := Solve(ctx, s, Budget{}); res.Verdict != Unknown {
		t.Fatalf("cancelled: %+v, want unknown", res)
	}
}

// R7.1: ended games: won is winnable with an empty line, resigned is
// unwinnable (no move is accepted, R2.7).
func TestR71EndedGames(t *testing.T) {
	t.Parallel()
	s := seeded(t, "klondike", domain.Options{}, 2)
	evs, _, err := domain.Decide(s, domain.Move{Type: domain.MoveResign}, s.LastAt)
	if err != nil {
		t.Fatal(err)
	}
	lost := s.Clone()
	lost.Apply(evs[0])
	if res := Solve(context.Background(), lost, Budget{}); res.Verdict != Unwinnable {
		t.Fatalf("resigned: %+v", res)
	}
	d := loadSolved(t, "klondike-solved-draw1.jsonl")[0]
	g := newGame(t, "relaxed", domain.Options{}, d.position(t))
	res := Solve(context.Background(), g, Budget{})
	won := play(t, g, res.Line)
	if res := Solve(context.Background(), won, Budget{}); res.Verdict != Winnable || res.Line == nil || len(res.Line) != 0 {
		t.Fatalf("won: %+v", res)
	}
}

// R7.1: from positions in the middle of games (random play, every variant
// with its default rules and the other draw count), every winnable answer
// carries a line that wins from there through domain.Decide; harp and
// tripleharp (2 and 3 decks, single cards) included.
func TestR71MidGameLinesWin(t *testing.T) {
	t.Parallel()
	won, decided := 0, 0
	for _, v := range domain.Variants() {
		for seed := uint64(1); seed <= 4; seed++ {
			s := seeded(t, v.ID, domain.Options{}, seed)
			rng := rand.New(rand.NewPCG(seed, 3))
			for i := 0; i < 15 && s.Status == domain.StatusInProgress; i++ {
				var legal []domain.Move
				for _, m := range domain.LegalMoves(s) {
					if !excluded(m.Type) {
						legal = append(legal, m)
					}
				}
				s = play(t, s, []domain.Move{legal[rng.IntN(len(legal))]})
			}
			res := Solve(context.Background(), s, Budget{Nodes: 300_000})
			switch res.Verdict {
			case Winnable:
				won++
				if end := play(t, s, res.Line); end.Status != domain.StatusWon {
					t.Fatalf("%s seed %d: line ends %s", v.ID, seed, end.Status)
				}
				fallthrough
			case Unwinnable:
				decided++
			}
		}
	}
	if won == 0 {
		t.Fatal("no mid-game position came out winnable")
	}
	t.Logf("%d decided, %d winnable of %d", decided, won, 4*len(domain.Variants()))
}
