package domain

import (
	"math/bits"
	"strings"
	"unicode"
)

// This file deals PySolFC's numbered Klondike deals (R6.7): a game number a
// player found in PySolFC gives the same cards here. It follows PySolFC's
// own source (pysollib/pysolrandom.py construct_random, the pysol_cards
// generators it imports, Game.shuffle and Klondike.startGame), summed up in
// DEALS.md, and is pinned by testdata/pysolfc-klondike.jsonl. Like the
// shuffle of deal.go it is a promise: never change what a number deals.
//
//  1. The number (ParsePySolFC): "ms<N>" picks LC31 with seed N, 0 <= N <
//     2^33. Anything else loses one trailing "L", every space and
//     "# - _ . ,", and must then be a decimal N, 0 <= N <= 10^20: LC31 for
//     N < 32000, the Mersenne Twister for N >= 32000 (32000 itself is MT in
//     PySolFC; the pysol_cards command line differs there).
//  2. LC31 (lc31 below) is Microsoft FreeCell's linear congruential
//     generator, widened by PySolFC to 33-bit seeds; its randint is
//     a + r mod (b+1-a). MT (mt19937 below) is MT19937 seeded from N as
//     CPython's random.seed(int) seeds it (init_by_array over the 32-bit
//     words of N, least significant first); its randint is
//     a + floor(random() * (b+1-a)) with the 53-bit random() of CPython.
//  3. The pack starts in PySolFC's order, clubs, spades, hearts, diamonds,
//     each ace to king; for LC31 it is first re-ordered into Microsoft's
//     order (AC AD AH AS 2C ...). Fisher–Yates from the end: for n =
//     51..1, j = randint(0, n), swap cards n and j.
//  4. The shuffled list is PySolFC's talon, last card on top. Six rounds
//     i = 1..6 deal one face-down card to each of piles 6, 5, .., i (right
//     to left), then one face-up card to each of piles 6..0; the rest is
//     the stock, top first. (PySolFC turns the first stock card onto the
//     waste; our games start with an empty waste, so it is the first card
//     a draw turns.)

// DealSchemePySolFC is the scheme of PySolFC's numbered deals, the part
// before ":" of a numbered deal ("pysolfc:12345"). Shown by the API: never
// rename it.
const DealSchemePySolFC = "pysolfc"

// PySolFC number ranges (DEALS.md section 1).
const (
	pysolfcLCLimit = 32000   // plain numbers below this use LC31
	pysolfcMSLimit = 1 << 33 // ms<N> takes N below this
	// 10^20 as two 64-bit words: the largest plain number.
	pow20Hi = 5
	pow20Lo = 7766279631452241920
)

// PySolFCNumber is a parsed PySolFC game number (R6.7). The zero value is
// the plain number 0. N = Hi*2^64 + Lo is at most 10^20, and below 2^33
// when MS is set.
type PySolFCNumber struct {
	MS     bool   // written "ms<N>": LC31 whatever N is
	Hi, Lo uint64 // the value N in two words (10^20 needs 67 bits)
	digits string // N in decimal without leading zeros ("0" for zero)
}

// DealError is a numbered deal the server cannot deal: a malformed or
// out-of-range number, an unknown scheme, a variant the scheme does not
// apply to, or a deal combined with a seed or layout (R6.7). Detail is a
// sentence for the client; it quotes the input shortened.
type DealError struct {
	Detail string
}

// Error is "invalid deal: <detail>".
func (e *DealError) Error() string { return "invalid deal: " + e.Detail }

// ParseDeal parses a numbered deal "<scheme>:<number>"; the only scheme is
// "pysolfc". It returns the canonical form to record on the game
// ("pysolfc:ms5", "pysolfc:12345") and the parsed number. Errors are
// *DealError.
func ParseDeal(s string) (string, PySolFCNumber, error) {
	rest, ok := strings.CutPrefix(s, DealSchemePySolFC+":")
	if !ok {
		return "", PySolFCNumber{}, &DealError{Detail: "deal " + quoteShort(s) + ` must be "pysolfc:<number>", e.g. "pysolfc:12345" or "pysolfc:ms5"`}
	}
	n, err := ParsePySolFC(rest)
	if err != nil {
		return "", PySolFCNumber{}, err
	}
	return DealSchemePySolFC + ":" + n.String(), n, nil
}

// ParsePySolFC parses a PySolFC game number as PySolFC's construct_random
// does (DEALS.md section 1): "ms" followed by ASCII digits (optionally one
// final newline) for N < 2^33; otherwise, after dropping one trailing "L",
// lower-casing and deleting whitespace and the characters "#-_.,", decimal
// digits (any script's, and an optional leading "+", as Python's int()
// takes them) for N <= 10^20.
// Unlike PySolFC it accepts 0 ("0" and "ms0"), which DEALS.md allows and
// which PySolFC's LC31 refuses at seeding. Errors are *DealError.
func ParsePySolFC(s string) (PySolFCNumber, error) {
	if len(s) > 200 {
		return PySolFCNumber{}, &DealError{Detail: "a PySolFC game number has at most 200 characters"}
	}
	if rest, ok := strings.CutPrefix(s, "ms"); ok {
		rest = strings.TrimSuffix(rest, "\n")
		n, ok := parseDecimal(rest)
		if !ok {
			return PySolFCNumber{}, &DealError{Detail: "PySolFC number " + quoteShort(s) + ` is not "ms" followed by decimal digits`}
		}
		if n.Hi != 0 || n.Lo >= pysolfcMSLimit {
			return PySolFCNumber{}, &DealError{Detail: "PySolFC number " + quoteShort(s) + " is out of range: ms0 to ms8589934591 (2^33 - 1)"}
		}
		n.MS = true
		return n, nil
	}
	// Python's re.sub(r"L$", ...) also matches before a final newline.
	t := s
	if strings.HasSuffix(t, "L") {
		t = t[:len(t)-1]
	} else if strings.HasSuffix(t, "L\n") {
		t = t[:len(t)-2] + "\n"
	}
	t = strings.Map(func(r rune) rune {
		switch r {
		case '#', '-', '_', '.', ',', ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0xa0:
			return -1
		}
		if r > 0xff && isUnicodeSpace(r) {
			return -1
		}
		if r > 0x7f && unicode.IsDigit(r) {
			return '0' + unicodeDigit(r) // Python's int() reads any decimal digit
		}
		return r
	}, strings.ToLower(t))
	t = strings.TrimPrefix(t, "+")
	n, ok := parseDecimal(t)
	if !ok {
		return PySolFCNumber{}, &DealError{Detail: "PySolFC number " + quoteShort(s) + ` is not a decimal number (digits, optionally grouped with spaces or "#-_.,", or "ms" and digits)`}
	}
	if n.Hi > pow20Hi || n.Hi == pow20Hi && n.Lo > pow20Lo {
		return PySolFCNumber{}, &DealError{Detail: "PySolFC number " + quoteShort(s) + " is out of range: 0 to 100000000000000000000 (10^20)"}
	}
	return n, nil
}

// isUnicodeSpace is Python's str.isspace above Latin-1 (what \s matches in
// a str pattern): the Unicode White_Space characters and the separators.
func isUnicodeSpace(r rune) bool {
	switch {
	case r == 0x1680, r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}

// unicodeDigit is the value 0..9 of a decimal digit (Unicode category
// Nd): Unicode allots them in runs of ten from zero, which unicode.Nd
// keeps as ranges whose length is a multiple of ten.
func unicodeDigit(r rune) rune {
	for _, g := range unicode.Nd.R16 {
		if r >= rune(g.Lo) && r <= rune(g.Hi) {
			return (r - rune(g.Lo)) % 10
		}
	}
	for _, g := range unicode.Nd.R32 {
		if r >= rune(g.Lo) && r <= rune(g.Hi) {
			return (r - rune(g.Lo)) % 10
		}
	}
	return 0
}

// parseDecimal reads one or more ASCII digits into two 64-bit words. A
// number of more than 22 significant digits is cut to its first 22: still
// above 10^20, which both callers refuse, and far below 2^128, so the
// words never overflow.
func parseDecimal(s string) (PySolFCNumber, bool) {
	if s == "" {
		return PySolFCNumber{}, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return PySolFCNumber{}, false
		}
	}
	digits := strings.TrimLeft(s, "0")
	if digits == "" {
		digits = "0"
	}
	if len(digits) > 22 {
		digits = digits[:22] // already above 10^20; the value only has to say so
	}
	var n PySolFCNumber
	for _, c := range []byte(digits) {
		carry, lo := bits.Mul64(n.Lo, 10)
		lo, c2 := bits.Add64(lo, uint64(c-'0'), 0)
		n.Hi, n.Lo = n.Hi*10+carry+c2, lo
	}
	n.digits = digits
	return n, true
}

// String is the canonical number: "ms<N>" or the decimal N, without
// leading zeros or separators; ParsePySolFC gives the same number back.
func (n PySolFCNumber) String() string {
	d := n.digits
	if d == "" {
		d = formatTwoWords(n.Hi, n.Lo)
	}
	if n.MS {
		return "ms" + d
	}
	return d
}

// formatTwoWords writes Hi*2^64 + Lo in decimal.
func formatTwoWords(hi, lo uint64) string {
	if hi == 0 && lo == 0 {
		return "0"
	}
	var buf [40]byte
	i := len(buf)
	for hi != 0 || lo != 0 {
		var r uint64
		hi, r = bits.Div64(0, hi, 10)
		lo, r = bits.Div64(r, lo, 10)
		i--
		buf[i] = byte('0' + r)
	}
	return string(buf[i:])
}

// LC31 reports whether the number uses the LC31 generator (else MT).
func (n PySolFCNumber) LC31() bool {
	return n.MS || n.Hi == 0 && n.Lo < pysolfcLCLimit
}

// pysolfcRandom is the randint of one of PySolFC's generators.
type pysolfcRandom interface {
	randint(a, b int) int
}

// lc31 is PySolFC's LCRandom31 (DEALS.md section 2).
type lc31 struct {
	seed uint64 // the number as given, 0 <= seed < 2^33
	x    uint64 // the generator state, below 2^33
}

func newLC31(seed uint64) *lc31 {
	x := seed
	if seed >= 1<<32 {
		x = seed - 1<<32
	}
	return &lc31{seed: seed, x: x}
}

func (g *lc31) randint(a, b int) int {
	g.x = (g.x*214013 + 2531011) & (1<<33 - 1)
	var r uint64
	if g.seed < 1<<32 {
		r = (g.x >> 16) & 0x7fff
		if g.seed >= 1<<31 {
			r |= 0x8000
		}
	} else {
		r = (g.x>>16)&0xffff + 1
	}
	return a + int(r%uint64(b+1-a))
}

// mt19937 is the Mersenne Twister of Matsumoto and Nishimura (1998) as
// CPython's _random module has it (genrand_uint32, init_genrand,
// init_by_array), with random.Random's random() and PySolFC's randint.
type mt19937 struct {
	mt  [mtN]uint32
	mti int
}

const (
	mtN         = 624
	mtM         = 397
	mtMatrixA   = 0x9908b0df
	mtUpperMask = 0x80000000
	mtLowerMask = 0x7fffffff
)

// newMT seeds the generator from the integer hi*2^64 + lo the way
// random.seed(int) does: init_by_array over its 32-bit words, least
// significant first, as many as its bit length needs ([0] for zero).
func newMT(hi, lo uint64) *mt19937 {
	key := []uint32{uint32(lo), uint32(lo >> 32), uint32(hi), uint32(hi >> 32)}
	for len(key) > 1 && key[len(key)-1] == 0 {
		key = key[:len(key)-1]
	}
	g := &mt19937{}
	g.initByArray(key)
	return g
}

func (g *mt19937) initGenrand(s uint32) {
	g.mt[0] = s
	for i := 1; i < mtN; i++ {
		g.mt[i] = 1812433253*(g.mt[i-1]^(g.mt[i-1]>>30)) + uint32(i)
	}
	g.mti = mtN
}

func (g *mt19937) initByArray(key []uint32) {
	g.initGenrand(19650218)
	i, j := 1, 0
	for k := max(mtN, len(key)); k > 0; k-- {
		g.mt[i] = (g.mt[i] ^ ((g.mt[i-1] ^ (g.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= mtN {
			g.mt[0] = g.mt[mtN-1]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k := mtN - 1; k > 0; k-- {
		g.mt[i] = (g.mt[i] ^ ((g.mt[i-1] ^ (g.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= mtN {
			g.mt[0] = g.mt[mtN-1]
			i = 1
		}
	}
	g.mt[0] = 0x80000000 // MSB is 1, assuring a non-zero initial array
}

func (g *mt19937) next32() uint32 {
	if g.mti >= mtN {
		mag := func(y uint32) uint32 { return (y & 1) * mtMatrixA }
		kk := 0
		for ; kk < mtN-mtM; kk++ {
			y := g.mt[kk]&mtUpperMask | g.mt[kk+1]&mtLowerMask
			g.mt[kk] = g.mt[kk+mtM] ^ y>>1 ^ mag(y)
		}
		for ; kk < mtN-1; kk++ {
			y := g.mt[kk]&mtUpperMask | g.mt[kk+1]&mtLowerMask
			g.mt[kk] = g.mt[kk+mtM-mtN] ^ y>>1 ^ mag(y)
		}
		y := g.mt[mtN-1]&mtUpperMask | g.mt[0]&mtLowerMask
		g.mt[mtN-1] = g.mt[mtM-1] ^ y>>1 ^ mag(y)
		g.mti = 0
	}
	y := g.mt[g.mti]
	g.mti++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// random is CPython's random_random: a float64 in [0, 1) from 53 bits.
func (g *mt19937) random() float64 {
	a, b := g.next32()>>5, g.next32()>>6
	return (float64(a)*67108864.0 + float64(b)) * (1.0 / 9007199254740992.0)
}

func (g *mt19937) randint(a, b int) int {
	return a + int(g.random()*float64(b+1-a))
}

// pysolfcCard is card i (0..51) of PySolFC's fresh deck: suits clubs,
// spades, hearts, diamonds, each ace to king.
func pysolfcCard(i int) Card {
	suits := [4]Suit{Clubs, Spades, Hearts, Diamonds}
	return NewCard(i%13+1, suits[i/13])
}

// Talon returns the 52 cards in the order PySolFC puts them on the talon
// for this number (steps 2–3 above): the last card is the talon's top,
// dealt first.
func (n PySolFCNumber) Talon() []Card {
	cards := make([]Card, 52)
	for i := range cards {
		cards[i] = pysolfcCard(i)
	}
	var rng pysolfcRandom
	if n.LC31() {
		ms := make([]Card, 0, 52)
		for i := 0; i < 13; i++ {
			for _, j := range [4]int{0, 39, 26, 13} {
				ms = append(ms, cards[i+j])
			}
		}
		cards = ms
		rng = newLC31(n.Lo)
	} else {
		rng = newMT(n.Hi, n.Lo)
	}
	for i := len(cards) - 1; i > 0; i-- {
		j := rng.randint(0, i)
		cards[i], cards[j] = cards[j], cards[i]
	}
	return cards
}

// KlondikeDeal returns PySolFC's Klondike start for this number (step 4
// above) as our starting position: 7 piles of 1..7 cards, top card face
// up, the other 24 in the stock in the order draw turns them; waste and
// foundations empty (4 foundations).
func (n PySolFCNumber) KlondikeDeal() Position {
	talon := n.Talon()
	take := func() Card {
		c := talon[len(talon)-1]
		talon = talon[:len(talon)-1]
		return c
	}
	const piles = 7
	p := Position{Tableau: make([]PileLayout, piles), Foundations: make([][]Card, 4)}
	for i := range p.Tableau {
		p.Tableau[i] = PileLayout{Down: []Card{}, Up: []Card{}}
	}
	for round := 1; round < piles; round++ {
		for k := piles - 1; k >= round; k-- {
			p.Tableau[k].Down = append(p.Tableau[k].Down, take())
		}
	}
	for k := piles - 1; k >= 0; k-- {
		p.Tableau[k].Up = append(p.Tableau[k].Up, take())
	}
	p.Stock = make([]Card, 0, len(talon))
	for len(talon) > 0 {
		p.Stock = append(p.Stock, take())
	}
	return p
}

// NumberedDeals lists the deal schemes a game with rules r may be dealt
// from (R6.7): "pysolfc" for a one-deck game of Klondike's shape (7 piles,
// 4 foundations), none otherwise.
func NumberedDeals(r Rules) []string {
	if r.Decks == 1 && r.Piles == 7 && r.Foundations == 4 {
		return []string{DealSchemePySolFC}
	}
	return []string{}
}
