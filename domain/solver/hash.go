package solver

// The transposition table's key is a 64-bit hash of the position. Two
// positions of one search are taken for one only when their keys are equal
// and one is probed while the other is stored: each probe compares a few
// stored keys, so with p probes in a search the chance of any such mix-up
// is below 4p/2⁶⁴, under 10⁻¹⁰ for the largest budgets here (10⁸ probes
// in a 10 s search), which an "unwinnable" verdict rests on. (A second
// 64-bit word would make that 10⁻²⁹, at twice the memory per position;
// the table's memory traffic is most of a large search's time.)
// The key is canonical:
//
//   - tableau piles are hashed one by one and the pile hashes summed after
//     a mixing step, so the order of piles does not matter (the rules treat
//     every pile alike); in abstract mode (abstract.go) a pile's hash is
//     only a key of its count of locked cards, and the face-up cards off the
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
	foundKey [257]uint64          // by top card (256 = empty, unused)
	talonKey [maxCards]uint64     // by talon index gone
	ptrKey   [maxCards + 1]uint64 // by waste size
	recKey   [101]uint64          // by recycles made
	// abstract mode: by pile and its count of locked cards (abstract.go)
	lockKey [maxPiles][53]uint64
)

func init() {
	x := uint64(0x5EED50117A1E)
	next := func() uint64 { x = splitmix(x); return x }
	for i := range foundKey {
		foundKey[i] = next()
	}
	for i := range talonKey {
		talonKey[i] = next()
	}
	for i := range ptrKey {
		ptrKey[i] = next()
	}
	for i := range recKey {
		recKey[i] = next()
	}
	for i := range lockKey {
		for j := range lockKey[i] {
			lockKey[i][j] = next()
		}
	}
}

// rehashPile recomputes the hash of tableau pile i (after every change of
// the pile; rehashAll after a change of mode).
func (g *game) rehashPile(i int) {
	old := g.ph[i]
	if g.abs {
		g.ph[i] = lockKey[i][g.locked(i)] // abstract mode: the locked cards only
	} else {
		p := &g.tab[i]
		a := uint64(p.down)*0x100000001B3 + 0xCBF29CE484222325
		for k := 0; k < int(p.n); k++ {
			a = (a ^ (uint64(p.c[k]) + 1)) * 0x100000001B3
		}
		g.ph[i] = splitmix(a ^ uint64(p.n)<<56)
	}
	g.pk += g.ph[i] - old
}

// rehashAll recomputes every pile's hash.
func (g *game) rehashAll() {
	for i := 0; i < g.piles; i++ {
		g.rehashPile(i)
	}
}

// addTalonKey adds (sign 1: the card at talon index idx leaves the talon)
// or removes (sign -1: it comes back) the key of talon index idx, and
// keeps inTalon.
func (g *game) addTalonKey(idx byte, sign int) {
	bit := uint64(1) << (g.orig[idx] & 63)
	if sign > 0 {
		g.th += talonKey[idx]
		g.inTalon &^= bit
	} else {
		g.th -= talonKey[idx]
		g.inTalon |= bit
	}
}

// key is the canonical 64-bit key of the position.
func (g *game) key() uint64 {
	k := g.th + g.pilesKey()
	if g.draw != 1 || g.passes != 0 {
		w := g.w
		if g.passes == 0 && (w%g.draw == 0 || w == g.tl) {
			w = 0 // the same talon cards reachable as from an empty waste
		}
		k += ptrKey[w]
		if g.passes != 0 {
			k ^= recKey[g.rec]
		}
	}
	return k
}

// table is an open-addressing hash set of keys, the transposition table
// and the other key sets of the search (hashTable with no values).
type table struct{ hashTable[struct{}] }

// newTable makes an empty table of 1<<logSize slots (logSize 1..63).
func newTable(logSize uint) *table { return &table{newHashTable[struct{}](logSize)} }

// insert adds k and reports whether it was new.
func (t *table) insert(k uint64) bool { return t.put(k, struct{}{}) }

// has reports whether k is in the table.
func (t *table) has(k uint64) bool {
	_, ok := t.get(k)
	return ok
}

// remove takes k out of the table if it is there.
func (t *table) remove(k uint64) { t.del(k) }

// hashTable is an open-addressing hash map from 64-bit keys to values of
// type V (struct{} for a set: no memory for them): linear probing from the
// home slot given by a key's top bits, 8 bytes a slot plus the value,
// grown to twice the size when three quarters full, deletion by backward
// shift. The zero key is never stored (it marks an empty slot): a zero
// key is nudged to 1. The search enters and looks up every position here
// at least once, where Go maps cost more than this layout.
type hashTable[V any] struct {
	slots []uint64 // the keys, 0 for an empty slot
	vals  []V      // vals[i] is the value of slots[i]
	n     int      // keys stored
	shift uint     // 64 - log2(len(slots)): a key's home is k >> shift
}

// newHashTable makes an empty hash table of 1<<logSize slots (logSize
// 1..63).
func newHashTable[V any](logSize uint) hashTable[V] {
	return hashTable[V]{slots: make([]uint64, 1<<logSize), vals: make([]V, 1<<logSize), shift: 64 - logSize}
}

// put sets k's value to v and reports whether k was new.
func (t *hashTable[V]) put(k uint64, v V) bool {
	if k == 0 {
		k = 1
	}
	if 4*(t.n+1) > 3*len(t.slots) {
		t.grow()
	}
	slots := t.slots
	vals := t.vals[:len(slots)] // the same length: one bounds check serves both
	mask := uint64(len(slots) - 1)
	for i := k >> t.shift; ; i = (i + 1) & mask {
		switch slots[i] {
		case 0:
			slots[i], vals[i] = k, v
			t.n++
			return true
		case k:
			vals[i] = v
			return false
		}
	}
}

// get returns k's value and whether k is in the table.
func (t *hashTable[V]) get(k uint64) (v V, ok bool) {
	if k == 0 {
		k = 1
	}
	slots := t.slots
	vals := t.vals[:len(slots)]
	mask := uint64(len(slots) - 1)
	for i := k >> t.shift; ; i = (i + 1) & mask {
		switch slots[i] {
		case k:
			return vals[i], true
		case 0:
			return v, false
		}
	}
}

// del takes k out of the table if it is there (deletion by backward
// shift, so every other key stays reachable from its home slot).
func (t *hashTable[V]) del(k uint64) {
	if k == 0 {
		k = 1
	}
	slots := t.slots
	vals := t.vals[:len(slots)]
	mask := uint64(len(slots) - 1)
	i := k >> t.shift
	for ; slots[i] != k; i = (i + 1) & mask {
		if slots[i] == 0 {
			return
		}
	}
	for j := i; ; {
		j = (j + 1) & mask
		if slots[j] == 0 {
			break
		}
		// The key at j may fill hole i unless its home lies cyclically
		// in (i, j].
		h := slots[j] >> t.shift
		if i <= j && i < h && h <= j || i > j && (i < h || h <= j) {
			continue
		}
		slots[i], vals[i] = slots[j], vals[j]
		i = j
	}
	slots[i] = 0
	t.n--
}

// clear empties the table, keeping its size.
func (t *hashTable[V]) clear() {
	clear(t.slots)
	t.n = 0
}

// grow doubles the table's size, every key keeping its value.
func (t *hashTable[V]) grow() {
	slots, vals := t.slots, t.vals
	t.slots, t.vals = make([]uint64, 2*len(slots)), make([]V, 2*len(slots))
	t.shift--
	mask := uint64(len(t.slots) - 1)
	for j, k := range slots {
		if k == 0 {
			continue
		}
		for i := k >> t.shift; ; i = (i + 1) & mask {
			if t.slots[i] == 0 {
				t.slots[i], t.vals[i] = k, vals[j]
				break
			}
		}
	}
}

// pilesKey is the key's part of the piles and foundations: the key less
// the talon's sum and, with draw 3 or limited passes, the waste's part
// (the relaxation probes key their verdicts by it plus the talon's sum).
func (g *game) pilesKey() uint64 { return g.pk }
