package solver

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// R7.1, R1.6: in abstract mode (one deck, sequence moves) a position's key
// ignores how the face-up cards off the bases are arranged in runs, and
// only there: a run moved from one card to its twin, and the two runs on
// a pair of twins swapped (not one move apart: neither twin is ever free
// for it), give one key; a base that moves, or a card that goes home,
// gives another. The concrete key tells all of them apart.
func TestR71AbstractKeyIgnoresArrangement(t *testing.T) {
	t.Parallel()
	const rest = "8H 9H TH JH QH KH AD 2D 3D 4D 5D 6D 8D 9D TD JD QD KD AC 2C 3C 4C 5C 7C 9C TC JC QC KC AS 2S 3S 4S 5S 6S 7S 9S TS JS QS KS 6H"
	stock := ""
	for i := 0; i < len(rest); i += 3 {
		stock += rest[i : i+2]
	}
	parse := func(piles, stock string) *game {
		t.Helper()
		for strings.Count(piles, "/") < 6 {
			piles += "/:"
		}
		pos, err := domain.ParsePosition(piles + " " + stock + " - - 0")
		if err != nil {
			t.Fatal(err)
		}
		g, ok := fromState(newGame(t, "klondike", domain.Options{}, pos))
		if !ok || !g.abstractOK() {
			t.Fatalf("%s: no abstract mode", piles)
		}
		return g
	}
	a := parse("AH2H3H:8S7H6C/4H5H:8C7D", stock)
	b := parse("AH2H3H:8S7D/4H5H:8C7H6C", stock)
	mode := func(g *game, abs bool) { g.abs = abs; g.rehashAll() }
	concrete := func(g *game) uint64 { mode(g, false); k := g.key(); mode(g, true); return k }
	abstract := func(g *game) uint64 { mode(g, true); return g.key() }
	if abstract(a) != abstract(b) {
		t.Error("swapped runs on twins: abstract keys differ")
	}
	if concrete(a) == concrete(b) {
		t.Error("swapped runs on twins: concrete keys equal")
	}

	// A run moved from 8S to its free twin 8C: one abstract key.
	c := parse("AH2H3H:8S7H6C/4H5H:8C/:9D", strings.Replace(stock, "9D", "7D", 1))
	before, beforeConcrete := abstract(c), concrete(c)
	u := c.make(move{kind: kTab, from: 0, to: 1, n: 2})
	if abstract(c) != before {
		t.Error("a rearrangement changed the abstract key")
	}
	if concrete(c) == beforeConcrete {
		t.Error("a rearrangement left the concrete key as it was")
	}
	c.unmake(u)
	if concrete(c) != beforeConcrete || abstract(c) != before {
		t.Fatal("unmake did not restore the keys")
	}
	// The base 8S with its run onto 9D: 3H turns up, a locked card less.
	c.make(move{kind: kTab, from: 0, to: 2, n: 3})
	if c.locked(0) != 3 || abstract(c) == before {
		t.Errorf("a base that moved: %d locked cards in pile 0, key unchanged %v", c.locked(0), abstract(c) == before)
	}
}

// R7.1: idle talon cards wait in the talon (abstract.go). With draw 1 and
// unlimited passes, on positions of seeded deals after random play, with
// and without take-back (R2.3), the search with the waiting gives the
// verdict of the search without it wherever both finish, a winning line
// replays to a win, and the waiting cut the search in a good share of
// them, both winnable and lost ones.
func TestR71IdleTalonKeepsVerdicts(t *testing.T) {
	t.Parallel()
	want := 150
	if raceBuild || testing.Short() {
		want = 30
	}
	search := func(s *domain.State, idle bool) (Verdict, int64) {
		g, ok := fromState(s)
		if !ok {
			t.Fatal("no compact position")
		}
		g.sw.noIdle = !idle
		g.sw.noPairs = true // the waiting on its own: the pairs (search.uses) do most of its work too
		sr := newSearch(context.Background(), g, Budget{Nodes: 300_000, Time: time.Hour}.withDefaults(), time.Now())
		v := verdictOf(sr)
		if v == Winnable {
			if _, ok := verify(s, sr.line()); !ok {
				t.Fatalf("a winning line that does not win\n%s", s.Board(true))
			}
		}
		return v, sr.nodes
	}
	one := 1
	rng := rand.New(rand.NewPCG(23, 9))
	both, cutWin, cutLost := 0, 0, 0
	for n := 0; n < 4*want && both < want; n++ {
		takeBack := n%2 == 0
		s0 := seeded(t, "relaxed", domain.Options{Draw: &one, TakeBack: &takeBack}, uint64(7000+n))
		s := walk(rng, s0, rng.IntN(40))
		on, nodesOn := search(s, true)
		off, nodesOff := search(s, false)
		if on == Unknown || off == Unknown {
			continue
		}
		if on != off {
			t.Fatalf("seed %d take-back %v after random play: %s with idle cards waiting, %s without\n%s",
				7000+n, takeBack, on, off, s.Board(true))
		}
		both++
		if nodesOn < nodesOff {
			if on == Winnable {
				cutWin++
			} else {
				cutLost++
			}
		}
	}
	if both < want || cutWin < want/10 || cutLost == 0 {
		t.Fatalf("%d positions decided both ways (want %d); the waiting cut %d winnable and %d lost searches", both, want, cutWin, cutLost)
	}
	t.Logf("%d positions decided both ways; the waiting cut %d winnable and %d lost searches", both, cutWin, cutLost)
}

// R7.1: the draw-1 relaxation (relax.go) only proves games lost. On
// positions after random play of seeded deals, draw 3 with unlimited
// passes and take-back (relaxed), draw 3 with three passes and none
// (klondike-draw3), and draw 1 with one pass (klondike; every other one
// with its stock dealt out, so that the waste is all of the talon and no
// pass is left), the game searched with draw 1 and unlimited passes is
// never lost where the game itself is won, and it is lost in a good share
// of the lost ones; each variant has positions decided both ways, won and
// lost.
func TestR71RelaxationOnlyProvesLost(t *testing.T) {
	t.Parallel()
	want := 120
	if raceBuild || testing.Short() {
		want = 30
	}
	search := func(g *game) Verdict {
		return verdictOf(newSearch(context.Background(), g, Budget{Nodes: 300_000, Time: time.Hour}.withDefaults(), time.Now()))
	}
	rng := rand.New(rand.NewPCG(31, 4))
	type count struct{ both, won, lost, lostRelaxed int }
	counts := map[string]*count{}
	both := 0
	for n := 0; n < 4*want && both < want; n++ {
		variant := []string{"relaxed", "klondike-draw3", "klondike", "klondike dealt out"}[n%4]
		three := 3
		o := domain.Options{Draw: &three}
		if variant != "relaxed" && variant != "klondike-draw3" {
			o = domain.Options{}
		}
		s := walk(rng, seeded(t, strings.TrimSuffix(variant, " dealt out"), o, uint64(9000+n)), rng.IntN(30))
		switch {
		case variant == "klondike dealt out" && n%8 == 3:
			// along a winning line, where there is one, to where the
			// stock is out: won positions with the pass used up
			s = seeded(t, "klondike", o, uint64(9000+n))
			if res := Solve(context.Background(), s, Budget{}); res.Verdict == Winnable {
				s = untilStockOut(t, s, res.Line)
			}
		case variant == "klondike dealt out":
			s = dealOut(t, s)
		}
		g, ok := fromState(s)
		if !ok || !g.relaxable() {
			if ok && g.tl == 0 {
				continue // no talon: the relaxed game is the game
			}
			t.Fatalf("%s seed %d: no relaxation", variant, 9000+n)
		}
		r := g.relaxed() // before the search: a won search leaves g at its won position
		real, relaxed := search(g), search(r)
		if real == Unknown || relaxed == Unknown {
			continue
		}
		both++
		c := counts[variant]
		if c == nil {
			c = &count{}
			counts[variant] = c
		}
		c.both++
		if real == Winnable && relaxed == Unwinnable {
			t.Fatalf("%s seed %d after random play: winnable, but lost with draw 1 and unlimited passes\n%s", variant, 9000+n, s.Board(true))
		}
		if real == Winnable {
			c.won++
		}
		if real == Unwinnable {
			c.lost++
			if relaxed == Unwinnable {
				c.lostRelaxed++
			}
		}
	}
	lost, lostRelaxed := 0, 0
	for _, c := range counts {
		lost += c.lost
		lostRelaxed += c.lostRelaxed
	}
	if both < want || lost == 0 || lostRelaxed < lost/8 {
		t.Fatalf("%d positions decided both ways (want %d); %d lost, %d of them lost relaxed too", both, want, lost, lostRelaxed)
	}
	for _, v := range []string{"relaxed", "klondike-draw3", "klondike", "klondike dealt out"} {
		c := counts[v]
		if c == nil || c.both < want/8 || c.won == 0 || c.lost == 0 {
			t.Fatalf("%s: %+v decided both ways (want %d), won and lost", v, c, want/8)
		}
		t.Logf("%s: %d positions decided both ways; %d won, %d lost, %d of them lost relaxed too", v, c.both, c.won, c.lost, c.lostRelaxed)
	}
}

// untilStockOut plays line from s through domain.Decide up to the first
// position with an empty stock (R2.1).
func untilStockOut(t *testing.T, s *domain.State, line []domain.Move) *domain.State {
	t.Helper()
	st := s.Clone()
	for _, m := range line {
		if len(st.Stock) == 0 {
			break
		}
		evs, _, err := domain.Decide(st, m, st.LastAt)
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		for _, e := range evs {
			st.Apply(e)
		}
	}
	return st
}

// dealOut draws s's stock out (R2.1), leaving every talon card in the
// waste, where a one-pass game (R2.2) can take only the top.
func dealOut(t *testing.T, s *domain.State) *domain.State {
	t.Helper()
	st := s.Clone()
	for len(st.Stock) > 0 {
		evs, _, err := domain.Decide(st, domain.Move{Type: domain.MoveDraw}, st.LastAt)
		if err != nil {
			t.Fatalf("draw with %d stock cards: %v", len(st.Stock), err)
		}
		for _, e := range evs {
			st.Apply(e)
		}
	}
	return st
}

// R7.1: the search and its relaxation taking turns (solve) give the verdict
// of the search alone, and on a lost deal whose relaxation is lost too the
// relaxation ends the search in fewer nodes: relaxed draw-3 seed 405, and
// klondike (draw 1, one pass) seed 1477.
func TestR71RelaxationShortensLostSearches(t *testing.T) {
	t.Parallel()
	three := 3
	for _, c := range []struct {
		variant string
		o       domain.Options
		seed    uint64
	}{{"relaxed", domain.Options{Draw: &three}, 405}, {"klondike", domain.Options{}, 1477}} {
		s := seeded(t, c.variant, c.o, c.seed)
		b := Budget{Nodes: 20_000_000, Time: time.Hour}.withDefaults()
		with := solve(context.Background(), s, b, time.Now(), searchAll)
		g, _ := fromState(s)
		if !g.relaxable() {
			t.Fatalf("%s seed %d: no relaxation", c.variant, c.seed)
		}
		g.sw.noRelax = true
		sr := newSearch(context.Background(), g, b, time.Now())
		if won := sr.run(); won || sr.aborted {
			t.Fatalf("%s seed %d without the relaxation: won %v, aborted %v after %d nodes; want lost", c.variant, c.seed, won, sr.aborted, sr.nodes)
		}
		if with.Verdict != Unwinnable || with.Nodes >= sr.nodes {
			t.Fatalf("%s seed %d: %s in %d nodes with the relaxation, unwinnable in %d without", c.variant, c.seed, with.Verdict, with.Nodes, sr.nodes)
		}
		t.Logf("%s seed %d: unwinnable in %d nodes with the relaxation, %d without", c.variant, c.seed, with.Nodes, sr.nodes)
	}
}

// R7.1: childKey, the key step looks up before it makes a take-back or a
// base move, is the key of the position the move and its automatic moves
// lead to, and automaticAfter makes automatic's moves in automatic's order
// after such a move (the same position, the waste's size included). On positions after random play of seeded deals (draw 1,
// unlimited passes, with take-back, player and automatic flips), every
// candidate it knows a key for is made and keyed; take-backs, base moves
// that turn a card up and moves that empty a pile all occur, and a move
// after which the card turned up goes home is left to the search (no key).
func TestR71ChildKeyIsTheKey(t *testing.T) {
	t.Parallel()
	one, tb := 1, true
	rng := rand.New(rand.NewPCG(77, 3))
	var known, takeBacks, reveals, empties, unknownHome int
	for n := 0; n < 300; n++ {
		o := domain.Options{Draw: &one, TakeBack: &tb}
		if n%2 == 1 {
			flip := domain.FlipAuto
			o.Flip = &flip
		}
		s := walk(rng, seeded(t, "relaxed", o, uint64(23000+n)), rng.IntN(60))
		g, ok := fromState(s)
		if !ok {
			t.Fatal("no compact position")
		}
		sr := newSearch(context.Background(), g, Budget{}.withDefaults(), time.Now())
		if !g.abs {
			continue
		}
		sr.begin()
		// down the search's own moves at random, every known key checked
		for depth := 0; depth < 60; depth++ {
			ms := g.candidates(nil)
			if len(ms) == 0 {
				break
			}
			for _, m := range ms {
				k, ok := sr.childKey(m)
				switch p := &g.tab[m.from]; {
				case !ok:
					if m.kind == kTab && m.to&toFound == 0 && m.pre == 0 {
						unknownHome++
					}
				case m.kind == kTakeBack:
					takeBacks++
				case p.down > 0:
					reveals++
				default:
					empties++
				}
				if ok {
					known++
				}
				n0 := len(sr.path)
				play := func(after bool) {
					mm := m
					if mm.pre > 0 {
						sr.do(move{kind: kTab, from: mm.from, to: mm.pj, n: mm.pre})
						mm.pre = 0
					}
					sr.do(mm)
					if after {
						sr.automaticAfter(mm)
					} else {
						sr.automatic()
					}
				}
				play(false)
				full, fullPath := snapshot(g), slices.Clone(sr.path[n0:])
				if got := g.key(); ok && got != k {
					t.Fatalf("seed %d: childKey %x, key after the move %x\n%s", 23000+n, k, got, s.Board(true))
				}
				sr.back(n0)
				// automaticAfter: automatic's moves, in its order
				play(true)
				if snapshot(g) != full || !slices.Equal(sr.path[n0:], fullPath) {
					t.Fatalf("seed %d: automaticAfter made %v, automatic %v\n%s", 23000+n, sr.path[n0:], fullPath, s.Board(true))
				}
				sr.back(n0)
			}
			m := ms[rng.IntN(len(ms))]
			if m.pre > 0 {
				sr.do(move{kind: kTab, from: m.from, to: m.pj, n: m.pre})
				m.pre = 0
			}
			sr.do(m)
			sr.automatic()
		}
	}
	if takeBacks < 50 || reveals < 50 || empties < 5 || unknownHome < 1 {
		t.Fatalf("%d keys checked: %d take-backs, %d reveals, %d empties; %d base moves left to the search",
			known, takeBacks, reveals, empties, unknownHome)
	}
	t.Logf("%d keys checked: %d take-backs, %d reveals, %d empties; %d base moves left to the search",
		known, takeBacks, reveals, empties, unknownHome)
}
