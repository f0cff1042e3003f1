package solver

// Talon dominance: draw 1, unlimited passes, abstract mode (one deck,
// sequence moves). There a position is never worse for having more cards
// in the talon, so a position whose talon is a subset of a lost one's,
// with the same locked cards and foundations, is lost too and is not
// searched.
//
// Claim: let P1 and P2 have the same locked counts (abstract.go) and
// foundations, and P2's talon be a subset of P1's. Then P2 can be reached
// from P1, up to the arrangement of face-up runs (which abstract mode
// shows does not matter), so if P2 is winnable so is P1. Proof: the cards
// E of P1's talon that are not in P2's lie face up on P2's tableau and are
// not locked there (the locked cards are the same), so each is a king
// heading a pile that took it after the root, or lies on a card of the
// next rank and the other colour. From P1 put the cards of E on the
// tableau from the talon, highest rank first: with draw 1 and no limit on
// passes every talon card can be brought to the waste's top (R2.1), and
// each has a place. A king: P1 has one more empty pile for every king of E
// still in the talon (the piles in use are those with locked cards plus
// the face-up kings that are not bases). Any other card x: once every card
// of E of the rank above is down, the face-up cards x fits on are P2's,
// while the cards of x's class (its rank and colour) lying on one are
// P2's less at least x, and in P2 each of them lies on its own such card,
// so one is free (in some arrangement, reached by moving runs). After the
// last card of E, the locked counts, foundations and talon are P2's.
//
// So a lost P1 proves P2 lost. The search keeps, per class of locked
// counts and foundations (the key less its talon part, hash.go), the
// talon sets (inTalon) of positions proven lost, only the largest ones,
// and a new position whose talon is a proper subset of one of them is
// not searched.
//
// Proven lost is more than searched to the end. A position the
// depth-first search finished may have skipped a successor that was on
// the path at the time (its ancestor), whose search was not over: if that
// one is won, so may be the finished one, and the table's argument (a
// later visit of the same position also skips it, search.go) does not
// carry over to another position it dominates. Such positions belong to one
// strongly connected component of the positions (the moves lead from each
// to each), and the search finds the components as Tarjan's algorithm
// does: every position entered gets the next index, its low index is the
// least index of a position still unproven that its search met (itself,
// its successors' low indices, or a table hit on an unproven position);
// when a position's search ends without a win and its low index is its
// own, it and every position entered after it that is still unproven form
// a component with no move to an unproven position outside it, and none
// is won: each pruning of the search keeps, from a won position, a move to
// a won position closer to a win (what each one's proof shows), so the won
// position of the component closest to a win would have such a successor,
// outside the component (so proven lost) or in it (and closer). Only then
// are they proven lost and
// their talon sets kept. A talon only loses cards, so a component's
// positions share one talon: the components are the positions that differ
// by cards sent home and taken back.
//
// An attempt cut short by a restart (search.run) takes every position it
// left unproven out of the table (those entered, and the one whose search
// stopped before it was entered), so the table then holds proven lost
// positions only, and the next attempt enters the others again.

// domOK reports whether the talon dominance holds for g (a root).
func (g *game) domOK() bool {
	return g.abs && !g.sw.noDom && g.draw == 1 && g.passes == 0 && g.cards == 52
}

// tarjanEntry is a position entered and not yet proven lost: its key,
// its class (key less talon part) and its talon set.
type tarjanEntry struct {
	key, class, talon uint64
}

// domState is the dominance's part of a search (see above).
type domState struct {
	lost  *indexMap     // class -> index into sets
	sets  [][]uint64    // the talon sets of a class's lost positions, none a subset of another
	open  *indexMap     // key -> index, positions entered and not proven lost
	stack []tarjanEntry // those positions in the order entered
	index int32         // the next position's index
	low   int32         // the low index of the last position searched (dfs)
	cuts  int64         // positions not searched for being dominated
}

func newDomState() *domState {
	return &domState{lost: newIndexMap(10), open: newIndexMap(10)}
}

// class is the key of the current position less its talon part: with
// draw 1 and unlimited passes the key is the talon's sum th plus the
// piles' and foundations' keys (hash.go).
func (g *game) class(key uint64) uint64 { return key - g.th }

// enter records the current position (key k) as entered and returns its
// index and its place on the stack.
func (d *domState) enter(g *game, k uint64) (idx int32, sp int) {
	idx, sp = d.index, len(d.stack)
	d.index++
	d.stack = append(d.stack, tarjanEntry{key: k, class: g.class(k), talon: g.inTalon})
	d.open.put(k, idx)
	return idx, sp
}

// hit lowers low for a table hit on key k that is not proven lost.
func (d *domState) hit(k uint64, low int32) int32 {
	if v, ok := d.open.get(k); ok && v < low {
		return v
	}
	return low
}

// leave ends the search of the position entered with index idx at stack
// place sp, without a win: if its low index is its own, it and the
// positions above it on the stack are proven lost.
func (d *domState) leave(idx, low int32, sp int) {
	d.low = low
	if low != idx {
		return
	}
	for _, e := range d.stack[sp:] {
		d.open.del(e.key)
		d.prove(e.class, e.talon)
	}
	d.stack = d.stack[:sp]
}

// prove keeps talon set t of class c as lost, dropping the sets it holds
// that t holds, unless one of them holds t.
func (d *domState) prove(c, t uint64) {
	i, ok := d.lost.get(c)
	if !ok {
		i = int32(len(d.sets))
		d.lost.put(c, i)
		d.sets = append(d.sets, nil)
	}
	l := d.sets[i]
	for _, u := range l {
		if u&t == t {
			return // t was entered before u was proven: nothing new
		}
	}
	n := 0
	for _, u := range l {
		if u&t != u {
			l[n] = u
			n++
		}
	}
	d.sets[i] = append(l[:n], t)
}

// dominated reports whether the current position (key k) has a talon that
// is a proper subset of a lost position's of its class.
func (d *domState) dominated(g *game, k uint64) bool {
	t := g.inTalon
	i, ok := d.lost.get(g.class(k))
	if !ok {
		return false
	}
	for _, u := range d.sets[i] {
		if u&t == t && u != t {
			return true
		}
	}
	return false
}

// reset takes every unproven position out of table tt (after an attempt
// was cut short) and forgets them.
func (d *domState) reset(tt *table) {
	for _, e := range d.stack {
		tt.remove(e.key)
	}
	d.stack = d.stack[:0]
	d.open.clear()
}

// indexMap is a hash table from keys to int32 values: the talon
// dominance's open positions (key to index) and its classes of lost
// positions (class to index into sets).
type indexMap = hashTable[int32]

// newIndexMap makes an empty indexMap of 1<<logSize slots (logSize 1..63).
func newIndexMap(logSize uint) *indexMap {
	m := newHashTable[int32](logSize)
	return &m
}
