package solver

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// portfolioWith searches s as solve does with the draw-1 relaxation, with
// first attempts of first nodes (the relaxation's turns from the third
// one), with the relaxation probes (probe.go) on or off. It checks a
// winning line by replay and returns the verdict and the prober (nil if
// the probes never started).
func portfolioWith(t *testing.T, s *domain.State, probes bool, first, nodes int64) (Verdict, *prober) {
	t.Helper()
	won, lost, sr, _ := runPortfolio(t, s, probes, first, nodes)
	switch {
	case won:
		if _, ok := verify(s, sr.line()); !ok {
			t.Fatalf("a winning line that does not win\n%s", s.Board(true))
		}
		return Winnable, sr.probe
	case lost:
		return Unwinnable, sr.probe
	}
	return Unknown, sr.probe
}

// runPortfolio runs portfolio on s as portfolioWith describes and returns
// its result with the game's search sr and the relaxation's rx (rx.g nil
// if the relaxation never took a turn).
func runPortfolio(t *testing.T, s *domain.State, probes bool, first, nodes int64) (won, lost bool, sr, rx *search) {
	t.Helper()
	g, ok := fromState(s)
	if !ok || !g.relaxable() {
		t.Fatal("no relaxation")
	}
	g.sw.noProbe, g.sw.logCuts = !probes, true
	b := Budget{Nodes: nodes, Time: time.Hour}.withDefaults()
	sr = newSearch(context.Background(), g, b, time.Now())
	sr.first = first
	relaxed := g.relaxed()
	rx = &search{}
	won, lost = portfolio(sr, rx, func() *search {
		r := newSearch(context.Background(), relaxed, b, time.Now())
		r.first = first
		return r
	}, b.Nodes)
	return won, lost, sr, rx
}

// R7.1: the relaxation probes keep every verdict, and every position they
// cut is lost. On positions after random play of seeded draw-3 deals,
// `relaxed` (unlimited passes) with and without take-back (R2.3) and
// klondike-draw3 (three passes, no take-back), searched with first attempts of 100 nodes so that the
// probes start early: the verdict with the probes equals the verdict
// without wherever both finish, the probes cut a good share of the
// searches, and positions they cut, searched again on their own without
// the relaxation (so the claim of relax.go is not assumed), and their
// relaxations searched without the talon dominance and pairs the probes
// use, are never winnable and are lost in a good share.
func TestR71ProbesKeepVerdicts(t *testing.T) {
	t.Parallel()
	want := 100
	if raceBuild || testing.Short() {
		want = 25
	}
	three := 3
	rng := rand.New(rand.NewPCG(47, 3))
	decided, probed, cutSearches, checked, cutLost, relaxLost := 0, 0, 0, 0, 0, 0
	for n := 0; n < 6*want && decided < want; n++ {
		variant, takeBack := []string{"relaxed", "relaxed", "klondike-draw3"}[n%3], n%3 == 0
		s := walk(rng, seeded(t, variant, domain.Options{Draw: &three, TakeBack: &takeBack}, uint64(13000+n)), rng.IntN(30))
		if g, ok := fromState(s); !ok || !g.relaxable() {
			continue // the talon is empty: nothing to relax
		}
		with, p := portfolioWith(t, s, true, 100, 300_000)
		without, _ := portfolioWith(t, s, false, 100, 300_000)
		if with == Unknown || without == Unknown {
			continue
		}
		if with != without {
			t.Fatalf("%s seed %d after random play: %s with the probes, %s without\n%s", variant, 13000+n, with, without, s.Board(true))
		}
		decided++
		if p == nil {
			continue
		}
		probed++
		if p.cuts > 0 {
			cutSearches++
		}
		for _, i := range rng.Perm(len(p.log))[:min(3, len(p.log))] {
			c := p.log[i]
			c.sw.noRelax, c.sw.noProbe, c.sw.logCuts = true, true, false
			// its relaxation, without the dominance and the pairs the
			// probes used, and the position itself
			r := c.relaxed()
			r.sw.noDom, r.sw.noPairs = true, true
			b := Budget{Nodes: 200_000, Time: time.Hour}.withDefaults()
			rv := verdictOf(newSearch(context.Background(), r, b, time.Now()))
			v := verdictOf(newSearch(context.Background(), &c, b, time.Now()))
			if rv == Winnable || v == Winnable {
				t.Fatalf("%s seed %d: a position the probes cut is winnable (%s relaxed, %s itself)\n%s", variant, 13000+n, rv, v, s.Board(true))
			}
			if v == Unwinnable {
				cutLost++
			}
			if rv == Unwinnable {
				relaxLost++
			}
			checked++
		}
	}
	if decided < want || probed < want/10 || cutSearches < probed/2 || cutLost < checked/4 || relaxLost < checked/4 {
		t.Fatalf("%d positions decided both ways (want %d); the probes ran in %d searches and cut in %d; of %d cut positions searched again %d were lost, %d lost relaxed",
			decided, want, probed, cutSearches, checked, cutLost, relaxLost)
	}
	t.Logf("%d positions decided both ways; the probes ran in %d searches and cut in %d; of %d cut positions searched again, %d were lost and %d lost relaxed, none won",
		decided, probed, cutSearches, checked, cutLost, relaxLost)
}

// R7.1: the relaxation probes run with draw 3 only. Once the draw-1
// relaxation of the root is won, the game's search goes on with the probes
// under klondike-draw3 (three passes) and without them under klondike
// (draw 1, one pass), where they cost more than they cut (probe.go).
func TestR71ProbesOnlyWithDraw3(t *testing.T) {
	t.Parallel()
	for _, variant := range []string{"klondike-draw3", "klondike"} {
		wonRelaxed := 0
		for seed := uint64(1); seed <= 60 && wonRelaxed < 3; seed++ {
			// the relaxation takes turns from 400 nodes
			_, _, sr, rx := runPortfolio(t, seeded(t, variant, domain.Options{}, seed), true, 100, 300_000)
			// a won relaxation's table is dropped, or kept by the probes
			if rx.g == nil || rx.tt != nil && sr.probe == nil {
				continue // the relaxation never ran, or was not won
			}
			wonRelaxed++
			if probes := sr.probe != nil; probes != (variant == "klondike-draw3") {
				t.Fatalf("%s seed %d: relaxation won, probes %v", variant, seed, probes)
			}
		}
		if wonRelaxed < 3 {
			t.Fatalf("%s: the relaxation was won from the root in %d of seeds 1-60, want 3", variant, wonRelaxed)
		}
	}
}
