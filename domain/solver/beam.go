package solver

// Beam search, with two or three decks. The depth-first search proves a
// multi-deck deal lost only by exhausting it, and finds a win only where
// its move order happens to lead there: a Harp or Tripleharp line is
// hundreds of moves long (medians 395 and 655, draws included: BENCHMARKS.md
// "Harp and Tripleharp"), and an early wrong move (a card put where a copy of
// it was needed, a card kept back from its foundation) sends the search
// through millions of positions below it. Most multi-deck deals are won,
// and most of those are won by playing on from the positions with the
// fewest cards still to go home and face down, which a beam search does:
// from each level of positions it makes every candidate move (moves.go)
// and the automatic moves after it (safe.go), and keeps the width best
// positions as the next level, best by the number of cards not home plus
// the number of face-down cards and of the face-up cards that cover them.
// It finds wins only; a level with no position left says nothing about
// the deal.
//
// A position is kept as a compact snapshot (snapshot) and the game
// restored from it to expand it; a kept position records the moves that
// led to it from its parent, so a win's line is read off its ancestors.
// Every position kept in an earlier level of the same beam is not kept
// again (a move and its reverse would otherwise fill the beam with the
// same positions), nor is one twice within a level.

// beamNode is a position kept in a level: its parent's index in the
// beam's nodes (-1 for the root) and its moves from the parent,
// moves[from:to] of the beam.
type beamNode struct {
	parent   int32
	from, to int32
}

// beamEntry is a candidate for the next level while it is being filled.
type beamEntry struct {
	score  uint64 // lower is better; ties broken by the key's bits
	key    uint64
	parent int32
	snap   []byte
	moves  []move
}

// beam is the state of one beam search over the game of s.
type beam struct {
	s     *search // its game, path, budget and line
	nodes []beamNode
	moves []move
	seen  *table // keys of every position kept in a level so far
	level *table // keys of the entries of the level being filled
	cur   []beamEntry
	nxt   []beamEntry // a max-heap on score while it is filled
	spare []beamEntry // entries dropped from nxt, their buffers reused
	buf   []move
}

// beamWeights weigh a position's use of the talon against its cards not
// home (beamScore): rec per recycle made, waste per waste card once no
// recycle is left (they are then a pile whose cards leave from the top
// only), down per face-down card. Without the talon's weights the beam
// spends the passes at once, since every recycle reaches new cards, and
// ends on the last pass with most of the talon buried in the waste.
type beamWeights struct{ rec, waste, down int }

// beamPortfolio are the weights the beams of beamTurns take in turn:
// which of them wins a deal at a small width varies from deal to deal,
// so each width is tried with all of them.
var beamPortfolio = [...]beamWeights{{rec: 15, waste: 1, down: 1}, {rec: 10, waste: 2, down: 1}, {rec: 5, waste: 1, down: 1}}

// beamDepth bounds a beam's levels, in moves per card of the deal: a
// won line is shorter (a talon move folds its draws), and a beam past it
// is wandering among take-backs and moves to and fro.
const beamDepth = 4

// beamCovering weighs, in quarters and by the number of decks, each
// face-up card that lies on a face-down card's pile (beamScore). Harp and
// Tripleharp move single cards only, so every such card must leave by a
// move of its own before the card under it turns up: a pile built up on
// face-down cards buries them, and the count of cards not home and face
// down does not see it. On seeds 1-100 at 4,000,000 positions a deal,
// Tripleharp wins 32 deals without the weight and 96, 99 and 99 with 6,
// 12 and 24 quarters; Harp 97, 95 and 94 with 6, 8 and 12
// (BENCHMARKS.md "Harp and Tripleharp").
var beamCovering = [4]int{2: 6, 3: 12}

// beamScore is a position's priority: cards not home plus face-down
// cards, plus the face-up cards over face-down ones (beamCovering), plus
// the talon's use weighed by w; the key's high bits break ties, so that
// among equal positions the kept ones are a fixed but spread-out choice.
func (g *game) beamScore(k uint64, w beamWeights) uint64 {
	down, covering := 0, 0
	for i := 0; i < g.piles; i++ {
		p := &g.tab[i]
		down += int(p.down)
		if p.down > 0 {
			covering += int(p.n - p.down)
		}
	}
	sc := g.cards - g.onFound + w.down*down + w.rec*g.rec + beamCovering[min(g.cards/52, 3)]*covering/4
	if !g.canRecycle() {
		sc += w.waste * g.w
	}
	return uint64(sc)<<40 | k>>24
}

// runBeam searches s's game (s has begun: the root's automatic moves are
// on its path) with a beam of the given width. It reports whether it
// found a win; then s.path holds the line from s.root. It stops when a
// level is empty, or when s's node or time budget runs out (s.aborted).
// The positions it makes count in s.nodes.
func runBeam(s *search, width int, w beamWeights) bool {
	b := &beam{s: s, seen: newTable(12), level: newTable(12)}
	g := s.g
	rootPath := append([]move(nil), s.path...)
	b.moves = append(b.moves, rootPath...)
	b.nodes = append(b.nodes, beamNode{parent: -1, from: 0, to: int32(len(rootPath))})
	b.cur = append(b.cur, beamEntry{snap: g.snapshot(nil), parent: -1})
	b.seen.insert(g.key())
	defer func() {
		// the caller goes on from the root as it was
		b.restoreTo(rootPath)
	}()
	for depth := 0; len(b.cur) > 0 && depth < beamDepth*g.cards; depth++ {
		if b.fill(width, w) {
			return true
		}
		if s.aborted {
			return false
		}
		b.next()
	}
	return false
}

// fill expands every entry of the current level into nxt, keeping the
// width best children. It reports a win (s.path holds its line).
func (b *beam) fill(width int, w beamWeights) bool {
	s, g := b.s, b.s.g
	b.level.clear()
	for ci := range b.cur {
		e := &b.cur[ci]
		node := int32(len(b.nodes) - len(b.cur) + ci) // its node: next appended them in order
		g.restore(e.snap)
		s.path, s.undos = s.path[:0], s.undos[:0]
		b.buf = g.candidates(b.buf[:0])
		for _, m := range b.buf {
			s.do(m)
			s.automatic()
			s.nodes++
			if g.onFound == g.cards {
				b.lineTo(node)
				return true
			}
			if s.nodes > s.maxNodes || (s.nodes&1023 == 0 && (s.timeUp() || s.ctx.Err() != nil)) {
				s.aborted = true
				return false
			}
			k := g.key()
			if !b.seen.has(k) && !b.level.has(k) {
				b.offer(width, g.beamScore(k, w), k, node)
			}
			s.back(0)
		}
	}
	return false
}

// offer puts the current position into nxt if it is among the width best
// so far (replacing the worst when nxt is full).
func (b *beam) offer(width int, score, k uint64, parent int32) {
	if len(b.nxt) >= width && score >= b.nxt[0].score {
		return
	}
	var e beamEntry
	if len(b.nxt) >= width {
		b.level.remove(b.nxt[0].key)
		e = b.nxt[0]
		b.pop()
	} else if n := len(b.spare); n > 0 {
		e = b.spare[n-1]
		b.spare = b.spare[:n-1]
	}
	b.level.insert(k)
	e.score, e.key, e.parent = score, k, parent
	e.snap = b.s.g.snapshot(e.snap[:0])
	e.moves = append(e.moves[:0], b.s.path...)
	b.push(e)
}

// next makes nxt, best first, the current level and records its nodes.
func (b *beam) next() {
	b.spare = append(b.spare, b.cur...)
	b.cur = b.cur[:0]
	// heap order, worst first: popping gives worst to best; reverse
	for len(b.nxt) > 0 {
		e := b.nxt[0]
		b.pop()
		b.cur = append(b.cur, e)
	}
	for i, j := 0, len(b.cur)-1; i < j; i, j = i+1, j-1 {
		b.cur[i], b.cur[j] = b.cur[j], b.cur[i]
	}
	for i := range b.cur {
		e := &b.cur[i]
		b.seen.insert(e.key)
		from := int32(len(b.moves))
		b.moves = append(b.moves, e.moves...)
		b.nodes = append(b.nodes, beamNode{parent: e.parent, from: from, to: int32(len(b.moves))})
	}
}

// push and pop keep nxt a max-heap on score.
func (b *beam) push(e beamEntry) {
	h := append(b.nxt, e)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p].score >= h[i].score {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	b.nxt = h
}

func (b *beam) pop() {
	h := b.nxt
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && h[l].score > h[m].score {
			m = l
		}
		if l+1 < n && h[l+1].score > h[m].score {
			m = l + 1
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	b.nxt = h
}

// lineTo sets s.path to the moves from the root to node and then the
// moves on s.path (the current position's, from that node).
func (b *beam) lineTo(node int32) {
	tail := append([]move(nil), b.s.path...)
	b.s.path = append(b.pathTo(node), tail...)
}

// pathTo is the moves from the root to node.
func (b *beam) pathTo(node int32) []move {
	var chain []int32
	for n := node; n >= 0; n = b.nodes[n].parent {
		chain = append(chain, n)
	}
	var out []move
	for i := len(chain) - 1; i >= 0; i-- {
		nd := b.nodes[chain[i]]
		out = append(out, b.moves[nd.from:nd.to]...)
	}
	return out
}

// restoreTo puts s's game back to the root (the first level's snapshot)
// with path on s.path and its undos, as begin left it.
func (b *beam) restoreTo(path []move) {
	s := b.s
	if len(s.path) > 0 && s.g.onFound == s.g.cards {
		return // won: the line stays
	}
	*s.g = s.root
	s.path, s.undos = s.path[:0], s.undos[:0]
	for _, m := range path {
		s.do(m)
	}
}

// snapshot appends the position's compact form to buf: waste size,
// recycles (two bytes), talon length and talon, foundation tops, then per
// pile its size, face-down count and cards, then the talon's key part and
// its card set.
func (g *game) snapshot(buf []byte) []byte {
	buf = append(buf, byte(g.w), byte(g.rec), byte(g.rec>>8), byte(g.tl))
	buf = append(buf, g.talon[:g.tl]...)
	buf = append(buf, g.found[:g.nfound]...)
	for i := 0; i < g.piles; i++ {
		p := &g.tab[i]
		buf = append(buf, p.n, p.down)
		buf = append(buf, p.c[:p.n]...)
	}
	buf = appendU64(buf, g.th)
	buf = appendU64(buf, g.inTalon)
	return buf
}

func appendU64(b []byte, x uint64) []byte {
	for i := 0; i < 8; i++ {
		b = append(b, byte(x>>(8*i)))
	}
	return b
}

func readU64(b []byte) uint64 {
	var x uint64
	for i := 0; i < 8; i++ {
		x |= uint64(b[i]) << (8 * i)
	}
	return x
}

// restore makes the position of snapshot b (of the same game) current,
// with every hash and derived field as make keeps them.
func (g *game) restore(b []byte) {
	g.w, g.rec, g.tl = int(b[0]), int(b[1])|int(b[2])<<8, int(b[3])
	b = b[4:]
	copy(g.talon[:g.tl], b)
	b = b[g.tl:]
	g.pk, g.onFound = 0, 0
	for i := 0; i < g.nfound; i++ {
		g.found[i] = noCard
	}
	if g.cards == 52 {
		g.height = [4]int8{}
		g.next = 1 | 1<<13 | 1<<26 | 1<<39
	}
	for i := 0; i < g.nfound; i++ {
		if c := b[i]; c != noCard {
			g.setFound(i, c)
			g.onFound += int(rankOf[c])
		}
	}
	b = b[g.nfound:]
	for i := 0; i < g.piles; i++ {
		p := &g.tab[i]
		p.n, p.down = b[0], b[1]
		copy(p.c[:p.n], b[2:2+int(p.n)])
		b = b[2+int(p.n):]
		g.ph[i] = 0
		g.rehashPile(i)
	}
	g.th, g.inTalon = readU64(b), readU64(b[8:])
}
