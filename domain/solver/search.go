package solver

import (
	"context"
	"math"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// search is one depth-first search from a root position with a
// transposition table of every position entered. A position in the table
// is either fully searched without a win or on the current path, so
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

	path  []move // moves from the root: chosen and automatic ones
	undos []undo // to unmake path
	buf   []move // candidate lists of the frames on the path
}

func newSearch(ctx context.Context, g *game, b Budget, start time.Time) *search {
	g.abs = !g.noPrune && g.abstractOK()
	s := &search{ctx: ctx, g: g, root: *g, tt: newTable(14), maxNodes: b.Nodes,
		deadline: start.Add(b.Time), buf: make([]move, 0, 1024)}
	if b.Clock != nil {
		s.clock = b.Clock
		now := b.Clock()
		s.clockEnd = now + min(b.Time, math.MaxInt64-now)
	}
	return s
}

// run searches and reports whether it found a win (then path holds it).
func (s *search) run() bool {
	s.automatic()
	if s.g.frozen() {
		return false // lost: exhaustive without a search (safe.go)
	}
	s.tt.insert(s.g.key())
	return s.dfs()
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
func (s *search) automatic() {
	g := s.g
	for changed := true; changed; {
		changed = false
		next := g.homeNext()
		for i := 0; i < g.piles; i++ {
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
			for p := 1; p <= g.tl; p++ {
				if c := g.orig[g.talon[p-1]]; next&(1<<c) != 0 {
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
	if s.nodes&1023 == 0 {
		if s.timeUp() || s.ctx.Err() != nil {
			s.aborted = true
			return false
		}
	}
	start := len(s.buf)
	s.buf = g.candidates(s.buf)
	end := len(s.buf)
	for i := start; i < end; i++ {
		n := len(s.path)
		m := s.buf[i]
		if m.pre > 0 {
			// abstract mode: free the card first (abstract.go)
			s.do(move{kind: kTab, from: m.from, to: m.pj, n: m.pre})
			m.pre = 0
		}
		s.do(m)
		s.automatic()
		if s.tt.insert(g.key()) {
			if s.dfs() {
				return true
			}
			if s.aborted {
				return false
			}
		}
		s.back(n)
	}
	s.buf = s.buf[:start]
	return false
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
