package solver

import (
	"context"
	"math"
	"math/bits"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// search is one depth-first search from a root position with a
// transposition table of every position entered. A position in the table
// is either fully searched without a win or on the current path (or, with
// the talon dominance, proven lost without a search: dominance.go), so
// skipping it loses no win: the search is exhaustive unless aborted.
type search struct {
	ctx      context.Context
	g        *game
	root     game // the position before any move, for the line
	tt       *table
	maxNodes int64
	deadline time.Time
	clock    func() time.Duration // Budget.Clock, or nil for the wall clock
	clockEnd time.Duration        // on clock: when the time budget ends
	nodes    int64
	aborted  bool

	// Restarts: the search starts again from the root whenever it has
	// expanded limit nodes, with a node limit twice the last and its
	// moves in another order within each class; see run.
	restart int      // restarts made
	first   int64    // the first attempt's node limit: firstLimit (tests set less)
	limit   int64    // nodes at which this attempt stops
	cut     bool     // the attempt stopped at its limit
	keys    []uint64 // keys of the positions on the path (dfs frames)
	base    int      // length of path after the root's automatic moves (begin)

	path  []move // moves from the root: chosen and automatic ones
	undos []undo // to unmake path
	buf   []move // candidate lists of the frames on the path

	dom   *domState // talon dominance (dominance.go), nil where it does not hold
	pairs bool      // a talon card onto the tableau only with a move that uses it (uses)
	probe *prober   // the game's search: relaxation probes (probe.go), or nil
	won   *table    // the prober's search: relaxed positions with a winning line
}

func newSearch(ctx context.Context, g *game, b Budget, start time.Time) *search {
	g.abs = !g.sw.noPrune && g.abstractOK()
	g.rehashAll()
	s := &search{ctx: ctx, g: g, root: *g, tt: newTable(14), maxNodes: b.Nodes,
		deadline: start.Add(b.Time), buf: make([]move, 0, 1024)}
	g.talonPri = prTalon << ordShift
	if g.domOK() {
		s.dom = newDomState()
		g.talonPri = prTalonLast << ordShift
	}
	s.pairs = g.abs && !g.sw.noPrune && !g.sw.noPairs && g.draw == 1 && g.passes == 0
	s.first = firstLimit
	if b.Clock != nil {
		s.clock = b.Clock
		now := b.Clock()
		s.clockEnd = now + min(b.Time, math.MaxInt64-now)
	}
	return s
}

// firstLimit is the node limit of the first attempt (run).
const firstLimit = 10_000

// run searches and reports whether it found a win (then path holds it).
//
// It searches in attempts, restarts from the root with a doubling node
// limit (10,000, 20,000, ...), each attempt's moves in another order
// within their classes (a fixed function of the position and the attempt,
// so a search is the same every time). Depth-first search with a fixed
// order has a heavy tail: an early wrong move can cost a winnable deal
// millions of positions, while another order wins it at once. Nothing is
// lost between attempts: a position that an attempt searched to the end
// stays in the table, and only the positions on the path when it stopped,
// searched in part, are taken out of it. The table then holds positions
// searched to the end and positions on the current path, as the one-attempt
// search does: a position searched to the end skipped a successor only when
// that one was on the path at the time, and a later attempt enters every
// position of that path again (they are all out of the table and linked
// from the root), so an attempt that ends without a win is exhaustive.
// With the talon dominance the positions searched to the end but not yet
// proven lost leave the table too (dominance.go), so that a later hit on
// one never passes for a proof.
func (s *search) run() bool {
	if !s.begin() {
		return false
	}
	first := s.first
	if s.g.sw.noRestart {
		first = math.MaxInt64 / 2
	}
	for limit := first; ; limit *= 2 {
		if won, over := s.attempt(limit); won || over {
			return won
		}
	}
}

// begin makes the root's automatic moves and reports whether a search is
// needed: false when the root is lost without one (frozen, safe.go).
func (s *search) begin() bool {
	s.automatic()
	s.base = len(s.path)
	return !s.g.frozen()
}

// attempt is one attempt of run, after begin: a search from the root that
// stops once it has expanded limit more nodes. It reports whether it won
// (path holds the line) and whether the search is over without a win
// (exhaustive, or aborted by the budget: see aborted); with neither, the
// next attempt goes on from what this one left in the table.
func (s *search) attempt(limit int64) (won, over bool) {
	s.limit = s.nodes + limit
	rootKey := s.g.key()
	s.tt.insert(rootKey)
	s.keys = append(s.keys[:0], rootKey)
	if s.dfs() {
		return true, false
	}
	if !s.cut {
		return false, true // exhaustive, or the budget ran out
	}
	s.back(s.base)
	// The path's positions, the one cut short among them (in the table,
	// never entered: dfs stopped before it), and with the dominance every
	// other position not proven lost.
	for _, k := range s.keys {
		s.tt.remove(k)
	}
	if s.dom != nil {
		s.dom.reset(s.tt)
	}
	s.cut = false
	s.buf = s.buf[:0]
	s.restart++
	return false, false
}

// do makes m and records it on the path.
func (s *search) do(m move) {
	s.undos = append(s.undos, s.g.make(m))
	s.path = append(s.path, m)
}

// back unmakes the path down to length n.
func (s *search) back(n int) {
	for len(s.path) > n {
		s.g.unmake(s.undos[len(s.undos)-1])
		s.undos = s.undos[:len(s.undos)-1]
		s.path = s.path[:len(s.path)-1]
	}
}

// automatic makes the safe moves of safe.go until none is left: flips
// where the player flips, and safe foundation moves from tableau tops and
// (draw 1) the waste's top.
func (s *search) automatic() { s.automaticFrom(0) }

// automaticFrom is automatic with its first pass over the piles starting
// at pile from (automaticAfter).
func (s *search) automaticFrom(from int) {
	g := s.g
	for changed := true; changed; from = 0 {
		changed = false
		next := g.homeNext()
		for i := from; i < g.piles; i++ {
			p := &g.tab[i]
			if p.n == 0 {
				continue
			}
			if p.down == p.n {
				if g.flipPlayer {
					s.do(move{kind: kFlip, from: uint8(i)})
					changed = true
				}
				continue
			}
			if c := p.top(); next&(1<<c) != 0 {
				if f := g.foundFor(c); f >= 0 && g.safeHome(c) {
					s.do(move{kind: kTab, from: uint8(i), to: uint8(f) | toFound, n: 1})
					changed = true
				}
			}
		}
		switch {
		case g.draw == 1 && g.passes == 0:
			// Every talon card is always within reach, and taking one out
			// leaves the others so: a safe one goes home wherever it lies.
			want := next // the talon cards that may go home (every card, with more decks)
			if g.cards == 52 {
				// one deck: the safe ones among them, found before the talon is scanned
				want = 0
				for b := next & g.inTalon; b != 0; b &= b - 1 {
					if c := byte(bits.TrailingZeros64(b)); g.foundFor(c) >= 0 && g.safeHome(c) {
						want |= 1 << c
					}
				}
				if want == 0 {
					break // no talon card goes home now
				}
			}
			for p := 1; p <= g.tl; p++ {
				if c := g.orig[g.talon[p-1]]; want&(1<<c) != 0 {
					if f := g.foundFor(c); f >= 0 && g.safeHome(c) {
						m := move{kind: kTalon, to: uint8(f) | toFound, n: 1, p: uint8(p)}
						if p < g.w {
							m.rc = 1
						}
						s.do(m)
						changed = true
						break
					}
				}
			}
		case g.draw == 1:
			if c := g.wasteTop(); c != noCard && next&(1<<c) != 0 {
				if f := g.foundFor(c); f >= 0 && g.safeHome(c) {
					s.do(move{kind: kWaste, to: uint8(f) | toFound, n: 1})
					changed = true
				}
			}
		}
	}
}

// automaticAfter is automatic after move m, made from a position that
// automatic had left with no automatic move, and makes the same moves in
// the same order. With draw 1 and unlimited passes only a move that sends
// a card home can make another card safe (safeHome depends on the
// foundations alone, and only grows with them), and the talon's cards stay
// within reach whatever leaves it, so after any other move only the pile m
// uncovered can hold an automatic move: a top to turn up, and a top that
// goes home. A take-back uncovers nothing, lowers a foundation and puts a
// card on the tableau that is not safe to go home (no candidate takes back
// a safe card or one of rank 2 or below: absCandidates, useCandidates,
// candidates); a talon card put on the tableau changes no foundation. So
// automatic's first pass would find nothing before that pile (and, with
// player flips, turn it up and find nothing else, its second pass nothing
// before it): the moves start there, and automaticFrom makes the rest in
// automatic's order, so the position reached, the waste's size included, is
// automatic's.
func (s *search) automaticAfter(m move) {
	g := s.g
	if g.draw != 1 || g.passes != 0 || m.to&toFound != 0 {
		s.automatic()
		return
	}
	switch m.kind {
	case kTakeBack, kTalon, kWaste:
		return
	case kTab:
		i := int(m.from)
		p := &g.tab[i]
		if p.n == 0 {
			return
		}
		if p.down == p.n {
			if !g.flipPlayer {
				return // cannot be: make turns it up
			}
			s.do(move{kind: kFlip, from: uint8(i)})
		}
		if c := p.top(); g.homeNext()&(1<<c) != 0 {
			if f := g.foundFor(c); f >= 0 && g.safeHome(c) {
				s.automaticFrom(i)
			}
		}
		return
	}
	s.automatic()
}

// dfs searches from the current position, which is in the table.
func (s *search) dfs() bool {
	g := s.g
	if g.onFound == g.cards {
		return true
	}
	s.nodes++
	if s.nodes > s.maxNodes {
		s.aborted = true
		return false
	}
	if s.nodes > s.limit && s.nodes < s.maxNodes/2 {
		s.cut = true // a restart, unless this attempt could not end before the budget anyway
		return false
	}
	if s.nodes&1023 == 0 {
		if s.timeUp() || s.ctx.Err() != nil {
			s.aborted = true
			return false
		}
	}
	var idx, low int32
	var sp int
	if s.dom != nil {
		idx, sp = s.dom.enter(g, s.keys[len(s.keys)-1])
		low = idx
	}
	start := len(s.buf)
	s.buf = g.candidates(s.buf)
	end := len(s.buf)
	if s.restart > 0 {
		shuffleClasses(s.buf[start:end], s.keys[len(s.keys)-1]^uint64(s.restart)*0x9E3779B97F4A7C15)
	}
	for i := start; i < end; i++ {
		n := len(s.path)
		m := s.buf[i]
		if s.pairs && m.kind == kTalon && m.to&toFound == 0 {
			// a talon card onto the tableau, then a move that uses it
			if s.place(m, &low) {
				return true
			}
		} else if s.step(m, &low) {
			return true
		}
		if s.aborted || s.cut {
			return false
		}
		s.back(n)
	}
	s.buf = s.buf[:start]
	if s.dom != nil {
		s.dom.leave(idx, low, sp)
	}
	return false
}

// step makes m (with its freeing move first, abstract mode) and the
// automatic moves after it, and searches the position it leads to unless
// the table holds it or it is dominated (dominance.go); a take-back or a
// base move whose position the table holds is not even made (childKey:
// on the slowest lost draw-1 deals three in four of the positions the
// moves lead to are in the table already, and these two kinds are most of
// them); low is the
// caller's low index (dominance.go), lowered by what the step meets. It
// reports a win; the caller unmakes the moves.
func (s *search) step(m move, low *int32) bool {
	if m.pre > 0 {
		// abstract mode: free the card first (abstract.go)
		s.do(move{kind: kTab, from: m.from, to: m.pj, n: m.pre})
		m.pre = 0
	}
	k, known := s.childKey(m)
	if known && s.tt.has(k) {
		if s.dom != nil {
			*low = s.dom.hit(k, *low)
		}
		return false
	}
	s.do(m)
	s.automaticAfter(m)
	return s.node(low)
}

// childKey is the key of the position move m leads to, automatic moves
// made, when it can tell without making m: in abstract mode with draw 1
// and unlimited passes (the key is the talon's sum plus pk), for a take-back
// and for a base moving with its run onto another pile (the moves after
// which no automatic move or one flip follows: automaticAfter says why),
// unless the card the move turns up goes home. known is false elsewhere.
func (s *search) childKey(m move) (k uint64, known bool) {
	g := s.g
	if !g.abs || g.draw != 1 || g.passes != 0 || s.won != nil || m.pre > 0 || m.to&toFound != 0 {
		return 0, false
	}
	k = g.th + g.pk
	var placed byte
	switch m.kind {
	case kTakeBack:
		c := g.found[m.from]
		if rankOf[c] == 1 {
			return 0, false
		}
		k += foundKey[c-1] - foundKey[c]
		placed = c
	case kTab:
		i := int(m.from)
		p := &g.tab[i]
		if int(p.n)-int(m.n) != int(p.down) {
			return 0, false // not a base with its whole run
		}
		placed = p.c[p.down]
		l := 0
		if p.down > 0 {
			c := p.c[p.down-1] // turned up
			if g.homeNext()&(1<<c) != 0 && g.foundFor(c) >= 0 && g.safeHome(c) {
				return 0, false // it goes home: automatic moves follow
			}
			switch {
			case p.down > 1:
				l = int(p.down)
			case p.c[0] == g.orig0[i]:
				l = 1
			}
		}
		k += lockKey[i][l] - g.ph[i]
	default:
		return 0, false
	}
	if j := int(m.to); g.tab[j].n == 0 && placed == g.orig0[j] {
		k += lockKey[j][1] - g.ph[j] // back on its own pile's bottom: a base again
	}
	return k, true
}

// place makes m, a talon card onto the tableau, and searches on with the
// moves that may follow it (uses). No automatic move follows it with draw
// 1 and unlimited passes, where it is used: the position before was left
// with none (every search position is: step, begin), a card put down
// changes no foundation and turns nothing up, and the card itself, were it
// safe to go home, would have gone home from the talon, where it was in
// reach. Elsewhere the automatic moves are made, and were one to follow,
// the position would be searched as any other (a node of the table, every
// move searched): the argument of uses looks at the next move only.
// It reports a win; the caller unmakes the moves.
func (s *search) place(m move, low *int32) bool {
	g := s.g
	x := g.orig[g.talon[m.p-1]]
	n := len(s.path)
	s.do(m)
	if g.draw != 1 || g.passes != 0 {
		s.automatic()
		if len(s.path) > n+1 {
			return s.node(low)
		}
	}
	return s.uses(x, low)
}

// node searches the current position, reached by a move of the caller's
// position, unless the table holds it or it is dominated; see step.
func (s *search) node(low *int32) bool {
	g := s.g
	k := g.key()
	if s.won != nil && s.won.has(k) {
		return true // the prober's search: won by an earlier probe (probe.go)
	}
	if !s.tt.insert(k) {
		if s.dom != nil {
			*low = s.dom.hit(k, *low)
		}
		return false
	}
	if s.dom != nil && s.dom.dominated(g, k) {
		s.dom.cuts++ // lost: it stays in the table as such
		return false
	}
	if s.probe != nil {
		if s.probe.lost(s.maxNodes-s.nodes, &s.maxNodes, &s.limit, &s.aborted) {
			s.probe.cuts++ // lost: it stays in the table as such
			return false
		}
		if s.aborted {
			return false
		}
	}
	s.keys = append(s.keys, k)
	if s.dfs() {
		return true
	}
	if s.aborted || s.cut {
		return false
	}
	s.keys = s.keys[:len(s.keys)-1]
	if s.dom != nil {
		*low = min(*low, s.dom.low)
	}
	return false
}

// uses searches on from a position where card x has just been put on the
// tableau from the talon (draw 1, unlimited passes, abstract mode) with the
// moves that use x there only (usesCard, useCandidates): by the argument of abstract.go
// for idle talon cards, a winning line can always put a talon card on the
// tableau just before the first move that needs it there, so the position
// in between is no search node (it is not keyed: the table holds only
// positions searched with every move). When that move puts another talon
// card on the tableau, the moves after it must use that one in turn. The
// uses are tried in one fixed order in every attempt (run reorders the
// moves of nodes only).
//
// Elsewhere (draw 3, or passes limited) the argument holds only past moves
// that leave the talon alone, and talon moves would have to follow too: a
// second list of candidates per talon move, which costs more time than the
// positions it saves (BENCHMARKS.md "Solver"), so there a talon card's
// move is a move like any other.
func (s *search) uses(x byte, low *int32) bool {
	g := s.g
	start := len(s.buf)
	s.buf = g.useCandidates(s.buf, x)
	end := len(s.buf)
	for i := start; i < end; i++ {
		m := s.buf[i]
		n := len(s.path)
		if m.kind == kTalon && m.to&toFound == 0 {
			if s.place(m, low) {
				return true
			}
		} else if s.step(m, low) {
			return true
		}
		if s.aborted || s.cut {
			return false
		}
		s.back(n)
	}
	s.buf = s.buf[:start]
	return false
}

// shuffleClasses puts the moves of each class of ms (sorted by class) in
// an order drawn from seed (a Fisher-Yates shuffle on SplitMix64).
func shuffleClasses(ms []move, seed uint64) {
	for i := 0; i < len(ms); {
		j := i + 1
		for j < len(ms) && ms[j].pri == ms[i].pri {
			j++
		}
		for k := j - 1; k > i; k-- {
			seed = splitmix(seed)
			r := i + int(seed%uint64(k-i+1))
			ms[k], ms[r] = ms[r], ms[k]
		}
		i = j
	}
}

// timeUp reports whether the time budget has run out.
func (s *search) timeUp() bool {
	if s.clock != nil {
		return s.clock() >= s.clockEnd
	}
	return time.Now().After(s.deadline)
}

// line expands the path into move requests, replaying it on a copy of the
// root: a talon move becomes its draws (recycles included) and the play
// from the waste; flips appear where the player flips (automatic ones are
// the server's).
func (s *search) line() []domain.Move {
	g := s.root
	out := make([]domain.Move, 0, 2*len(s.path))
	for _, m := range s.path {
		if m.kind == kTalon {
			rec := g.rec + int(m.rc)
			for guard := 0; (g.w != int(m.p) || g.rec != rec) && guard <= 2*maxCards+2; guard++ {
				g.make(move{kind: kDraw})
				out = append(out, domain.Move{Type: domain.MoveDraw})
			}
			m = move{kind: kWaste, to: m.to, n: 1}
		}
		g.make(m)
		out = append(out, m.request())
	}
	return out
}
