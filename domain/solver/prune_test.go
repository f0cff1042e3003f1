package solver

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// walk plays up to steps random legal moves (no undo, redo, resign or
// autocomplete; draws only half as often as they come up) on a clone of s,
// so that runs build up on the tableau, and returns the position reached
// while the game is still in progress.
func walk(rng *rand.Rand, s *domain.State, steps int) *domain.State {
	st := s.Clone()
	for n := 0; n < steps; n++ {
		var moves []domain.Move
		for _, m := range domain.LegalMoves(st) {
			if !excluded(m.Type) && (m.Type != domain.MoveDraw || rng.IntN(2) == 0) {
				moves = append(moves, m)
			}
		}
		if len(moves) == 0 {
			break
		}
		next := st.Clone()
		evs, _, err := domain.Decide(next, moves[rng.IntN(len(moves))], next.LastAt)
		if err != nil {
			panic(err)
		}
		for _, e := range evs {
			next.Apply(e)
		}
		if next.Status != domain.StatusInProgress {
			break
		}
		st = next
	}
	return st
}

// runsEndgame is a small endgame of rules r like endgame's, with about
// inPlay cards outside the foundations, but with face-up runs on the
// tableau (each pile: a few face-down cards, then a run built from the
// cards left), so that moves of part of a run and moves that empty a pile
// come up often.
func runsEndgame(rng *rand.Rand, r domain.Rules, inPlay int) domain.Position {
	p := endgame(rng, r, inPlay)
	var cards []domain.Card
	cards = append(cards, p.Stock...)
	cards = append(cards, p.Waste...)
	for _, t := range p.Tableau {
		cards = append(cards, t.Down...)
		cards = append(cards, t.Up...)
	}
	rng.Shuffle(len(cards), func(i, j int) { cards[i], cards[j] = cards[j], cards[i] })
	talon := rng.IntN(min(len(cards), 5) + 1)
	p.Stock, p.Waste = cards[:rng.IntN(talon+1)], nil
	p.Waste = cards[len(p.Stock):talon]
	rest := append([]domain.Card(nil), cards[talon:]...)
	p.Tableau = make([]domain.PileLayout, r.Piles)
	piles := 2 + rng.IntN(min(r.Piles, 4)-1)
	for i := 0; len(rest) > 0; i = (i + 1) % piles {
		t := &p.Tableau[i]
		if len(t.Up) > 0 {
			t.Down = append(t.Down, rest[0]) // leftovers go under the run
			rest = rest[1:]
			continue
		}
		for d := rng.IntN(3); d > 0 && len(rest) > 1; d-- {
			t.Down = append(t.Down, rest[0])
			rest = rest[1:]
		}
		t.Up = append(t.Up, rest[0])
		rest = rest[1:]
		for want := rng.IntN(5); want > 0; want-- {
			top := t.Up[len(t.Up)-1]
			k := slices.IndexFunc(rest, func(c domain.Card) bool {
				return c.Rank()+1 == top.Rank() && c.Suit().Red() != top.Suit().Red()
			})
			if k < 0 {
				break
			}
			t.Up = append(t.Up, rest[k])
			rest = slices.Delete(rest, k, k+1)
		}
	}
	return p
}

// prunes reports whether the dominance pruning of tableau moves dropped a
// move in the search of s.
func prunes(s *domain.State, b Budget) bool {
	g, ok := fromState(s)
	if !ok {
		return false
	}
	g.sw.countDrops = true
	sr := newSearch(context.Background(), g, b.withDefaults(), time.Now())
	sr.run()
	return g.sw.dropped > 0
}

// R7.1: the dominance pruning of tableau moves (moves of part of a run,
// moves that empty a pile: moves.go) loses no win. On small endgames of
// every rule combination with sequence moves, after random play has built
// runs on the tableau, the solver's verdict equals the brute force's
// through domain.Decide; enough of them are positions where the pruning
// dropped a move, so the test says something about it.
func TestR71PruningMatchesBruteForce(t *testing.T) {
	t.Parallel()
	want := 150
	if raceBuild || testing.Short() {
		want = 40
	}
	var combos []domain.Rules
	for _, r := range ruleCombos() {
		if r.Sequences {
			combos = append(combos, r)
		}
	}
	checked, wins, cut, skipped := 0, 0, 0, 0
	rng := rand.New(rand.NewPCG(11, 3))
	// Under -race fewer positions, but never only wins: the sequence goes
	// on past want until it has an unwinnable one too (the first 40 of
	// this seeded sequence are all winnable), at most to 150.
	for n := 0; checked < want || wins == checked && checked < 150; n++ {
		r := combos[n%len(combos)]
		pos := runsEndgame(rng, r, 8+rng.IntN(6))
		if pos.Validate(r) != nil {
			continue
		}
		s0 := &domain.State{}
		s0.Apply(domain.DealtEvent(r, pos, "", t0))
		if s0.Fault != "" || s0.Status != domain.StatusInProgress {
			continue
		}
		s := walk(rng, s0, rng.IntN(4))
		refWin, ok := reference(s, 5_000)
		if !ok {
			skipped++
			continue
		}
		res := Solve(context.Background(), s, Budget{})
		wantV := Unwinnable
		if refWin {
			wantV = Winnable
			wins++
		}
		if res.Verdict != wantV {
			t.Fatalf("%s draw %d passes %d tb %v flip %s: solver %s, brute force %s\n%s",
				r.Variant, r.Draw, r.Passes, r.TakeBack, r.Flip, res.Verdict, wantV, s.Board(true))
		}
		if prunes(s, Budget{}) {
			cut++
		}
		checked++
	}
	if wins == 0 || wins == checked || cut < checked/10 {
		t.Fatalf("%d of %d winnable, pruning cut %d: the positions do not test the pruning", wins, checked, cut)
	}
	t.Logf("%d positions, %d winnable, pruning cut the search in %d (%d too big for brute force)", checked, wins, cut, skipped)
}

// R7.1: on positions of seeded deals after random play, in the variants
// with sequence moves, the verdict with the dominance pruning equals the
// verdict without it wherever both searches finish: positions too big for
// the brute force, with the whole talon and every kind of tableau move.
func TestR71PruningKeepsVerdicts(t *testing.T) {
	t.Parallel()
	want := 120
	if raceBuild || testing.Short() {
		want = 20
	}
	type variant struct {
		id   string
		draw int
	}
	variants := []variant{{"relaxed", 1}, {"relaxed", 3}, {"klondike", 1}, {"klondike-draw3", 3}, {"klassik", 3}}
	b := Budget{Nodes: 200_000, Time: time.Hour}
	rng := rand.New(rand.NewPCG(5, 8))
	both, wins, cut := 0, 0, 0
	for n := 0; n < 4*want && both < want; n++ {
		v := variants[n%len(variants)]
		s0 := seeded(t, v.id, domain.Options{Draw: &v.draw}, uint64(1000+n))
		s := walk(rng, s0, 10+rng.IntN(60))
		on := solve(context.Background(), s, b, time.Now(), searchAll)
		off := solve(context.Background(), s, b, time.Now(), searchNoPrune)
		if on.Verdict == Unknown || off.Verdict == Unknown {
			continue
		}
		if on.Verdict != off.Verdict {
			t.Fatalf("%s draw %d, seed %d after random play: %s with pruning, %s without\n%s",
				v.id, v.draw, 1000+n, on.Verdict, off.Verdict, s.Board(true))
		}
		both++
		if on.Verdict == Winnable {
			wins++
		}
		if on.Nodes != off.Nodes {
			cut++
		}
	}
	if both < want || wins == 0 || wins == both || cut == 0 {
		t.Fatalf("%d positions decided both ways (want %d), %d winnable, pruning cut %d", both, want, wins, cut)
	}
	t.Logf("%d positions decided both ways, %d winnable, pruning cut the search in %d", both, wins, cut)
}

// R7.1: a position frozen() calls lost (a card that can never leave its
// pile, safe.go) is lost by brute force through domain.Decide, on small
// one-deck endgames, with and without take-back; and frozen() finds a good
// share of the lost ones, so the test says something about it.
func TestR71FrozenIsLost(t *testing.T) {
	t.Parallel()
	want := 120
	if raceBuild || testing.Short() {
		want = 30
	}
	var combos []domain.Rules
	for _, r := range ruleCombos() {
		if r.Decks == 1 {
			combos = append(combos, r)
		}
	}
	frozenN, lost := 0, 0
	rng := rand.New(rand.NewPCG(13, 21))
	for n := 0; frozenN < want && n < 200*want; n++ {
		r := combos[n%len(combos)]
		pos := endgame(rng, r, 6+rng.IntN(10))
		if pos.Validate(r) != nil {
			continue
		}
		s := &domain.State{}
		s.Apply(domain.DealtEvent(r, pos, "", t0))
		if s.Fault != "" || s.Status != domain.StatusInProgress {
			continue
		}
		s = walk(rng, s, rng.IntN(6))
		g, ok := fromState(s)
		if !ok {
			t.Fatal("fromState refused")
		}
		isFrozen := g.frozen()
		if !isFrozen && rng.IntN(8) != 0 {
			continue // brute force a sample of the others only
		}
		won, ok := reference(s, 5_000)
		if !ok {
			continue
		}
		if !won {
			lost++
		}
		if isFrozen {
			if won {
				t.Fatalf("%s draw %d passes %d tb %v: frozen, but brute force wins\n%s",
					r.Variant, r.Draw, r.Passes, r.TakeBack, s.Board(true))
			}
			frozenN++
		}
	}
	if frozenN < want {
		t.Fatalf("%d frozen positions checked, want %d", frozenN, want)
	}
	t.Logf("%d frozen positions lost by brute force (%d lost among those brute-forced)", frozenN, lost)
}
