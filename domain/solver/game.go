package solver

import "github.com/openpatience/solitaire/domain"

// Bounds of the compact position, from domain.Rules.Validate: at most 3
// decks (156 cards), 13 tableau piles, 12 foundations. A pile holds at most
// every card face down plus a face-up run of 13.
const (
	maxPiles = 13
	maxFound = 12
	maxCards = 156
	pileCap  = maxCards + 13
	noCard   = 0xFF
)

// Cards are domain.Card values (suit*13 + rank-1, 0..51); rank and colour
// by table because the move generator asks for them in its inner loops.
var rankOf, redOf = func() (r [256]int8, red [256]bool) {
	for c := 0; c < 52; c++ {
		r[c] = int8(c%13 + 1)
		red[c] = c/13 == 1 || c/13 == 2 // diamonds, hearts (R1.1)
	}
	return
}()

// fits reports whether card c goes on tableau card t (R1.5).
func fits(c, t byte) bool { return rankOf[c]+1 == rankOf[t] && redOf[c] != redOf[t] }

// fitsFound reports whether card c goes on a foundation whose top is top
// (noCard: empty), R1.4.
func fitsFound(c, top byte) bool {
	if top == noCard {
		return rankOf[c] == 1
	}
	return c == top+1 && rankOf[c] != 1
}

// pile is one tableau pile: c[:n] bottom first, the first down face down.
type pile struct {
	n, down uint8
	c       [pileCap]byte
}

func (p *pile) top() byte { return p.c[p.n-1] }

// game is the compact, mutable position the search works on. The stock and
// waste are one list, the talon, in draw order: the waste bottom first,
// then the stock from the card drawn next. talon holds indices into orig
// (the talon at the root), so the talon's hash is a function of which cards
// have left it; w is the waste's size.
type game struct {
	// rules
	piles, nfound, cards int
	draw, passes         int // passes 0 = unlimited
	seq, takeBack        bool
	flipPlayer           bool
	// sw turns parts of the search off (tests, and solve's search
	// modes) and counts the moves the pruning drops (tests)
	sw switches
	// abs: the position is searched up to the arrangement of its face-up
	// runs (abstract.go); orig0 is each pile's bottom card at the root
	// (noCard for an empty pile), the one base abstract mode must tell
	// from a king that came later.
	abs   bool
	orig0 [maxPiles]byte
	// position
	tab     [maxPiles]pile
	found   [maxFound]byte // top card, noCard when empty
	orig    [maxCards]byte
	talon   [maxCards]byte
	tl, w   int // talon length, waste size
	rec     int // recycles made
	onFound int
	// height is the rank on the foundation of each suit, 0 for none, with
	// one deck only (a suit's cards lie on one foundation; with more it
	// stays zero), read by safeHome1; kept by setFound, as is the
	// foundations' part of pk
	height [4]int8
	next   uint64 // homeNext with one deck (less the aces already home), kept by setFound
	// hashes, kept up to date by every change
	ph [maxPiles]uint64 // per tableau pile
	th uint64           // talon: sum of the keys of the cards gone
	pk uint64           // the sum of ph and of the foundations' keys (pilesKey)
	// inTalon has bit c set while card c is in the talon (one deck only:
	// with more, a bit cannot count the copies), kept by addTalonKey
	inTalon uint64

	// abstract mode, during candidates: the piles that take each card
	// and the cards some pile takes (takers)
	tkA, tkB [52]int8
	tkPlace  uint64

	// talonPri is the class (shifted by ordShift) of talon moves in the
	// search order: prTalon (fromState), or prTalonLast where the talon
	// dominance holds (newSearch; the relaxation probes search on the
	// game's own position, which keeps the game's order)
	talonPri uint8

	scratch [pileCap]byte
	runs    [maxPiles]uint8 // candidates: runLen of every pile
}

// switches turns parts of the search off, for the tests that compare
// verdicts and node counts with and without them and for solve's search
// modes (searchWins, searchNoPrune); the zero value searches with every
// part. It is one field of game so that the hot position carries them as
// one value, copied with it.
type switches struct {
	noPrune    bool // no dominance pruning of tableau moves (candidates)
	countDrops bool // tests: count the rearrangements abstract mode leaves out in dropped
	noRestart  bool // one attempt, no restarts (search.run)
	noIdle     bool // tests: no waiting of idle talon cards (abstract.go)
	noRelax    bool // no draw-1 relaxation beside the search (relax.go)
	noDom      bool // no talon dominance (dominance.go)
	noPairs    bool // no pairs: a talon card onto the tableau as a move of its own (search.uses)
	noProbe    bool // tests: no relaxation probes (probe.go)
	logCuts    bool // tests: keep the positions the probes cut (prober.log)
	dropped    int  // tests: tableau moves the pruning dropped, counted from 0
}

// fromState builds the compact position of s. It reports false for a
// state outside the bounds above (Rules.Validate keeps every game inside).
func fromState(s *domain.State) (*game, bool) {
	r := s.Rules
	if r.Piles < 1 || r.Piles > maxPiles || r.Foundations > maxFound || len(s.Tableau) != r.Piles ||
		len(s.Foundations) > maxFound || r.Decks < 1 || r.Decks > 3 {
		return nil, false
	}
	g := &game{piles: r.Piles, nfound: r.Foundations, cards: r.Cards(), draw: r.Draw, passes: r.Passes,
		seq: r.Sequences, takeBack: r.TakeBack, flipPlayer: r.Flip == domain.FlipPlayer, rec: s.Recycles,
		talonPri: prTalon << ordShift}
	if g.draw < 1 {
		g.draw = 1
	}
	for i := range g.found {
		g.found[i] = noCard
	}
	if g.cards == 52 {
		g.next = 1 | 1<<13 | 1<<26 | 1<<39 // every ace, until setFound below
	}
	for i, f := range s.Foundations {
		if len(f) > 0 {
			g.setFound(i, byte(f[len(f)-1]))
			g.onFound += len(f)
		}
	}
	for i, t := range s.Tableau {
		if len(t.Cards) > pileCap {
			return nil, false
		}
		g.orig0[i] = noCard
		if len(t.Cards) > 0 {
			g.orig0[i] = byte(t.Cards[0])
		}
		p := &g.tab[i]
		p.n, p.down = uint8(len(t.Cards)), uint8(t.Down)
		for k, c := range t.Cards {
			p.c[k] = byte(c)
		}
		g.rehashPile(i)
	}
	if len(s.Waste)+len(s.Stock) > maxCards {
		return nil, false
	}
	for _, c := range s.Waste {
		g.orig[g.tl] = byte(c)
		g.tl++
	}
	for i := len(s.Stock) - 1; i >= 0; i-- {
		g.orig[g.tl] = byte(s.Stock[i])
		g.tl++
	}
	for i := 0; i < g.tl; i++ {
		g.talon[i] = byte(i)
		g.inTalon |= 1 << (g.orig[i] & 63)
	}
	g.w = len(s.Waste)
	return g, true
}

// canRecycle reports whether a pass is left for a recycle (R2.1, R3).
func (g *game) canRecycle() bool { return g.passes == 0 || g.rec < g.passes-1 }

// takes reports whether tableau pile j takes card c as the head of what is
// moved (R1.5): an empty pile a king, a face-down top nothing.
func (g *game) takes(j int, c byte) bool {
	p := &g.tab[j]
	if p.n == 0 {
		return rankOf[c] == 13
	}
	if p.down == p.n {
		return false
	}
	return fits(c, p.c[p.n-1])
}

// runLen is the length of the face-up run on top of pile i (R1.6); 0 when
// the top is face down or the pile empty.
func (g *game) runLen(i int) int {
	p := &g.tab[i]
	up := int(p.n) - int(p.down)
	if up <= 0 {
		return 0
	}
	k := 1
	for k < up && fits(p.c[int(p.n)-k], p.c[int(p.n)-k-1]) {
		k++
	}
	return k
}

// foundFor is the lowest-numbered foundation that takes c, or -1 (R2.2).
func (g *game) foundFor(c byte) int {
	for i := 0; i < g.nfound; i++ {
		if fitsFound(c, g.found[i]) {
			return i
		}
	}
	return -1
}

// homeNext is the set of cards (bit c for card c) that some foundation
// takes now: the next card of every foundation's suit, every ace while a
// foundation is empty (R1.4); with one deck less the aces already home,
// which are nowhere to be asked about.
func (g *game) homeNext() uint64 {
	if g.cards == 52 {
		return g.next // kept by setFound
	}
	return g.nextOf()
}

// wasteTop is the waste's top card, or noCard.
func (g *game) wasteTop() byte {
	if g.w == 0 {
		return noCard
	}
	return g.orig[g.talon[g.w-1]]
}

// Move kinds. A move's destination `to` is a tableau index, or foundation
// index | toFound.
const (
	kDraw     = iota + 1 // one draw or recycle (R2.1)
	kWaste               // waste top -> to
	kTab                 // n cards from tableau `from` -> to
	kTakeBack            // foundation `from` -> tableau to (R2.3)
	kFlip                // flip tableau `from` (R2.4, player flips)
	kTalon               // draw (recycling first when rc is 1) to waste size p, then waste top -> to
	toFound   = 0x80
)

// move is a search or primitive move; see the kinds above.
type move struct {
	kind, from, to, n uint8
	p                 uint8 // kTalon: the waste size to draw to
	rc                uint8 // kTalon: 1 if the draws recycle once
	pri               uint8 // candidates: the move's class in the search order
	// pre, pj (abstract mode): before the move, the top pre cards of pile
	// from move onto pile j, to free the card the move takes home.
	pre, pj uint8
}

// undo is what unmake needs besides the move.
type undo struct {
	m       move
	flipped bool  // an automatic flip followed (flips auto)
	w, rec  int32 // talon pointer and recycles before the move
	tpos    int32 // talon position of the card played (kWaste, kTalon)
	tidx    byte  // its index into orig
}

// make plays m, which must be legal, and returns how to unmake it. Where
// flips are automatic it turns up a face-down card the move uncovers, as
// domain.Decide does (R2.4).
func (g *game) make(m move) undo {
	u := undo{m: m, w: int32(g.w), rec: int32(g.rec)}
	switch m.kind {
	case kDraw:
		if g.w < g.tl {
			g.w = min(g.w+g.draw, g.tl)
		} else {
			g.w = 0
			g.rec++
		}
	case kFlip:
		g.tab[m.from].down--
		g.rehashPile(int(m.from))
	case kTalon, kWaste:
		if m.kind == kTalon {
			g.w = int(m.p)
			g.rec += int(m.rc)
		}
		u.tpos = int32(g.w - 1)
		idx := g.talon[u.tpos]
		u.tidx = idx
		copy(g.talon[u.tpos:g.tl-1], g.talon[u.tpos+1:g.tl])
		g.tl--
		g.w--
		g.addTalonKey(idx, 1)
		g.put(m.to, []byte{g.orig[idx]})
	case kTab:
		p := &g.tab[m.from]
		k := int(p.n) - int(m.n)
		g.put(m.to, p.c[k:p.n])
		p.n = uint8(k)
		if !g.flipPlayer && p.n > 0 && p.down == p.n {
			p.down--
			u.flipped = true
		}
		g.rehashPile(int(m.from))
	case kTakeBack:
		c := g.found[m.from]
		g.foundPop(int(m.from))
		g.put(m.to, []byte{c})
	}
	return u
}

// unmake reverts make's move.
func (g *game) unmake(u undo) {
	m := u.m
	switch m.kind {
	case kDraw:
	case kFlip:
		g.tab[m.from].down++
		g.rehashPile(int(m.from))
	case kTalon, kWaste:
		g.take(m.to, 1)
		copy(g.talon[u.tpos+1:g.tl+1], g.talon[u.tpos:g.tl])
		g.tl++
		g.talon[u.tpos] = u.tidx
		g.addTalonKey(u.tidx, -1)
	case kTab:
		p := &g.tab[m.from]
		if u.flipped {
			p.down++
		}
		cards := g.take(m.to, int(m.n))
		copy(p.c[p.n:], cards)
		p.n += m.n
		g.rehashPile(int(m.from))
	case kTakeBack:
		c := g.take(m.to, 1)[0]
		g.setFound(int(m.from), c)
		g.onFound++
	}
	g.w, g.rec = int(u.w), int(u.rec)
}

// put places cards (bottom first) on destination to.
func (g *game) put(to uint8, cards []byte) {
	if to&toFound != 0 {
		g.setFound(int(to&^toFound), cards[0])
		g.onFound++
		return
	}
	p := &g.tab[to]
	copy(p.c[p.n:], cards)
	p.n += uint8(len(cards))
	g.rehashPile(int(to))
}

// take removes the top n cards of destination to and returns them (valid
// until the next change of that pile).
func (g *game) take(to uint8, n int) []byte {
	if to&toFound != 0 {
		f := int(to &^ toFound)
		c := g.found[f]
		g.foundPop(f)
		g.scratch[0] = c
		return g.scratch[:1]
	}
	p := &g.tab[to]
	p.n -= uint8(n)
	copy(g.scratch[:n], p.c[p.n:int(p.n)+n])
	g.rehashPile(int(to))
	return g.scratch[:n]
}

// foundPop removes the top card of foundation f.
func (g *game) foundPop(f int) {
	c := g.found[f]
	if rankOf[c] == 1 {
		g.setFound(f, noCard)
	} else {
		g.setFound(f, c-1)
	}
	g.onFound--
}

// setFound makes c (noCard: none) the top card of foundation f, keeping
// pk and height.
func (g *game) setFound(f int, c byte) {
	t := g.found[f]
	if t == noCard && c == noCard {
		return
	}
	if t != noCard {
		g.pk -= foundKey[t]
	}
	g.found[f] = c
	if c != noCard {
		g.pk += foundKey[c]
	}
	if g.cards != 52 {
		return
	}
	s, h := t/13, int8(0) // an ace taken off: its suit is on no foundation
	if c != noCard {
		s, h = c/13, rankOf[c]
	}
	g.height[s] = h
	g.next &^= suitCards << (13 * s)
	if h < 13 {
		g.next |= 1 << (13*s + byte(h))
	}
}

// suitCards is the set of the clubs (bit c for card c); shifted by 13
// times a suit, that suit's.
const suitCards = 1<<13 - 1

// nextOf is homeNext computed from the foundations.
func (g *game) nextOf() uint64 {
	var m uint64
	for i := 0; i < g.nfound; i++ {
		switch t := g.found[i]; {
		case t == noCard:
			m |= 1 | 1<<13 | 1<<26 | 1<<39
		case rankOf[t] < 13:
			m |= 1 << (t + 1)
		}
	}
	return m
}
