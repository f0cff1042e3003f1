package solver

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// searchWith solves s with the talon dominance and the talon pairs
// (dominance.go, search.uses) on or off, checks a winning line by replay,
// and returns the verdict, the nodes and the positions the dominance cut.
func searchWith(t *testing.T, s *domain.State, dom, pairs bool, nodes int64) (Verdict, int64, int64) {
	t.Helper()
	g, ok := fromState(s)
	if !ok {
		t.Fatal("no compact position")
	}
	g.sw.noDom, g.sw.noPairs = !dom, !pairs
	sr := newSearch(context.Background(), g, Budget{Nodes: nodes, Time: time.Hour}.withDefaults(), time.Now())
	v := verdictOf(sr)
	if v == Winnable {
		if _, ok := verify(s, sr.line()); !ok {
			t.Fatalf("a winning line that does not win\n%s", s.Board(true))
		}
	}
	var cuts int64
	if sr.dom != nil {
		cuts = sr.dom.cuts
	}
	return v, sr.nodes, cuts
}

// R7.1: the talon dominance and the talon pairs keep every verdict. With
// draw 1 and unlimited passes, on positions of seeded deals after random
// play, with and without take-back (R2.3), the search with both, with
// either and with neither gives one verdict wherever all four finish, a
// winning line replays to a win, and each of the two cut a good share of
// the searches.
func TestR71TalonDominanceAndPairsKeepVerdicts(t *testing.T) {
	t.Parallel()
	want := 150
	if raceBuild || testing.Short() {
		want = 30
	}
	one := 1
	rng := rand.New(rand.NewPCG(41, 7))
	decided, domCut, pairsCut, lost := 0, 0, 0, 0
	for n := 0; n < 4*want && decided < want; n++ {
		takeBack := n%2 == 0
		s := walk(rng, seeded(t, "relaxed", domain.Options{Draw: &one, TakeBack: &takeBack}, uint64(11000+n)), rng.IntN(40))
		both, nodesBoth, cuts := searchWith(t, s, true, true, 300_000)
		noDom, _, _ := searchWith(t, s, false, true, 300_000)
		noPairs, nodesNoPairs, _ := searchWith(t, s, true, false, 300_000)
		neither, _, _ := searchWith(t, s, false, false, 300_000)
		vs := []Verdict{both, noDom, noPairs, neither}
		if slices.Contains(vs, Unknown) {
			continue
		}
		if both != noDom || both != noPairs || both != neither {
			t.Fatalf("seed %d take-back %v after random play: %s with dominance and pairs, %s without dominance, %s without pairs, %s without either\n%s",
				11000+n, takeBack, both, noDom, noPairs, neither, s.Board(true))
		}
		decided++
		if both == Unwinnable {
			lost++
		}
		if cuts > 0 {
			domCut++
		}
		if nodesBoth < nodesNoPairs {
			pairsCut++
		}
	}
	if decided < want || lost < want/20 || domCut < want/20 || pairsCut < want/10 {
		t.Fatalf("%d positions decided four ways (want %d), %d lost; the dominance cut %d searches, the pairs %d",
			decided, want, lost, domCut, pairsCut)
	}
	t.Logf("%d positions decided four ways, %d lost; the dominance cut %d searches, the pairs %d", decided, lost, domCut, pairsCut)
}

// R7.1: the claim of dominance.go. With draw 1 and unlimited passes, a
// position P1 whose talon holds one card more than P2, the same locked
// cards and foundations, is winnable wherever P2 is: P2 after random play
// of a seeded deal, P1 the same with the top card of a run that lies on
// another face-up card put back into the stock (at a random place: with
// draw 1 and unlimited passes the order does not matter). Searched without
// the dominance, so the claim is not assumed; both verdicts occur.
func TestR71TalonDominanceClaim(t *testing.T) {
	t.Parallel()
	want := 60
	if raceBuild || testing.Short() {
		want = 20
	}
	one := 1
	rng := rand.New(rand.NewPCG(43, 5))
	pairs, won, lost := 0, 0, 0
	for n := 0; n < 10*want && pairs < want; n++ {
		takeBack := n%2 == 0
		opts := domain.Options{Draw: &one, TakeBack: &takeBack}
		s2 := walk(rng, seeded(t, "relaxed", opts, uint64(12000+n)), 10+rng.IntN(40))
		pos := s2.Position()
		var from []int
		for i, p := range pos.Tableau {
			if len(p.Up) >= 2 {
				from = append(from, i)
			}
		}
		if len(from) == 0 {
			continue
		}
		i := from[rng.IntN(len(from))]
		p := &pos.Tableau[i]
		x := p.Up[len(p.Up)-1]
		p.Up = p.Up[:len(p.Up)-1]
		at := rng.IntN(len(pos.Stock) + 1)
		pos.Stock = slices.Insert(pos.Stock, at, x)
		s1 := newGame(t, "relaxed", opts, pos)
		v2, _, _ := searchWith(t, s2, false, true, 300_000)
		v1, _, _ := searchWith(t, s1, false, true, 300_000)
		if v1 == Unknown || v2 == Unknown {
			continue
		}
		pairs++
		if v2 == Winnable && v1 != Winnable {
			t.Fatalf("seed %d: winnable with %s on the tableau, lost with it in the stock\n%s\n%s", 12000+n, x, s2.Board(true), s1.Board(true))
		}
		if v2 == Winnable {
			won++
		}
		if v1 == Unwinnable {
			lost++
		}
	}
	if pairs < want || won == 0 || lost == 0 {
		t.Fatalf("%d pairs of positions decided (want %d): %d won with the card on the tableau, %d lost with it in the stock", pairs, want, won, lost)
	}
	t.Logf("%d pairs of positions decided: %d won with the card on the tableau, %d lost with it in the stock", pairs, won, lost)
}

// R7.1: useCandidates makes exactly the candidates that use a talon card
// just put on the tableau (usesCard over absCandidates), in the same order,
// on positions of seeded deals after random play (draw 1, unlimited
// passes; idle talon cards waiting or not), after every talon move onto
// the tableau they offer and again after each use that puts another talon
// card down (the chains of search.uses).
func TestR71UseCandidatesAreTheUses(t *testing.T) {
	t.Parallel()
	one := 1
	rng := rand.New(rand.NewPCG(47, 3))
	placed, uses, chained := 0, 0, 0
	var check func(g *game, x byte, depth int, s *domain.State, seed int)
	check = func(g *game, x byte, depth int, s *domain.State, seed int) {
		var want []move
		for _, c := range g.candidates(nil) {
			if g.usesCard(c, x) {
				want = append(want, c)
			}
		}
		// useCandidates fills the takers of x's child class only: what the
		// other entries hold must not matter
		for c := range g.tkA {
			g.tkA[c], g.tkB[c] = int8(rng.IntN(g.piles+1)-1), int8(rng.IntN(g.piles+1)-1)
		}
		g.tkPlace = rng.Uint64()
		got := g.useCandidates(nil, x)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d, %s put on the tableau (chain depth %d): useCandidates %v, the uses among the candidates %v\n%s",
				seed, domain.Card(x), depth, got, want, s.Board(true))
		}
		placed++
		uses += len(want)
		for _, m := range want {
			if m.kind == kTalon && depth < 4 {
				chained++
				y := g.orig[g.talon[m.p-1]]
				u := g.make(m)
				check(g, y, depth+1, s, seed)
				g.unmake(u)
			}
		}
	}
	for n := 0; n < 400; n++ {
		takeBack := n%2 == 0
		s := walk(rng, seeded(t, "relaxed", domain.Options{Draw: &one, TakeBack: &takeBack}, uint64(13000+n)), rng.IntN(100))
		g, ok := fromState(s)
		if !ok || !g.abstractOK() {
			continue
		}
		g.abs = true
		g.sw.noIdle = n%4 >= 2
		g.rehashAll()
		for _, m := range g.candidates(nil) {
			if m.kind != kTalon || m.to&toFound != 0 {
				continue
			}
			x := g.orig[g.talon[m.p-1]]
			u := g.make(m)
			check(g, x, 0, s, 13000+n)
			g.unmake(u)
		}
	}
	if placed < 1000 || uses < 500 || chained < 100 {
		t.Fatalf("%d talon cards put on the tableau, %d uses, %d of them chained placements: too few to check", placed, uses, chained)
	}
	t.Logf("%d talon cards put on the tableau, %d uses, %d of them chained placements", placed, uses, chained)
}

// R7.1: restarts (search.run) keep the talon dominance exact. An attempt
// cut short leaves no position it did not search to the end in the table
// (a later table hit on one would pass for a proven loss and prove others
// lost by dominance). With the first attempts a few nodes long, so that
// nearly every search restarts many times, the search with the dominance
// gives the verdict of the search without it on positions after random
// play (draw 1, unlimited passes).
func TestR71DominanceSurvivesRestarts(t *testing.T) {
	t.Parallel()
	want := 300
	if raceBuild || testing.Short() {
		want = 60
	}
	one := 1
	rng := rand.New(rand.NewPCG(99, 1))
	verdict := func(s *domain.State, dom bool, first int64) (Verdict, int) {
		g, ok := fromState(s)
		if !ok {
			t.Fatal("no compact position")
		}
		g.sw.noDom = !dom
		sr := newSearch(context.Background(), g, Budget{Nodes: 400_000, Time: time.Hour}.withDefaults(), time.Now())
		sr.first = first
		v := verdictOf(sr)
		if v == Winnable {
			if _, ok := verify(s, sr.line()); !ok {
				t.Fatalf("a winning line that does not win\n%s", s.Board(true))
			}
		}
		return v, sr.restart
	}
	compared, restarted := 0, 0
	for n := 0; compared < want && n < 4*want; n++ {
		s := walk(rng, seeded(t, "relaxed", domain.Options{Draw: &one}, uint64(20000+n)), 10+rng.IntN(60))
		first := int64(1 + n%3)
		on, restarts := verdict(s, true, first)
		off, _ := verdict(s, false, first)
		if on == Unknown || off == Unknown {
			continue
		}
		compared++
		if restarts > 3 {
			restarted++
		}
		if on != off {
			t.Fatalf("seed %d after random play, first attempt %d nodes: %s with the dominance, %s without\n%s", 20000+n, first, on, off, s.Board(true))
		}
	}
	if compared < want || restarted < want/2 {
		t.Fatalf("%d positions compared (want %d), %d of them after more than 3 restarts", compared, want, restarted)
	}
	t.Logf("%d positions compared, %d of them after more than 3 restarts", compared, restarted)
}
