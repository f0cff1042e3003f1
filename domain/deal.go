package domain

import (
	"math/bits"
	"time"
)

// This file is the shuffle of R6.1. It is part of the product's promise:
// the same (variant, seed) deals the same cards on every version and
// machine, pinned by the vectors in testdata/deals.golden. Never change it;
// a new shuffle would need a new name and a new field in the first event.
//
// Step by step:
//
//  1. The fresh pack is `decks` copies of the deck in the order
//     clubs A..K, diamonds A..K, hearts A..K, spades A..K (card values 0..51,
//     see Card), deck after deck.
//  2. The PRNG is SplitMix64 (Steele, Lea, Flood 2014) started at the seed:
//     state += 0x9E3779B97F4A7C15; z = state;
//     z = (z ^ z>>30) * 0xBF58476D1CE4E5B9; z = (z ^ z>>27) * 0x94D049BB133111EB;
//     output z ^ z>>31.
//  3. A bounded draw in [0, n) is Lemire's multiply-shift with rejection
//     (Lemire 2019, "Fast Random Integer Generation in an Interval"):
//     m = x*n as a 128-bit product of a 64-bit output x; if the low half
//     is below (2^64 - n) mod n, draw x again; the result is the high half.
//     It is exactly uniform.
//  4. Fisher–Yates from the end: for i = len-1 down to 1, j = draw(i+1),
//     swap pack[i] and pack[j].
//  5. The shuffled pack is dealt from index 0 (see dealPosition): row r =
//     0..piles-1 gives one card to each pile p = r..piles-1 (pile p thus
//     gets p+1 cards); the last card of each pile is face up. The rest, in
//     pack order, is the stock, pack order being the order cards are drawn.

// splitMix64 is the PRNG of step 2.
type splitMix64 struct{ state uint64 }

func (s *splitMix64) next() uint64 {
	s.state += 0x9E3779B97F4A7C15
	z := s.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// bounded returns a uniform integer in [0, n) for n >= 1 (step 3).
func (s *splitMix64) bounded(n uint64) uint64 {
	hi, lo := bits.Mul64(s.next(), n)
	if lo < n {
		threshold := -n % n // (2^64 - n) mod n
		for lo < threshold {
			hi, lo = bits.Mul64(s.next(), n)
		}
	}
	return hi
}

// ShuffledPack returns the pack of `decks` decks (1..3) shuffled by seed
// (steps 1–4 above): 52*decks cards, index 0 dealt first. decks outside
// 1..3 is treated as 1.
func ShuffledPack(seed uint64, decks int) []Card {
	if decks < 1 || decks > 3 {
		decks = 1
	}
	pack := make([]Card, 0, 52*decks)
	for d := 0; d < decks; d++ {
		for c := Card(0); c < 52; c++ {
			pack = append(pack, c)
		}
	}
	rng := splitMix64{state: seed}
	for i := len(pack) - 1; i >= 1; i-- {
		j := rng.bounded(uint64(i + 1))
		pack[i], pack[j] = pack[j], pack[i]
	}
	return pack
}

// Deal returns the starting position for rules r and seed (R6.1): the
// shuffled pack dealt as in step 5. Waste and foundations are empty.
func Deal(r Rules, seed uint64) Position {
	return dealPosition(r, ShuffledPack(seed, r.Decks))
}

// dealPosition deals pack (index 0 first) into r.Piles tableau piles of
// 1..r.Piles cards, top card face up, and the rest into the stock (step 5).
func dealPosition(r Rules, pack []Card) Position {
	p := Position{Tableau: make([]PileLayout, r.Piles), Foundations: make([][]Card, r.Foundations)}
	piles := make([][]Card, r.Piles)
	k := 0
	for row := 0; row < r.Piles; row++ {
		for i := row; i < r.Piles; i++ {
			piles[i] = append(piles[i], pack[k])
			k++
		}
	}
	for i, cards := range piles {
		p.Tableau[i] = PileLayout{Down: cards[: len(cards)-1 : len(cards)-1], Up: cards[len(cards)-1:]}
	}
	p.Stock = append([]Card(nil), pack[k:]...)
	return p
}

// LayoutDeal is the deal of a client's layout under rules (R6.5): its
// tableau and stock, empty foundations. Errors: *LayoutError.
func LayoutDeal(rules Rules, l *Position) (Position, error) {
	deal := Position{Tableau: l.Tableau, Stock: l.Stock, Foundations: make([][]Card, rules.Foundations)}
	if len(l.Waste) > 0 || len(l.Foundations) > 0 || l.Recycles != 0 {
		return Position{}, &LayoutError{Where: "layout", Reason: "bad_syntax",
			Detail: "a layout gives tableau and stock only; waste and foundations start empty"}
	}
	if err := deal.Validate(rules); err != nil {
		return Position{}, err
	}
	return deal, nil
}

// DealtState is the state after a game's first event. Errors: a
// *LayoutError for a deal Apply refuses.
func DealtState(first Event) (*State, error) {
	s := &State{}
	s.Apply(first)
	if s.Fault != "" {
		return nil, &LayoutError{Where: "layout", Reason: "bad_syntax", Detail: s.Fault}
	}
	return s, nil
}

// LayoutState is the state a game created from layout (R6.5) of variant
// with opts would start in, dealt at instant at, with the same checks as
// app.Games.Create: for analysing a layout without a game (the solver route, R7.1).
// Nothing is stored. Errors: *UnknownVariantError, *OptionError,
// *LayoutError.
func LayoutState(variant string, opts Options, layout *Position, at time.Time) (*State, error) {
	v, err := LookupVariant(variant)
	if err != nil {
		return nil, err
	}
	rules, _, err := v.Resolve(opts)
	if err != nil {
		return nil, err
	}
	deal, err := LayoutDeal(rules, layout)
	if err != nil {
		return nil, err
	}
	return DealtState(DealtEvent(rules, deal, "", Millis(at)))
}

// DealtEvent is the first event of a game (R6.2): the rules and the full
// deal. The position is copied.
func DealtEvent(r Rules, deal Position, commitment string, at time.Time) Event {
	d := Position{Tableau: make([]PileLayout, len(deal.Tableau)), Stock: append([]Card{}, deal.Stock...),
		Waste: append([]Card(nil), deal.Waste...), Recycles: deal.Recycles}
	for i, t := range deal.Tableau {
		d.Tableau[i] = PileLayout{Down: append([]Card{}, t.Down...), Up: append([]Card{}, t.Up...)}
	}
	for _, f := range deal.Foundations {
		d.Foundations = append(d.Foundations, append([]Card{}, f...))
	}
	rr := r
	return Event{Version: 1, Type: EventGameDealt, OccurredAt: Millis(at),
		Data: EventData{V: PayloadVersion, Rules: &rr, Deal: &d, Commitment: commitment}}
}
