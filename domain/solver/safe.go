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
//   - With take-back, rank r >= 3: when every card of every suit below r is
//     on a foundation, all cards still in play are r or higher, and what
//     could be built on c (r-1, r-2, ...) can only come from a foundation
//     and can only hold cards from a foundation: such a pile is never worth
//     building, so c serves as a base for nothing.
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
	if r <= 2 {
		return true
	}
	decks := g.cards / 52
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
	for s := byte(0); s < 4; s++ {
		if g.homeCount(s, r-1) < decks {
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
