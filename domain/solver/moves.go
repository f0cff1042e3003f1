package solver

import "github.com/openpatience/solitaire/domain"

// legal appends every primitive move of the position to out, exactly the
// moves domain.LegalMoves lists bar undo, redo, autocomplete and resign
// (the differential test holds the two to that): draw or recycle, waste to
// each foundation and tableau pile that takes its top, tableau tops to
// foundations, tableau runs (sequences) or cards onto other piles,
// take-backs (R2.3), flips where the player flips (R2.4).
func (g *game) legal(out []move) []move {
	if g.w < g.tl || (g.w > 0 && g.canRecycle()) {
		out = append(out, move{kind: kDraw})
	}
	if c := g.wasteTop(); c != noCard {
		for f := 0; f < g.nfound; f++ {
			if fitsFound(c, g.found[f]) {
				out = append(out, move{kind: kWaste, to: uint8(f) | toFound, n: 1})
			}
		}
		for j := 0; j < g.piles; j++ {
			if g.takes(j, c) {
				out = append(out, move{kind: kWaste, to: uint8(j), n: 1})
			}
		}
	}
	for i := 0; i < g.piles; i++ {
		run := g.runLen(i)
		if run == 0 {
			continue
		}
		p := &g.tab[i]
		top := p.top()
		for f := 0; f < g.nfound; f++ {
			if fitsFound(top, g.found[f]) {
				out = append(out, move{kind: kTab, from: uint8(i), to: uint8(f) | toFound, n: 1})
			}
		}
		if !g.seq {
			run = 1
		}
		for j := 0; j < g.piles; j++ {
			if j == i {
				continue
			}
			for k := 1; k <= run; k++ {
				if g.takes(j, p.c[int(p.n)-k]) {
					out = append(out, move{kind: kTab, from: uint8(i), to: uint8(j), n: uint8(k)})
					break
				}
			}
		}
	}
	if g.takeBack {
		for f := 0; f < g.nfound; f++ {
			if c := g.found[f]; c != noCard {
				for j := 0; j < g.piles; j++ {
					if g.takes(j, c) {
						out = append(out, move{kind: kTakeBack, from: uint8(f), to: uint8(j), n: 1})
					}
				}
			}
		}
	}
	if g.flipPlayer {
		for i := 0; i < g.piles; i++ {
			if p := &g.tab[i]; p.down > 0 && p.down == p.n {
				out = append(out, move{kind: kFlip, from: uint8(i)})
			}
		}
	}
	return out
}

// request is primitive move m as the move request domain.Decide takes.
func (m move) request() domain.Move {
	dest := func(to uint8) domain.PileRef {
		if to&toFound != 0 {
			return domain.FoundationRef(int(to &^ toFound))
		}
		return domain.TableauRef(int(to))
	}
	switch m.kind {
	case kDraw:
		return domain.Move{Type: domain.MoveDraw}
	case kWaste:
		return domain.Move{Type: domain.MoveCards, From: domain.WastePile, To: dest(m.to), Count: 1}
	case kTab:
		return domain.Move{Type: domain.MoveCards, From: domain.TableauRef(int(m.from)), To: dest(m.to), Count: int(m.n)}
	case kTakeBack:
		return domain.Move{Type: domain.MoveTakeBack, From: domain.FoundationRef(int(m.from)), To: dest(m.to), Count: 1}
	case kFlip:
		return domain.Move{Type: domain.MoveFlip, Pile: domain.TableauRef(int(m.from))}
	}
	return domain.Move{}
}

// Move classes of the search order, best first. Within prReveal the piles
// with the most face-down cards come first (candidates adds that to the
// class), so the search turns up the deepest piles first.
const (
	prHome     = iota // tableau top to a foundation
	prReveal          // a whole face-up part moves off face-down cards
	prTalon           // a talon card to a foundation or the tableau
	prEmpty           // a pile without face-down cards is emptied
	prPartial         // part of a run moves (the card under it stays)
	prTakeBack        // a foundation card comes back (R2.3)
	prClasses
	// prTalonLast is the class of talon moves where the talon dominance
	// holds (talonPri): after every other move. A lost search there proves
	// more positions with the talon still large before it meets the ones
	// with a smaller talon, which the dominance then cuts (BENCHMARKS.md
	// "Solver").
	prTalonLast = prClasses
)

// ordShift makes room within a class for the prReveal sub-order.
const ordShift = 5

// candidates appends the search's moves in search order: the legal moves
// minus those that lead to a position equal to the current one or to
// another candidate's up to the order of piles, minus tableau moves that
// are dominated (below), with the draws folded into talon moves. Automatic
// moves (safe.go) are not among them: the search makes those itself after
// every move.
//
// Dominated tableau moves, where sequences move (R1.6): a move of part of
// a run that leaves a face-up card x behind is made only when x goes to a
// foundation now or some other card that fits on x could be put there by
// the next move (usefulPartial); a move that empties a pile without
// face-down cards is made only when a king could be put into an empty pile
// by the next move (kingWaiting). The proof: take a shortest winning line
// that starts with such a move M, and move M later, to just before the
// first move that needs it. The moves in between never touch what M
// changes (the card x or the empty pile M uncovers, the card M covers),
// and whatever they build on the moved run is moved along with it when M
// comes (sequences move whole, so M stays legal); a move of the run M
// moved merges with M into one move from its old place. So the first move
// that needs M puts a card on x, takes x home, or fills an empty pile
// with a king, and just before it the condition holds: M is a candidate
// there. Without sequence moves a card built on the moved one would pin
// it, so nothing is pruned.
func (g *game) candidates(out []move) []move {
	if g.abs {
		return g.absCandidates(out)
	}
	start := len(out)
	firstEmpty := -1
	for j := 0; j < g.piles; j++ {
		if g.tab[j].n == 0 {
			firstEmpty = j
			break
		}
	}
	prune := !g.sw.noPrune && g.seq
	for i := 0; i < g.piles; i++ {
		g.runs[i] = uint8(g.runLen(i))
	}
	king := -1 // kingWaiting, computed once when needed: -1 unknown, 0 no, 1 yes
	for i := 0; i < g.piles; i++ {
		out = g.tabMoves(out, i, firstEmpty, prune, &king)
	}
	out = g.talonMoves(out, firstEmpty, ^uint64(0))
	if g.takeBack {
		out = g.takeBacks(out, firstEmpty)
	}
	sortByClass(out[start:])
	return out
}

// classed is m with its class pri (prHome, prPartial, ...) in the search
// order.
func classed(pri int, m move) move {
	m.pri = uint8(pri << ordShift)
	return m
}

// tabMoves appends the candidates (not in abstract mode) that move cards
// from tableau pile i: its top card home, and a part of its run onto each
// other pile that takes it (firstEmpty: the one empty pile tried), less
// the moves the pruning drops (candidates; king as for mayEmpty).
func (g *game) tabMoves(out []move, i, firstEmpty int, prune bool, king *int) []move {
	run := int(g.runs[i])
	if run == 0 {
		return out
	}
	p := &g.tab[i]
	top := p.top()
	if f := g.foundFor(top); f >= 0 {
		out = append(out, classed(prHome, move{kind: kTab, from: uint8(i), to: uint8(f) | toFound, n: 1}))
	}
	if !g.seq {
		run = 1
	}
	up := int(p.n) - int(p.down)
	var useful [14]int8 // usefulPartial by k, computed once: 0 unknown, 1 yes, 2 no
	for j := 0; j < g.piles; j++ {
		if j == i || (g.tab[j].n == 0 && j != firstEmpty) {
			continue
		}
		// The run's ranks go up by one from the top down, so at most
		// one of its cards fits on pile j: the k-th from the top.
		q := &g.tab[j]
		var k int
		switch {
		case q.n == 0:
			k = 14 - int(rankOf[top]) // the king
		case q.down == q.n:
			continue
		default:
			k = int(rankOf[q.top()]) - int(rankOf[top])
		}
		if k < 1 || k > run || !g.takes(j, p.c[int(p.n)-k]) {
			continue
		}
		m := move{kind: kTab, from: uint8(i), to: uint8(j), n: uint8(k)}
		switch {
		case k < up:
			if prune && k < len(useful) {
				if useful[k] == 0 {
					useful[k] = 2
					if g.usefulPartial(i, k) {
						useful[k] = 1
					}
				}
				if useful[k] == 2 {
					g.sw.dropped++
					break
				}
			}
			out = append(out, classed(prPartial, m))
		case p.down > 0:
			m.pri = uint8(prReveal<<ordShift + max(0, (1<<ordShift)-1-int(p.down)))
			out = append(out, m)
		case g.tab[j].n == 0:
			// a whole pile onto an empty one: the same position
		default:
			if g.mayEmpty(i, prune, king) {
				out = append(out, classed(prEmpty, m))
			}
		}
	}
	return out
}

// takeBacks appends the take-backs (not in abstract mode): each
// foundation's top card of rank 3 or more that is not safe, onto every
// pile that takes it (firstEmpty: the one empty pile tried).
func (g *game) takeBacks(out []move, firstEmpty int) []move {
	for f := 0; f < g.nfound; f++ {
		c := g.found[f]
		if c == noCard || rankOf[c] <= 2 || g.sameFoundBefore(f) || g.safeHome(c) {
			continue // a safe card would go straight back (safe.go)
		}
		for j := 0; j < g.piles; j++ {
			if (g.tab[j].n == 0 && j != firstEmpty) || !g.takes(j, c) {
				continue
			}
			out = append(out, classed(prTakeBack, move{kind: kTakeBack, from: uint8(f), to: uint8(j), n: 1}))
		}
	}
	return out
}

// sortByClass orders candidates by class, keeping the order within a
// class: a stable insertion sort, the lists being short.
func sortByClass(c []move) {
	for i := 1; i < len(c); i++ {
		for k := i; k > 0 && c[k].pri < c[k-1].pri; k-- {
			c[k], c[k-1] = c[k-1], c[k]
		}
	}
}

// mayEmpty reports whether a move that empties pile i (no face-down cards
// left under what moves) is searched: always without pruning, else only
// when a king could go into the empty pile next (kingWaiting, computed once
// per position into *king: -1 unknown, 0 no, 1 yes). A move it refuses
// counts in dropped.
func (g *game) mayEmpty(i int, prune bool, king *int) bool {
	if !prune {
		return true
	}
	if *king < 0 {
		*king = 0
		if g.kingWaiting(i) {
			*king = 1
		}
	}
	if *king == 0 {
		g.sw.dropped++
		return false
	}
	return true
}

// placeable is the set of cards (bit c for card c) that some tableau pile
// takes now as the head of what is moved (R1.5): the two cards of the next
// rank down and the other colour for every face-up top, the kings when
// firstEmpty >= 0 (an empty pile).
func (g *game) placeable(firstEmpty int) uint64 {
	var m uint64
	if firstEmpty >= 0 {
		m = kings
	}
	for j := 0; j < g.piles; j++ {
		if p := &g.tab[j]; p.n > p.down {
			m |= kidsOf(p.c[p.n-1])
		}
	}
	return m
}

// kings is the set of the four kings (bit c for card c).
const kings = 1<<12 | 1<<25 | 1<<38 | 1<<51

// usefulPartial reports whether moving the top k cards of pile i (the
// card x under them face up, staying) can be needed now: x goes to a
// foundation, or a card other than the moved run's head that fits on x
// could be moved onto it next, from another pile's face-up run, the talon
// (a card the draws reach within the passes left) or a foundation (with
// take-back).
func (g *game) usefulPartial(i, k int) bool {
	p := &g.tab[i]
	x := p.c[int(p.n)-k-1]
	if g.foundFor(x) >= 0 {
		return true
	}
	fitsX := func(c byte) bool { return fits(c, x) }
	return g.tableauHas(i, false, rankOf[x]-1, !redOf[x], false) || g.talonHas(fitsX) ||
		(g.takeBack && g.foundHas(fitsX))
}

// kingWaiting reports whether some king could be moved into an empty pile
// next (besides pile i, about to be emptied): one with something under it
// in another pile's face-up run, one the draws reach, or (with take-back)
// one on a foundation.
func (g *game) kingWaiting(i int) bool {
	isKing := func(c byte) bool { return rankOf[c] == 13 }
	return g.tableauHas(i, true, 13, false, true) || g.talonHas(isKing) || (g.takeBack && g.foundHas(isKing))
}

// tableauHas reports whether a card of rank r (and colour red, unless
// anyColour) heads a movable part of the face-up run of a pile other than
// skip; with under, only one with a card under it (a king at a pile's
// bottom moved to an empty pile changes nothing).
func (g *game) tableauHas(skip int, under bool, r int8, red, anyColour bool) bool {
	for j := 0; j < g.piles; j++ {
		if j == skip {
			continue
		}
		run := int(g.runs[j]) // set by candidates
		if !g.seq {
			run = min(run, 1)
		}
		if run == 0 {
			continue
		}
		p := &g.tab[j]
		// the run's ranks go up by one from the top down
		k := int(r) - int(rankOf[p.top()]) + 1
		if k < 1 || k > run {
			continue
		}
		idx := int(p.n) - k
		if c := p.c[idx]; (anyColour || redOf[c] == red) && (idx > 0 || !under) {
			return true
		}
	}
	return false
}

// foundHas reports whether a foundation's top card has property want.
func (g *game) foundHas(want func(byte) bool) bool {
	for f := 0; f < g.nfound; f++ {
		if c := g.found[f]; c != noCard && want(c) {
			return true
		}
	}
	return false
}

// talonHas reports whether a card the draws can bring to the waste's top
// within the passes left (the waste sizes of talonMoves) has property want.
func (g *game) talonHas(want func(byte) bool) bool {
	if g.tl == 0 {
		return false
	}
	at := func(p int) bool { return p > 0 && want(g.orig[g.talon[p-1]]) }
	for p := g.w; ; p += g.draw {
		if p >= g.tl {
			if at(g.tl) {
				return true
			}
			break
		}
		if at(p) {
			return true
		}
	}
	if g.canRecycle() {
		for p := g.draw; p < g.tl; p += g.draw {
			if at(p) {
				return true
			}
		}
	}
	return false
}

// sameFoundBefore reports whether a lower-numbered foundation has the same
// top card as foundation f (multi-deck): taking back from either gives the
// same position up to the order of foundations.
func (g *game) sameFoundBefore(f int) bool {
	for i := 0; i < f; i++ {
		if g.found[i] == g.found[f] {
			return true
		}
	}
	return false
}

// talonMoves appends a talon move for every card the draws can bring to the
// waste's top within the passes left (R2.1), and every place it fits. The
// draws reach, in the current pass, the waste sizes w, w+draw, w+2·draw, …
// and the talon's end; after one recycle draw, 2·draw, … and the end (a
// second recycle reaches nothing new). A size reachable in the current pass
// is taken without the recycle: more passes left is never worse.
//
// Only the cards in only (bit c for card c) are tried, and of those only
// their moves onto the tableau where only is not every card (useCandidates).
func (g *game) talonMoves(out []move, firstEmpty int, only uint64) []move {
	if g.tl == 0 {
		return out
	}
	var seen [maxCards + 1]bool
	next := g.homeNext()
	var place uint64
	if g.abs {
		place = g.tkPlace // set by absCandidates (by useCandidates: its child class only)
	} else {
		place = g.placeable(firstEmpty)
	}
	idle := g.abs && !g.sw.noPrune && !g.sw.noIdle && g.draw == 1 && g.passes == 0
	all := only == ^uint64(0)
	try := func(p int, rc uint8) {
		if p == 0 || seen[p] {
			return
		}
		seen[p] = true
		c := g.orig[g.talon[p-1]]
		if (next|place)&only&(1<<c) == 0 {
			return // neither a foundation nor a pile takes it
		}
		if f := g.foundFor(c); f >= 0 {
			if all {
				out = append(out, move{kind: kTalon, to: uint8(f) | toFound, n: 1, p: uint8(p), rc: rc, pri: g.talonPri})
			}
			if g.safeHome(c) {
				return // a safe card goes home rather than anywhere else (safe.go)
			}
		}
		if idle && !g.needsOnTableau(c, next) {
			g.sw.dropped++
			return // it can wait in the talon until it is needed (abstract.go)
		}
		if g.abs {
			// every free card gives the same abstract position
			if j := g.takerFor(c, -1, firstEmpty); j >= 0 {
				out = append(out, move{kind: kTalon, to: uint8(j), n: 1, p: uint8(p), rc: rc, pri: g.talonPri})
			}
			return
		}
		for j := 0; j < g.piles; j++ {
			if (g.tab[j].n == 0 && j != firstEmpty) || !g.takes(j, c) {
				continue
			}
			out = append(out, move{kind: kTalon, to: uint8(j), n: 1, p: uint8(p), rc: rc, pri: g.talonPri})
		}
	}
	if g.draw == 1 && g.passes == 0 && g.cards == 52 {
		// every talon card within reach: only those some pile or foundation
		// takes, in the order of the loops below
		// (a card is tried once: the scan stops when none is left)
		want := (next | place) & only & g.inTalon
		for p := max(g.w, 1); p <= g.tl && want != 0; p++ {
			if b := uint64(1) << g.orig[g.talon[p-1]]; want&b != 0 {
				want &^= b
				try(p, 0)
			}
		}
		if g.canRecycle() {
			for p := 1; p < g.w && want != 0; p++ {
				if b := uint64(1) << g.orig[g.talon[p-1]]; want&b != 0 {
					want &^= b
					try(p, 1)
				}
			}
		}
		return out
	}
	for p := g.w; ; p += g.draw {
		if p >= g.tl {
			try(g.tl, 0)
			break
		}
		try(p, 0)
	}
	if g.canRecycle() {
		for p := g.draw; ; p += g.draw {
			if p >= g.tl {
				try(g.tl, 1)
				break
			}
			try(p, 1)
		}
	}
	return out
}
