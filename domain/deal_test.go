package domain

// Deal tests (RULES R6.1): the shuffle's test vectors, which must never
// change once released, a reference implementation written from the
// documentation in deal.go, and the shapes of the deals of R3.

import (
	"bytes"
	"flag"
	"fmt"
	"math/big"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write testdata/deals.golden from the current shuffle (R6.1: only for new vectors, never to change one)")

const dealsGolden = "../testdata/deals.golden"

// dealVectorSeeds and decks cover the edges of the seed space.
var dealVectorSeeds = []uint64{0, 1, 42, 123456789, 1<<64 - 1}

// dealVectors renders one line per (decks, seed): the full ShuffledPack,
// index 0 (dealt first) first.
func dealVectors() []byte {
	var b bytes.Buffer
	for decks := 1; decks <= 3; decks++ {
		for _, seed := range dealVectorSeeds {
			fmt.Fprintf(&b, "decks=%d seed=%d %s\n", decks, seed, cardList(ShuffledPack(seed, decks)))
		}
	}
	return b.Bytes()
}

// TestDealVectors pins the shuffle (R6.1): the same seed gives the same
// pack on every version and machine. Run with -update only to add vectors.
func TestDealVectors(t *testing.T) {
	got := dealVectors()
	if *update {
		if err := os.WriteFile(dealsGolden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", dealsGolden)
	}
	want, err := os.ReadFile(dealsGolden)
	if err != nil {
		t.Fatalf("%v (create it with go test ./domain -run TestDealVectors -update)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			if i >= len(gl) || i >= len(wl) || gl[i] != wl[i] {
				g, w := "", ""
				if i < len(gl) {
					g = gl[i]
				}
				if i < len(wl) {
					w = wl[i]
				}
				t.Fatalf("R6.1: the shuffle changed: deals.golden line %d\n got %s\nwant %s", i+1, g, w)
			}
		}
	}
}

// R6.1: SplitMix64 gives the published reference outputs (the C reference
// of Vigna's splitmix64.c).
func TestR6_1_SplitMix64Reference(t *testing.T) {
	for _, tc := range []struct {
		seed uint64
		want []uint64
	}{
		{0, []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f, 0xf88bb8a8724c81ec}},
		{1234567, []uint64{6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431, 16408922859458223821}},
	} {
		g := splitMix64{state: tc.seed}
		for i, w := range tc.want {
			if got := g.next(); got != w {
				t.Fatalf("seed %d output %d: %#x, want %#x", tc.seed, i, got, w)
			}
		}
	}
}

// refShuffle is steps 1–4 of deal.go written independently: 128-bit
// products with math/big, rejection below (2^64 - n) mod n, Fisher–Yates
// from the end.
func refShuffle(seed uint64, decks int) []Card {
	mask := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1))
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	state := new(big.Int).SetUint64(seed)
	next := func() *big.Int {
		state.Add(state, new(big.Int).SetUint64(0x9E3779B97F4A7C15)).And(state, mask)
		z := new(big.Int).Set(state)
		z.Xor(z, new(big.Int).Rsh(z, 30)).Mul(z, new(big.Int).SetUint64(0xBF58476D1CE4E5B9)).And(z, mask)
		z.Xor(z, new(big.Int).Rsh(z, 27)).Mul(z, new(big.Int).SetUint64(0x94D049BB133111EB)).And(z, mask)
		return z.Xor(z, new(big.Int).Rsh(z, 31))
	}
	bounded := func(n int64) int {
		bn := big.NewInt(n)
		threshold := new(big.Int).Mod(new(big.Int).Sub(two64, bn), bn)
		for {
			m := new(big.Int).Mul(next(), bn)
			lo := new(big.Int).And(m, mask)
			if lo.Cmp(threshold) >= 0 {
				return int(new(big.Int).Rsh(m, 64).Int64())
			}
		}
	}
	var pack []Card
	for d := 0; d < decks; d++ {
		for c := 0; c < 52; c++ {
			pack = append(pack, Card(c))
		}
	}
	for i := len(pack) - 1; i >= 1; i-- {
		j := bounded(int64(i + 1))
		pack[i], pack[j] = pack[j], pack[i]
	}
	return pack
}

// R6.1: the shuffle is the documented algorithm.
func TestR6_1_ShuffleFollowsItsDocumentation(t *testing.T) {
	for decks := 1; decks <= 3; decks++ {
		for _, seed := range append(dealVectorSeeds, 7, 2026, 1<<63, 0xDEADBEEF) {
			if got, want := cardList(ShuffledPack(seed, decks)), cardList(refShuffle(seed, decks)); got != want {
				t.Fatalf("decks %d seed %d:\n got %s\nwant %s", decks, seed, got, want)
			}
		}
	}
}

// R6.1: every pack is a permutation: each card exactly decks times; decks
// outside 1..3 deal one deck; the same seed always deals the same pack and
// neighbouring seeds deal different ones.
func TestR6_1_PackIsPermutationAndDeterministic(t *testing.T) {
	seen := map[string]uint64{}
	for decks := 1; decks <= 3; decks++ {
		for seed := uint64(0); seed < 300; seed++ {
			p := ShuffledPack(seed, decks)
			if len(p) != 52*decks {
				t.Fatalf("decks %d: %d cards", decks, len(p))
			}
			var n [52]int
			for _, c := range p {
				if !c.Valid() {
					t.Fatalf("not a card: %d", c)
				}
				n[c]++
			}
			for c, k := range n {
				if k != decks {
					t.Fatalf("decks %d seed %d: %v appears %d times", decks, seed, Card(c), k)
				}
			}
			key := fmt.Sprint(decks, cardList(p))
			if other, dup := seen[key]; dup {
				t.Fatalf("seeds %d and %d deal the same pack", other, seed)
			}
			seen[key] = seed
			if cardList(ShuffledPack(seed, decks)) != cardList(p) {
				t.Fatal("same seed, different pack")
			}
		}
	}
	for _, d := range []int{0, -1, 4, 99} {
		if cardList(ShuffledPack(5, d)) != cardList(ShuffledPack(5, 1)) {
			t.Fatalf("decks %d is not treated as 1", d)
		}
	}
}

// R6.1 step 3: the bounded draw is uniform. Chi-square over 30,000 draws of
// bounded(3) and bounded(52), and over the positions of one card in 20,000
// shuffles; the thresholds are generous (p < 1e-4), the seed fixed.
func TestR6_1_BoundedDrawUnbiased(t *testing.T) {
	chi := func(counts []int, total int) float64 {
		e := float64(total) / float64(len(counts))
		x := 0.0
		for _, c := range counts {
			d := float64(c) - e
			x += d * d / e
		}
		return x
	}
	for _, tc := range []struct {
		n     uint64
		limit float64 // chi-square with n-1 degrees of freedom, p ≈ 1e-4
	}{{3, 18.4}, {52, 100}} {
		g := splitMix64{state: 20261129}
		counts := make([]int, tc.n)
		const draws = 30000
		for i := 0; i < draws; i++ {
			v := g.bounded(tc.n)
			if v >= tc.n {
				t.Fatalf("bounded(%d) = %d", tc.n, v)
			}
			counts[v]++
		}
		if x := chi(counts, draws); x > tc.limit {
			t.Errorf("bounded(%d): chi-square %.1f > %.1f, counts %v", tc.n, x, tc.limit, counts)
		}
	}
	// Where the ace of spades ends up in a shuffled pack.
	as, _ := ParseCard("AS")
	pos := make([]int, 52)
	const shuffles = 20000
	for seed := uint64(0); seed < shuffles; seed++ {
		for i, c := range ShuffledPack(seed*0x9E3779B97F4A7C15, 1) {
			if c == as {
				pos[i]++
			}
		}
	}
	if x := chi(pos, shuffles); x > 100 {
		t.Errorf("position of AS: chi-square %.1f > 100", x)
	}
	// The rejection path: for n just above 2^63 about half the outputs are
	// rejected; results stay below n.
	g := splitMix64{state: 3}
	n := uint64(1<<63 + 12345)
	for i := 0; i < 1000; i++ {
		if v := g.bounded(n); v >= n {
			t.Fatalf("bounded(%d) = %d", n, v)
		}
	}
	if g.bounded(1) != 0 {
		t.Fatal("bounded(1) must be 0")
	}
}

// R6.1 step 5 and R3 "tableau deal": piles 1..n dealt row by row from index
// 0, the last card of each pile face up, the rest in pack order the stock;
// klondike 7 piles and 24 in the stock, tripleharp 12 piles and 78 cards in
// the tableau, harp 9 piles and 8 foundations.
func TestR6_1_DealShapes(t *testing.T) {
	for _, tc := range []struct {
		variant            string
		piles, found, tabN int
		stock              int
	}{
		{"klondike", 7, 4, 28, 24},
		{"klondike-draw3", 7, 4, 28, 24},
		{"klassik", 7, 4, 28, 24},
		{"relaxed", 7, 4, 28, 24},
		{"tripleharp", 12, 12, 78, 78},
		{"harp", 9, 8, 45, 59},
	} {
		v, _ := LookupVariant(tc.variant)
		r := v.Defaults
		for _, seed := range []uint64{0, 42, 1<<64 - 1} {
			p := Deal(r, seed)
			if err := p.Validate(r); err != nil {
				t.Fatalf("%s seed %d: %v", tc.variant, seed, err)
			}
			if len(p.Tableau) != tc.piles || len(p.Foundations) != tc.found || len(p.Stock) != tc.stock || len(p.Waste) != 0 {
				t.Fatalf("%s: %d piles %d foundations %d stock", tc.variant, len(p.Tableau), len(p.Foundations), len(p.Stock))
			}
			pack := ShuffledPack(seed, r.Decks)
			// Independent dealing: pile i's k-th card (0-based from the
			// bottom) is dealt in row k, after k full rows shrinking by one.
			n := 0
			for i, pile := range p.Tableau {
				if len(pile.Down) != i || len(pile.Up) != 1 {
					t.Fatalf("%s pile %d: %d down %d up", tc.variant, i, len(pile.Down), len(pile.Up))
				}
				cards := append(append([]Card{}, pile.Down...), pile.Up...)
				for k, c := range cards {
					idx := k*tc.piles - k*(k-1)/2 + (i - k)
					if pack[idx] != c {
						t.Fatalf("%s seed %d pile %d card %d: %v, want pack[%d] = %v", tc.variant, seed, i, k, c, idx, pack[idx])
					}
				}
				n += len(cards)
			}
			if n != tc.tabN || cardList(p.Stock) != cardList(pack[n:]) {
				t.Fatalf("%s: %d tableau cards; stock is not the rest of the pack in order", tc.variant, n)
			}
			for _, f := range p.Foundations {
				if len(f) != 0 {
					t.Fatal("a deal with cards on a foundation")
				}
			}
		}
	}
	// The deal's stock is drawn in pack order.
	s, _ := newTestGame(t, "klondike", 42, Options{})
	evs := mustPlay(t, s, mvDraw, sec(1))
	if evs[0].Data.Cards[0] != ShuffledPack(42, 1)[28] {
		t.Fatal("the first card drawn is not pack[28]")
	}
}
