package solver

import "math"

// Relaxation probes: the draw-1 relaxation (relax.go) of the positions of
// the game's search, not only of its root.
//
// The claim of relax.go holds for any position, not only for a deal: if
// the relaxed game (the same tableau, foundations and talon cards, draw 1,
// unlimited passes) has no winning line from a position, neither has the
// game. So a position of the game's search whose relaxation is lost is
// lost, and is not searched: it goes into the table as a position searched
// to the end without a win, which it is as far as the table's argument
// (search.go) goes.
//
// Why: with draw 3 the lost deals that take longest are those whose
// relaxation is won (so the relaxation of the root proves nothing), and in
// them nearly every position the game's search enters has a lost
// relaxation (on `relaxed` draw-3 seed 306, 2,805 of 2,813 positions
// sampled from the search). The relaxed search is far narrower than the
// game's (every talon card always within reach, the talon pairs and
// dominance of search.uses and dominance.go, no talon order in its key),
// so a position's relaxation is proven lost in few positions, and the
// game's search below it is never made.
//
// How: once the relaxation of the root is won (portfolio), its search
// becomes the prober: every position the game's search is about to enter
// is first searched with the relaxed rules, in place (the same position
// under draw 1 and unlimited passes, unmade afterwards), from the same
// relaxed table and talon dominance, with probeNodes nodes at most. The
// relaxed table then holds, between probes, only relaxed positions proven
// lost (a probe that wins or stops takes its unproven positions out, as a
// restart does: dominance.go), so a later probe that meets one has proven
// it lost too. Relaxed positions on a probe's winning path are kept as
// won, and a later probe that reaches one has won. A probe that stops at
// its budget decides nothing: the position is searched. Each probe's
// verdict is kept by the position's talon set, piles and foundations
// (pilesKey plus the talon's sum), which is all the relaxation sees, so
// positions that differ only in the talon's order or the waste's size are
// probed once. The probes' nodes count in the budget and in the game's
// search's attempt limits (search.run).
//
// The table's invariant needs "lost" to be exact, which the talon
// dominance's bookkeeping gives (dominance.go): without it a position
// searched to the end may have skipped a won ancestor, so there are no
// probes without the dominance (a test flag only).
//
// With a limit on passes (klondike-draw3: three, and no take-back) the
// relaxation, which has neither, is won from more of the positions, and
// the probes cut less; over all its deals they still save time
// (BENCHMARKS.md "Solver"), so they run there too.
//
// With draw 1 and one pass (klondike) they cost more than they cut
// (BENCHMARKS.md "Solver"), so with draw 1 the relaxation runs from the
// root only (portfolio).
//
// Only with draw 3 and the draw-1 relaxation (relaxable: one deck,
// abstract mode), not for Prove and Difficulty (searchWins), and only once
// the root's relaxation is won: where it is lost the portfolio proves the
// deal lost without probes, and a deal the search wins within its first
// attempts is searched as before.

// probeNodes is a probe's node budget: a probe that has not proven its
// position lost within it decides nothing. Budgets from 500 to 8,000 cost
// the same within the machine's noise (BENCHMARKS.md "Solver").
const probeNodes = 2000

// prober is the relaxation's search serving the probes, on the game
// search's own position g.
type prober struct {
	s     *search   // the relaxation's search (portfolio), its g the game's
	seen  *verdicts // the probes' verdicts by pilesKey plus talon sum: true for lost
	calls int64     // probes searched (not answered from seen)
	cuts  int64     // positions of the game's search proven lost
	log   []game    // tests (game.sw.logCuts): the positions cut
}

// newProber makes the relaxation's search rx, which has just won from the
// root, the prober of the game's position g.
func newProber(rx *search, g *game) *prober {
	rx.won = newTable(12)
	p := &prober{s: rx, seen: newVerdicts(12)}
	p.settle(true)
	rx.back(0)
	rx.g = g
	return p
}

// settle ends a relaxed search that won (won) or stopped before its end:
// the positions on its path are won or unproven, and leave the table with
// every other unproven position (dominance.go reset), so that the table
// holds proven lost positions only.
func (p *prober) settle(won bool) {
	s := p.s
	if won {
		for _, k := range s.keys {
			s.won.insert(k)
		}
	}
	for _, k := range s.keys {
		s.tt.remove(k)
	}
	if s.dom != nil {
		s.dom.reset(s.tt)
	}
	s.keys = s.keys[:0]
	s.cut = false
}

// lost reports whether the relaxation of the game's current position is
// proven lost within probeNodes nodes, or left if fewer (what the game
// search's node budget has left; none: no probe). The nodes it takes come
// off *budget (the game search's node budget) and *limit (its attempt
// limit). When the time budget or the context ends the probe, it sets
// *aborted. The position is the same afterwards.
func (p *prober) lost(left int64, budget, limit *int64, aborted *bool) (lost bool) {
	if left <= 0 {
		return false // the game's search stops at this node
	}
	s, g := p.s, p.s.g
	pre := g.pilesKey() + g.th
	if known, v := p.seen.get(pre); known {
		return v
	}
	p.calls++
	n0 := s.nodes
	var k uint64
	draw, passes, rec := g.draw, g.passes, g.rec
	defer func() {
		*budget -= s.nodes - n0
		*limit -= s.nodes - n0
		s.back(0)
		g.draw, g.passes, g.rec = draw, passes, rec
		switch {
		case lost:
			p.seen.put(pre, true)
			if g.sw.logCuts {
				p.log = append(p.log, *g)
			}
		case !*aborted && s.won.has(k):
			p.seen.put(pre, false)
		}
	}()
	g.draw, g.passes, g.rec = 1, 0, 0
	s.path, s.undos, s.buf = s.path[:0], s.undos[:0], s.buf[:0]
	s.cut, s.aborted = false, false
	s.automatic()
	k = g.key()
	if s.won.has(k) {
		return false
	}
	if !s.tt.insert(k) {
		return true // proven lost by an earlier probe
	}
	if s.dom != nil && s.dom.dominated(g, k) {
		return true
	}
	s.keys = append(s.keys[:0], k)
	s.limit = math.MaxInt64 // no restarts within a probe
	s.maxNodes = s.nodes + min(probeNodes, left)
	if won := s.dfs(); won || s.aborted {
		if s.aborted && (s.timeUp() || s.ctx.Err() != nil) {
			*aborted = true
		}
		p.settle(won)
		return false
	}
	s.keys = s.keys[:0] // exhaustive: the root's component closed, all proven lost
	return true
}

// verdicts is an open-addressing map from 63-bit keys to one bit, in one
// word a slot (a table of the key less its lowest bit, plus the bit).
type verdicts struct{ t *table }

func newVerdicts(logSize uint) *verdicts { return &verdicts{newTable(logSize)} }

// get reports whether k has a bit, and the bit.
func (v *verdicts) get(k uint64) (known, bit bool) {
	t := v.t
	k = slotKey(k)
	mask := uint64(len(t.slots) - 1)
	for i := k >> t.shift; ; i = (i + 1) & mask {
		switch s := t.slots[i]; {
		case s == 0:
			return false, false
		case s&^1 == k:
			return true, s&1 == 1
		}
	}
}

// put gives k the bit; k must not have one yet.
func (v *verdicts) put(k uint64, bit bool) {
	k = slotKey(k)
	if bit {
		k |= 1
	}
	v.t.insert(k)
}

// slotKey is k less its lowest bit, never zero (the empty slot).
func slotKey(k uint64) uint64 {
	if k &^= 1; k == 0 {
		return 2
	}
	return k
}
