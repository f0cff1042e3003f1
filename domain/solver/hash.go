package solver

// The transposition table's key is two independent 64-bit hashes of the
// position (128 bits: two positions of one search share a key with
// probability about n²/2¹²⁹, below 10⁻²⁰ for the largest budgets, so an
// "unwinnable" never rests on a collision in practice). It is canonical:
//
//   - tableau piles are hashed one by one and the pile hashes summed after
//     a mixing step, so the order of piles does not matter (the rules treat
//     every pile alike); in abstract mode (abstract.go) a pile adds only a
//     key of its count of locked cards, and the face-up cards off the
//     bases are left out: their arrangement does not matter there;
//   - foundations add a key of their top card, so their order does not
//     matter either (R1.4: any ace starts any foundation);
//   - the talon adds a key per card that has left it (its order is fixed:
//     only removals change it), and a key of the waste size and the
//     recycles made, except where neither matters: with draw 1 and
//     unlimited passes every talon card is always reachable. With draw 3
//     and unlimited passes a waste size that is a multiple of 3, or the
//     whole talon, reaches the same talon cards as an empty waste (the
//     waste sizes 3, 6, ... and the talon's end, after a recycle where
//     needed), so those sizes share the empty waste's key: the search's
//     moves from such positions are the same.
//
// Suit symmetry (swapping the two black or the two red suits maps a
// position to an equivalent one) is not used: within the search of one
// deal a position and its mirror image almost never both occur, and a
// second canonical form per node would cost more than it saves.

// splitmix is the SplitMix64 finaliser, a strong 64-bit mixer.
func splitmix(z uint64) uint64 {
	z += 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// Random keys, fixed (derived from constants, so runs are reproducible).
var (
	foundKey [2][257]uint64          // by top card (256 = empty, unused)
	talonKey [2][maxCards]uint64     // by talon index gone
	ptrKey   [2][maxCards + 1]uint64 // by waste size
	recKey   [2][101]uint64          // by recycles made
	// abstract mode: by pile and its count of locked cards (abstract.go)
	lockKey [2][maxPiles][53]uint64
)

func init() {
	x := uint64(0x5EED50117A1E)
	next := func() uint64 { x = splitmix(x); return x }
	for h := 0; h < 2; h++ {
		for i := range foundKey[h] {
			foundKey[h][i] = next()
		}
		for i := range talonKey[h] {
			talonKey[h][i] = next()
		}
		for i := range ptrKey[h] {
			ptrKey[h][i] = next()
		}
		for i := range recKey[h] {
			recKey[h][i] = next()
		}
		for i := range lockKey[h] {
			for j := range lockKey[h][i] {
				lockKey[h][i][j] = next()
			}
		}
	}
}

// rehashPile recomputes the hash of tableau pile i.
func (g *game) rehashPile(i int) {
	if g.abs {
		return // abstract mode keys piles by their locked cards only
	}
	p := &g.tab[i]
	a := uint64(p.down)*0x100000001B3 + 0xCBF29CE484222325
	b := uint64(p.down)*0xC2B2AE3D27D4EB4F + 0x165667B19E3779F9
	for k := 0; k < int(p.n); k++ {
		c := uint64(p.c[k]) + 1
		a = (a ^ c) * 0x100000001B3
		b = (b + c) * 0x9E3779B97F4A7C15
		b ^= b >> 29
	}
	g.ph[i] = [2]uint64{splitmix(a ^ uint64(p.n)<<56), splitmix(b + uint64(p.n))}
}

// addTalonKey adds (sign 1) or removes (sign -1) the key of talon index idx.
func (g *game) addTalonKey(idx byte, sign int) {
	if sign > 0 {
		g.th[0] += talonKey[0][idx]
		g.th[1] += talonKey[1][idx]
	} else {
		g.th[0] -= talonKey[0][idx]
		g.th[1] -= talonKey[1][idx]
	}
}

// key is the canonical 128-bit key of the position.
func (g *game) key() [2]uint64 {
	k := g.th
	if g.abs {
		for i := 0; i < g.piles; i++ {
			l := g.locked(i)
			k[0] += lockKey[0][i][l]
			k[1] += lockKey[1][i][l]
		}
	} else {
		for i := 0; i < g.piles; i++ {
			k[0] += g.ph[i][0]
			k[1] += g.ph[i][1]
		}
	}
	for i := 0; i < g.nfound; i++ {
		if c := g.found[i]; c != noCard {
			k[0] += foundKey[0][c]
			k[1] += foundKey[1][c]
		}
	}
	if g.draw != 1 || g.passes != 0 {
		w := g.w
		if g.passes == 0 && (w%g.draw == 0 || w == g.tl) {
			w = 0 // the same talon cards reachable as from an empty waste
		}
		k[0] += ptrKey[0][w]
		k[1] += ptrKey[1][w]
		if g.passes != 0 {
			k[0] ^= recKey[0][g.rec]
			k[1] ^= recKey[1][g.rec]
		}
	}
	return k
}

// table is an open-addressing hash set of keys (linear probing, grows at
// half full). The zero key is never stored: a key with word 0 zero is
// nudged to 1, which costs a bit of the 128 only.
type table struct {
	slots [][2]uint64
	n     int
	mask  uint64
}

func newTable(logSize uint) *table {
	return &table{slots: make([][2]uint64, 1<<logSize), mask: 1<<logSize - 1}
}

// insert adds k and reports whether it was new.
func (t *table) insert(k [2]uint64) bool {
	if k[0] == 0 {
		k[0] = 1
	}
	if 2*(t.n+1) > len(t.slots) {
		t.grow()
	}
	for i := k[1] & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s[0] == 0 {
			*s = k
			t.n++
			return true
		}
		if *s == k {
			return false
		}
	}
}

// remove takes k out of the table if it is there (deletion by backward
// shift, so every other key stays reachable from its home slot).
func (t *table) remove(k [2]uint64) {
	if k[0] == 0 {
		k[0] = 1
	}
	i := k[1] & t.mask
	for ; t.slots[i] != k; i = (i + 1) & t.mask {
		if t.slots[i][0] == 0 {
			return
		}
	}
	for j := i; ; {
		j = (j + 1) & t.mask
		if t.slots[j][0] == 0 {
			break
		}
		// The key at j may fill hole i unless its home lies cyclically
		// in (i, j].
		h := t.slots[j][1] & t.mask
		if i <= j && i < h && h <= j || i > j && (i < h || h <= j) {
			continue
		}
		t.slots[i] = t.slots[j]
		i = j
	}
	t.slots[i] = [2]uint64{}
	t.n--
}

func (t *table) grow() {
	old := t.slots
	t.slots = make([][2]uint64, 2*len(old))
	t.mask = uint64(len(t.slots) - 1)
	for _, k := range old {
		if k[0] == 0 {
			continue
		}
		for i := k[1] & t.mask; ; i = (i + 1) & t.mask {
			if t.slots[i][0] == 0 {
				t.slots[i] = k
				break
			}
		}
	}
}
