package solver

// Safe automatic moves (dominance). A move is made without branching only
// when some winning line, if any exists, starts with it, so the search stays
// exhaustive. The proofs, for a card c of rank r that is on top of a
// tableau pile (or on top of the waste with draw 1, below):
//
//   - Face-down top cards are turned up at once: a face-down top takes no
//     card and gives none, so every move of the position before the flip is
//     also a move after it.
//   - An ace: nothing is ever built on an ace in the tableau (R1.5), and
//     there is always a free foundation for it (4 per deck, R1.4), so
//     wherever a line moves it, moving it home instead loses nothing.
//   - A two: only an ace fits on it, and an ace on a tableau pile is itself
//     dominated by its foundation move, so c serves as a base for nothing.
//   - Without take-back, rank r >= 3: when every copy of both cards that
//     fit on c (the opposite colour's r-1) is on a foundation, none ever
//     leaves it (no take-back, R2.3), so nothing is ever built on c.
//   - With take-back, rank r >= 3: when every copy of the opposite colour's
//     r-1 and every copy of c's own colour's r-2 is on a foundation (c's
//     own foundation, at r-1, counts), then every card that could ever lie
//     in a run built on c (opposite colour r-1, own colour r-2, opposite
//     r-3, ...: the colours alternate with the ranks) is on a foundation
//     too. Such a run can only be built from take-backs, and a card that
//     fits on any card of it is again one of those foundation cards, so no
//     card in play ever lands on it: building it never helps, and c serves
//     as a base for nothing. (This is the classic "safe autoplay" rule.)
//
// With two or three decks (R1.2) a card of rank 2 or more goes home
// automatically only when every other copy of it is on a foundation
// already, besides the conditions above: copies compete for the
// foundations of their suit that stand one rank below them, and a copy
// sent home first can take the place another copy needs sooner, one that
// covers the cards that are to raise a second foundation to that rank
// (a queen of clubs home from the tableau where the one on the waste had
// to go first, to free the jack under it: a lost position made of a won
// one). With the other copies home, no card but c ever goes onto a
// foundation of c's suit at rank r-1, so the one c goes to automatically
// would have been free for c whenever a line sent it home.
//
// In every case c itself never needs to move elsewhere than home, and
// taking it home first only uncovers what lies beneath sooner. From the
// waste the same holds with draw 1: removing one talon card leaves every
// other card reachable exactly as before. With draw 3 it does not (the
// grouping of the talon shifts), so waste cards go home only as chosen
// moves there.

// safeHome reports whether card c may go to a foundation automatically; the
// caller has checked that a foundation takes it.
func (g *game) safeHome(c byte) bool {
	r := rankOf[c]
	if r == 1 {
		return true
	}
	decks := g.cards / 52
	if decks > 1 && g.homeCount(c/13, r) < decks-1 {
		return false // another copy of c may need the foundation (above)
	}
	if r == 2 {
		return true
	}
	if decks == 1 {
		return g.safeHome1(c, r)
	}
	if !g.takeBack {
		red := redOf[c]
		for s := byte(0); s < 4; s++ {
			if redOf[s*13] == red {
				continue
			}
			if g.homeCount(s, r-1) < decks {
				return false
			}
		}
		return true
	}
	red := redOf[c]
	for s := byte(0); s < 4; s++ {
		need := r - 1
		if redOf[s*13] == red {
			need = r - 2
		}
		if g.homeCount(s, need) < decks {
			return false
		}
	}
	return true
}

// safeHome1 is safeHome with one deck (rank r of c above 2): a suit's
// cards lie on one foundation, so the suits' heights decide.
func (g *game) safeHome1(c byte, r int8) bool {
	h := &g.height
	red := redOf[c]
	for s := byte(0); s < 4; s++ {
		need := r - 1
		switch {
		case redOf[s*13] != red:
		case g.takeBack:
			need = r - 2
		default:
			continue
		}
		if h[s] < need {
			return false
		}
	}
	return true
}

// homeCount is the number of foundations of suit s holding rank r or more.
func (g *game) homeCount(s byte, r int8) int {
	n := 0
	for i := 0; i < g.nfound; i++ {
		if t := g.found[i]; t != noCard && t/13 == s && rankOf[t] >= r {
			n++
		}
	}
	return n
}

// frozen reports whether some tableau card can never leave its pile, a
// proof that the position cannot be won (every card must reach a
// foundation). One deck only. It finds the largest set S of tableau cards
// (and waste cards, when no recycle is left: the waste is then a pile whose
// cards leave from the top only), none a king, such that for each card y
// in S
//
//   - some lower card of y's suit is in S or lies under a card of S in its
//     pile, so it never reaches its foundation before a card of S moves,
//     and y cannot go home first;
//   - each of the two cards y fits on (the opposite colour's rank y+1)
//     lies under a card of S in its pile, or is on a foundation where no
//     take-back brings it back;
//   - where sequences move, the cards under y that could carry it along
//     (the card y lies on if y fits on it, the one under that if it fits
//     on that one, and so on) are in S too.
//
// If S is not empty, consider the first move that takes any card of S off
// its pile, and the card of S it moves that lies lowest, y: a card under a
// card of S stays there until that card moves, so at that moment y's
// lower card is not home (y cannot go home), both cards y fits on are
// covered or gone for good (y cannot go onto the tableau), y is no king
// (no empty pile takes it), and the cards under y are still the ones there
// now, so a run carrying y would start at a card of S under it (and y
// would not be the lowest). So no card of S ever leaves, and the game is
// lost. S is found by starting from every non-king tableau
// card and dropping cards that fail a condition until none does.
func (g *game) frozen() bool {
	if g.cards != 52 {
		return false
	}
	var where [52]int8 // the pile of card c, -1 outside the tableau
	var depth [52]uint8
	for c := range where {
		where[c] = -1
	}
	for i := 0; i < g.piles; i++ {
		p := &g.tab[i]
		for k := 0; k < int(p.n); k++ {
			where[p.c[k]] = int8(i)
			depth[p.c[k]] = uint8(k)
		}
	}
	// Without a recycle left the waste is one more pile: its cards leave
	// from the top only, and draws only cover them.
	waste := -1
	if !g.canRecycle() && g.w > 1 {
		waste = g.piles
		for k := 0; k < g.w; k++ {
			c := g.orig[g.talon[k]]
			where[c] = int8(waste)
			depth[c] = uint8(k)
		}
	}
	var in [52]bool
	for c := byte(0); c < 52; c++ {
		in[c] = where[c] >= 0 && rankOf[c] != 13
	}
	var high [maxPiles + 1]int // per pile: the highest index of a card of S, -1 if none
	under := func(c byte) bool { return where[c] >= 0 && high[where[c]] > int(depth[c]) }
	for changed := true; changed; {
		changed = false
		for i := 0; i < g.piles; i++ {
			high[i] = -1
			p := &g.tab[i]
			for k := int(p.n) - 1; k >= 0; k-- {
				if in[p.c[k]] {
					high[i] = k
					break
				}
			}
		}
		if waste >= 0 {
			high[waste] = -1
			for k := g.w - 1; k >= 0; k-- {
				if in[g.orig[g.talon[k]]] {
					high[waste] = k
					break
				}
			}
		}
		for c := byte(0); c < 52; c++ {
			if !in[c] {
				continue
			}
			suit, r := c/13, rankOf[c]
			ok := false
			for q := byte(0); q < byte(r-1) && !ok; q++ {
				z := suit*13 + q
				ok = where[z] >= 0 && (in[z] || under(z))
			}
			for s := byte(0); s < 4 && ok; s++ {
				if redOf[s*13] == redOf[c] {
					continue
				}
				t := s*13 + byte(r) // rank r+1 of suit s
				if where[t] >= 0 {
					ok = under(t)
				} else {
					ok = !g.takeBack && g.homeCount(s, r+1) > 0
				}
			}
			if ok && g.seq && int(where[c]) != waste {
				p := &g.tab[where[c]]
				for k := int(depth[c]); k > 0 && ok && fits(p.c[k], p.c[k-1]); k-- {
					ok = in[p.c[k-1]]
				}
			}
			if !ok {
				in[c] = false
				changed = true
			}
		}
	}
	for c := range in {
		if in[c] {
			return true
		}
	}
	return false
}
