package solver

import "math/bits"

// Abstract mode: one deck, sequence moves (R1.6). The search then works on
// positions up to the arrangement of the face-up cards, as lonelybot does,
// which removes every tableau move that only rearranges runs.
//
// Terms. A pile's locked cards are its face-down cards and its base, the
// lowest face-up card, when that card has been in the pile since the root
// (its face-down cards, or the pile's own bottom card); a pile that was
// emptied and took a king has no locked card. The locked count of pile i
// (locked) fixes which cards those are: the face-down cards never change
// order, and a base leaves only by a move that turns up the card under it
// (R2.4), so pile i with l locked cards holds the first l cards it held at
// the root (its bottom card at the root for l = 1). Every other face-up
// tableau card lies on a card of the next rank and the other colour (the
// face-up part of a pile is a run: only fitting cards are put there), or
// is a king at the bottom of a pile.
//
// The abstract position is the locked counts, the foundations and the
// talon. It fixes the set of face-up cards (the rest), so it fixes, for
// every card c, how many cards of c's class (its rank and colour: c and
// its twin, the other suit of that colour) lie on a card, and how many
// cards c could lie on are face up. Claim: two positions with the same
// abstract position are both winnable or both not. Every move is one of
//
//   - a rearrangement: a run whose lowest card is not a base moves from one
//     card to another (or a king's run to an empty pile); the abstract
//     position is unchanged;
//   - a card put on the tableau (from the talon, a foundation, or a base
//     with its run): legal in some arrangement iff a card it fits on is
//     face up and free, and the number of free ones is the face-up cards it
//     fits on minus the cards of its class that lie on one, which the
//     abstract position fixes; a king needs an empty pile, and the piles in
//     use are those with locked cards plus the face-up kings that are not
//     bases, fixed too;
//   - a face-up card x goes home: legal iff x can be made a top, iff the
//     cards of x's child class (the rank below, the other colour) that lie
//     on a card are no more than the face-up twins of x (each lies on x or
//     its twin; one on x moves to a free twin in one move, the run on it
//     along); fixed too;
//   - the talon's moves, which do not look at the tableau.
//
// Each non-rearranging move leads to the same abstract position from any
// arrangement. So from two positions with one abstract position the same
// moves are possible, up to rearrangements, and they lead again to positions
// with one abstract position: by induction on a winning line's moves, one
// is won iff the other is. The search therefore keys positions by the
// abstract position (hash.go) and makes only non-rearranging moves: a card
// onto one free card (any free card gives the same abstract position), a
// king into the first empty pile, a base with its run, and a card home
// after at most one rearrangement (the run on it onto its free twin),
// which the path records as two primitive moves, so every line stays a
// line of legal moves. What a face-down card faces is the locked cards'
// business only, so the proof holds with draw 1 or 3, any passes, with or
// without take-back, and with player flips (flips are automatic in the
// search, safe.go).

// abstractOK reports whether the position can be searched in abstract
// mode: one deck, sequence moves, the face-up part of every pile a run.
func (g *game) abstractOK() bool {
	if g.cards != 52 || !g.seq || g.nfound != 4 {
		return false
	}
	for i := 0; i < g.piles; i++ {
		p := &g.tab[i]
		for k := int(p.down) + 1; k < int(p.n); k++ {
			if !fits(p.c[k], p.c[k-1]) {
				return false
			}
		}
	}
	return true
}

// locked is the locked count of pile i (above); flips are made before a
// position is keyed, so a pile with face-down cards has its base.
func (g *game) locked(i int) int {
	p := &g.tab[i]
	switch {
	case p.n == 0:
		return 0
	case p.down > 0:
		return int(p.down) + 1
	case p.c[0] == g.orig0[i]:
		return 1
	}
	return 0
}

// twin is the other card of c's rank and colour (one deck): clubs and
// spades, diamonds and hearts (suits 0..3, R1.1).
func twin(c byte) byte { return (3-c/13)*13 + c%13 }

// topPile is the pile whose face-up top is c, or -1.
func (g *game) topPile(c byte) int {
	for j := 0; j < g.piles; j++ {
		if p := &g.tab[j]; p.n > p.down && p.c[p.n-1] == c {
			return j
		}
	}
	return -1
}

// takers fills tkA and tkB with the lowest and the second lowest pile
// whose face-up top takes each card that is not a king (-1: none) and sets
// tkPlace to the cards some pile takes (placeable: kings too when
// firstEmpty >= 0). The candidates of a node ask for them many times.
func (g *game) takers(firstEmpty int) {
	g.tkA, g.tkB = noTakers, noTakers
	var m uint64
	if firstEmpty >= 0 {
		m = kings
	}
	for j := 0; j < g.piles; j++ {
		p := &g.tab[j]
		if p.n == p.down {
			continue
		}
		kids := kidsOf(p.c[p.n-1])
		m |= kids
		for ; kids != 0; kids &= kids - 1 {
			c := bits.TrailingZeros64(kids)
			switch {
			case g.tkA[c] < 0:
				g.tkA[c] = int8(j)
			case g.tkB[c] < 0:
				g.tkB[c] = int8(j)
			}
		}
	}
	g.tkPlace = m
}

// setKidTakers is takers for the two cards of one child class only (kids),
// the one class useCandidates asks about, whose lowest and second lowest
// taking piles are a and b (-1: none): those whose face-up top is one of
// the class's two parents. The other cards' entries are left as they
// were, and tkPlace holds the two cards or none.
func (g *game) setKidTakers(kids uint64, a, b int8) {
	g.tkPlace = 0
	if a >= 0 {
		g.tkPlace = kids
	}
	for k := kids; k != 0; k &= k - 1 {
		c := bits.TrailingZeros64(k)
		g.tkA[c], g.tkB[c] = a, b
	}
}

// noTakers is a card table of no pile (-1 for every card).
var noTakers = func() (t [52]int8) {
	for c := range t {
		t[c] = -1
	}
	return t
}()

// takerFor is the first pile other than skip whose top takes c (a king:
// the first empty pile), or -1, from the tables of takers. Any of them
// gives the same abstract position.
func (g *game) takerFor(c byte, skip, firstEmpty int) int {
	if rankOf[c] == 13 {
		if firstEmpty == skip {
			return -1
		}
		return firstEmpty
	}
	if j := int(g.tkA[c]); j != skip {
		return j
	}
	return int(g.tkB[c])
}

// absCandidates is candidates in abstract mode: home moves of every
// face-up card a foundation takes that is a top or can be freed in one
// move, then bases with their runs (the deepest piles first), then the
// talon's cards, then a base without face-down cards under it (it empties
// its pile: only when a king could fill it next, the pruning of
// candidates), then take-backs; one target pile per card.
func (g *game) absCandidates(out []move) []move {
	start := len(out)
	firstEmpty := -1
	for j := 0; j < g.piles; j++ {
		p := &g.tab[j]
		g.runs[j] = p.n - p.down // the face-up part is one run
		if p.n == 0 && firstEmpty < 0 {
			firstEmpty = j
		}
	}
	g.takers(firstEmpty)
	prune := !g.sw.noPrune
	king := -1 // kingWaiting, computed once when needed
	next := g.homeNext()
	for i := 0; i < g.piles; i++ {
		p := &g.tab[i]
		if p.n == p.down {
			continue
		}
		for k := int(p.n) - 1; k >= int(p.down); k-- {
			x := p.c[k]
			if next&(1<<x) == 0 {
				continue
			}
			f := g.foundFor(x)
			m := move{kind: kTab, from: uint8(i), to: uint8(f) | toFound, n: 1}
			if k < int(p.n)-1 {
				j := g.topPile(twin(x))
				if j < 0 {
					continue
				}
				m.pre, m.pj = uint8(int(p.n)-1-k), uint8(j)
			}
			out = append(out, classed(prHome, m))
		}
		b := p.c[p.down]
		if rankOf[b] == 13 && p.down == 0 {
			continue // a king at the bottom: moving it changes nothing
		}
		if m, ok := g.baseMove(i, firstEmpty, prune, &king); ok {
			out = append(out, m)
		}
	}
	if g.sw.countDrops {
		g.countRearrangements()
	}
	out = g.talonMoves(out, firstEmpty, ^uint64(0))
	if g.takeBack {
		for f := 0; f < g.nfound; f++ {
			c := g.found[f]
			if c == noCard || rankOf[c] <= 2 || g.safeHome(c) {
				continue // a safe card would go straight back (safe.go)
			}
			if j := g.takerFor(c, -1, firstEmpty); j >= 0 {
				out = append(out, classed(prTakeBack, move{kind: kTakeBack, from: uint8(f), to: uint8(j), n: 1}))
			}
		}
	}
	sortByClass(out[start:])
	return out
}

// baseMove is the move of pile i's base with its run onto the first pile
// that takes it (absCandidates), with its class: it reveals a face-down card
// (the deepest piles first), or it empties the pile, searched only where
// mayEmpty allows; ok is false where there is no such move to search.
func (g *game) baseMove(i, firstEmpty int, prune bool, king *int) (m move, ok bool) {
	p := &g.tab[i]
	j := g.takerFor(p.c[p.down], i, firstEmpty)
	if j < 0 {
		return move{}, false
	}
	m = move{kind: kTab, from: uint8(i), to: uint8(j), n: p.n - p.down}
	if p.down > 0 {
		m.pri = uint8(prReveal<<ordShift + max(0, (1<<ordShift)-1-int(p.down)))
		return m, true
	}
	if !g.mayEmpty(i, prune, king) {
		return move{}, false
	}
	m.pri = prEmpty << ordShift
	return m, true
}

// countRearrangements adds to dropped the legal tableau moves of a run
// whose lowest card is not a base (tests: the moves abstract mode leaves
// out).
func (g *game) countRearrangements() {
	for i := 0; i < g.piles; i++ {
		p := &g.tab[i]
		for k := int(p.down) + 1; k < int(p.n); k++ {
			if g.takerFor(p.c[k], i, -1) >= 0 {
				g.sw.dropped++
			}
		}
	}
}

// Talon cards wait where every one is within reach (draw 1, unlimited
// passes). There a talon card x put on the tableau is needed only by a
// move that uses it there: a card of x's child class (the rank below, the
// other colour) put on the tableau from outside the face-up runs (from the
// talon, a foundation, or a base with its run), since x is one more card
// to lie on; or x's twin going home after the run on it moves onto x. In
// the abstract position x on the tableau enables nothing else, and taking
// it out of the talon changes what the draws reach not at all. Take a
// winning line whose first move puts x on the tableau and move that move
// to just before the first move that needs x there (x going home first:
// straight from the talon instead, and the move is gone): the moves in
// between are as legal with x still in the talon (it only took a place a
// card could lie on), the move is still legal there (x is still in reach,
// and the place it took in the first line is free), and from there the two
// lines meet. A move in between may lose its own reason (a card put on
// the tableau only so that x could go home from it after its run moved
// onto that card: with x still in the talon, x goes home straight from
// there): it is postponed in turn. That ends: a postponed move sits just
// before the move that needs it, where it is a candidate, and what made
// it one (the child in the talon, a base or a foundation top; the twin
// face up with its foundation taking it) holds there, so no move is
// postponed twice, and induction on the line's length does the rest. The
// waiting depends on the position only, never on the path, so the
// transposition table loses nothing by it. So the search puts a talon card
// on the tableau only where one of those moves could follow
// (needsOnTableau).

// needsOnTableau reports whether a move could follow that needs card x
// face up on the tableau rather than in the talon (above); next is
// homeNext.
func (g *game) needsOnTableau(x byte, next uint64) bool {
	r, red := rankOf[x], redOf[x]
	kid := func(y byte) bool { return rankOf[y] == r-1 && redOf[y] != red }
	// every talon card is within reach here (one deck: inTalon is exact)
	if r > 1 && (kidsOf(x)&g.inTalon != 0 || (g.takeBack && g.foundHas(kid))) {
		return true
	}
	tw := twin(x)
	for i := 0; i < g.piles; i++ {
		p := &g.tab[i]
		if p.n == p.down {
			continue
		}
		if r > 1 && kid(p.c[p.down]) {
			return true
		}
		if next&(1<<tw) != 0 {
			for k := int(p.down); k < int(p.n); k++ {
				if p.c[k] == tw {
					return true
				}
			}
		}
	}
	return false
}

// kidsOf is the set of the two cards that fit on card x (the rank below,
// the other colour; R1.5), bit c for card c; none for an ace.
func kidsOf(x byte) uint64 {
	r := rankOf[x]
	if r == 1 {
		return 0
	}
	if redOf[x] {
		return 1<<(r-2) | 1<<(39+r-2) // clubs, spades
	}
	return 1<<(13+r-2) | 1<<(26+r-2) // diamonds, hearts
}

// usesCard reports whether candidate m uses card x, just put face up on the
// tableau, there (the moves that need it, above): a card of x's child
// class put on the tableau from the talon, a foundation or a base with its
// run, or x's twin going home after the run on it moves onto x. A child
// put on the tableau counts even where it has another free card to lie on
// (takerFor may pick x's twin): more moves than need x, which loses
// nothing.
func (g *game) usesCard(m move, x byte) bool {
	var c byte
	switch {
	case m.kind == kTalon && m.to&toFound == 0:
		c = g.orig[g.talon[m.p-1]]
	case m.kind == kTakeBack:
		c = g.found[m.from]
	case m.kind == kTab && m.to&toFound == 0:
		p := &g.tab[m.from]
		c = p.c[p.n-m.n]
	case m.kind == kTab && m.pre > 0:
		p := &g.tab[m.from]
		return p.c[int(p.n)-1-int(m.pre)] == twin(x)
	default:
		return false
	}
	return kidsOf(x)&(1<<c) != 0
}

// useCandidates appends the candidates of absCandidates that use card x
// (usesCard), in the same order, without making the others: the moves
// search.uses tries after x went onto the tableau from the talon (draw 1,
// unlimited passes).
func (g *game) useCandidates(out []move, x byte) []move {
	start := len(out)
	kids := kidsOf(x)
	tw := twin(x)
	firstEmpty := -1
	// takers of x's child class (the tops x and its twin, setKidTakers)
	// found in the same pass
	a, b := int8(-1), int8(-1)
	for j := 0; j < g.piles; j++ {
		p := &g.tab[j]
		g.runs[j] = p.n - p.down
		switch {
		case p.n == 0:
			if firstEmpty < 0 {
				firstEmpty = j
			}
		case p.n > p.down && b < 0:
			if t := p.c[p.n-1]; t == x || t == tw {
				if a < 0 {
					a = int8(j)
				} else {
					b = int8(j)
				}
			}
		}
	}
	g.setKidTakers(kids, a, b)
	king := -1
	next := g.homeNext()
	twHome := next&(1<<tw) != 0
	for i := 0; i < g.piles; i++ {
		p := &g.tab[i]
		if p.n == p.down {
			continue
		}
		if twHome {
			// x's twin home after the run on it moves onto x
			for k := int(p.n) - 2; k >= int(p.down); k-- {
				if p.c[k] != tw {
					continue
				}
				if j := g.topPile(x); j >= 0 {
					out = append(out, move{kind: kTab, from: uint8(i), to: uint8(g.foundFor(tw)) | toFound, n: 1,
						pre: uint8(int(p.n) - 1 - k), pj: uint8(j), pri: prHome << ordShift})
				}
			}
		}
		b := p.c[p.down]
		if kids&(1<<b) == 0 {
			continue
		}
		if m, ok := g.baseMove(i, firstEmpty, true, &king); ok {
			out = append(out, m)
		}
	}
	if kids&g.inTalon != 0 {
		out = g.talonMoves(out, firstEmpty, kids)
	}
	if g.takeBack {
		for f := 0; f < g.nfound; f++ {
			c := g.found[f]
			if c == noCard || kids&(1<<c) == 0 || rankOf[c] <= 2 || g.safeHome(c) {
				continue
			}
			if j := g.takerFor(c, -1, firstEmpty); j >= 0 {
				out = append(out, move{kind: kTakeBack, from: uint8(f), to: uint8(j), n: 1, pri: prTakeBack << ordShift})
			}
		}
	}
	sortByClass(out[start:])
	return out
}
