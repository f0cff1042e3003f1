package domain

import (
	"fmt"
	"strconv"
	"strings"
)

// PileLayout is one tableau pile: face-down cards then face-up cards, each
// listed bottom first (R1.3; Layout in openapi.yaml).
type PileLayout struct {
	Down []Card `json:"face_down"`
	Up   []Card `json:"face_up"`
}

// Position is a complete arrangement of the cards: the start of a game (the
// deal, R6.2) or any position a rule test begins from.
//
//   - Tableau: one PileLayout per tableau pile, 0-based.
//   - Stock: the card drawn first, first.
//   - Waste: bottom first; the last card is the playable top.
//   - Foundations: one list per foundation, bottom (ace) first.
//   - Recycles: recycles already made (passes used - 1), R2.1.
type Position struct {
	Tableau     []PileLayout `json:"tableau"`
	Stock       []Card       `json:"stock"`
	Waste       []Card       `json:"waste,omitempty"`
	Foundations [][]Card     `json:"foundations,omitempty"`
	Recycles    int          `json:"recycles,omitempty"`
}

// Validate checks p against rules r (R6.5): r.Piles tableau piles, at most
// r.Foundations foundations (missing ones are empty), every card present
// exactly r.Decks times, each face-up tail a run (R1.6), each foundation an
// ascending same-suit sequence from the ace (R1.4), no face-down card on top
// of a pile where flips are automatic (R2.4), Recycles within the passes.
// It returns the first problem as a *LayoutError.
func (p Position) Validate(r Rules) error {
	if len(p.Tableau) != r.Piles {
		return &LayoutError{Where: "tableau", Reason: "pile_count",
			Detail: fmt.Sprintf("%d piles, %s has %d", len(p.Tableau), r.Variant, r.Piles)}
	}
	if len(p.Foundations) > r.Foundations {
		return &LayoutError{Where: "foundations", Reason: "pile_count",
			Detail: fmt.Sprintf("%d foundations, %s has %d", len(p.Foundations), r.Variant, r.Foundations)}
	}
	var count [52]int
	add := func(where string, cards []Card) error {
		for _, c := range cards {
			if !c.Valid() {
				return &LayoutError{Where: where, Reason: "bad_card"}
			}
			count[c]++
		}
		return nil
	}
	for i, pile := range p.Tableau {
		where := fmt.Sprintf("tableau/%d", i)
		if err := add(where, pile.Down); err != nil {
			return err
		}
		if err := add(where, pile.Up); err != nil {
			return err
		}
		if !isRun(pile.Up) {
			return &LayoutError{Where: where, Reason: "not_a_run",
				Detail: "face-up cards must descend by one rank in alternating colours (R1.6)"}
		}
		if r.Flip == FlipAuto && len(pile.Up) == 0 && len(pile.Down) > 0 {
			return &LayoutError{Where: where, Reason: "face_down_top",
				Detail: r.Variant + " flips automatically, so a pile's top card must be face up"}
		}
	}
	if err := add("stock", p.Stock); err != nil {
		return err
	}
	if err := add("waste", p.Waste); err != nil {
		return err
	}
	for i, f := range p.Foundations {
		where := fmt.Sprintf("foundation/%d", i)
		if err := add(where, f); err != nil {
			return err
		}
		for k, c := range f {
			prev := NoCard
			if k > 0 {
				prev = f[k-1]
			}
			if !fitsOnFoundation(c, prev) {
				return &LayoutError{Where: where, Reason: "not_a_run",
					Detail: "a foundation holds one suit from the ace up (R1.4)"}
			}
		}
	}
	for c, n := range count {
		if n != r.Decks {
			return &LayoutError{Where: Card(c).String(), Reason: "card_count",
				Detail: fmt.Sprintf("%s appears %d times, %s needs each card %d times", Card(c), n, r.Variant, r.Decks)}
		}
	}
	if p.Recycles < 0 || (r.Passes > 0 && p.Recycles > r.Passes-1) {
		return &LayoutError{Where: "recycles", Reason: "bad_syntax", Detail: "recycles out of range"}
	}
	return nil
}

// isRun reports whether cards (bottom first) form a run of R1.6.
func isRun(cards []Card) bool {
	for i := 1; i < len(cards); i++ {
		if !fitsOnTableau(cards[i], cards[i-1]) {
			return false
		}
	}
	return true
}

// String formats p in the one-line position notation (see ParsePosition).
func (p Position) String() string {
	var b strings.Builder
	for i, pile := range p.Tableau {
		if i > 0 {
			b.WriteByte('/')
		}
		writeCards(&b, pile.Down, "")
		b.WriteByte(':')
		writeCards(&b, pile.Up, "")
	}
	b.WriteByte(' ')
	writeCards(&b, p.Stock, "-")
	b.WriteByte(' ')
	writeCards(&b, p.Waste, "-")
	b.WriteByte(' ')
	if len(p.Foundations) == 0 {
		b.WriteByte('-')
	}
	for i, f := range p.Foundations {
		if i > 0 {
			b.WriteByte('/')
		}
		writeCards(&b, f, "-")
	}
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(p.Recycles))
	return b.String()
}

func writeCards(b *strings.Builder, cards []Card, empty string) {
	if len(cards) == 0 {
		b.WriteString(empty)
	}
	for _, c := range cards {
		b.WriteString(c.String())
	}
}

// ParsePosition reads the one-line position notation, a FEN for patience:
//
//	TABLEAU STOCK WASTE FOUNDATIONS [RECYCLES]
//
// fields separated by single spaces. TABLEAU is the piles, 0 first,
// separated by "/"; a pile is its face-down cards, ":", its face-up cards,
// each bottom first (":KH" = a lone face-up king, "" before and after ":" =
// empty pile). STOCK lists the card drawn first, first; WASTE is bottom
// first; FOUNDATIONS are separated by "/", each bottom first. Cards are
// R1.1 codes written back to back ("AS2S3S"); "-" is an empty stock, waste
// or foundation, and a lone "-" for FOUNDATIONS means none (all empty).
// RECYCLES (default 0) is the number of recycles made. Example, a Klondike
// ending with the king of hearts left on tableau/0:
//
//	:KH/:/:/:/:/:/: - - AC2C3C4C5C6C7C8C9CTCJCQCKC/AD2D3D4D5D6D7D8D9DTDJDQDKD/AH2H3H4H5H6H7H8H9HTHJHQH/AS2S3S4S5S6S7S8S9STSJSQSKS 0
//
// It checks syntax only; Position.Validate checks the rules. Errors are
// *LayoutError with reason bad_syntax or bad_card.
func ParsePosition(s string) (Position, error) {
	f := strings.Split(s, " ")
	if len(f) != 4 && len(f) != 5 {
		return Position{}, &LayoutError{Reason: "bad_syntax",
			Detail: "want TABLEAU STOCK WASTE FOUNDATIONS [RECYCLES] separated by single spaces"}
	}
	var p Position
	for i, pile := range strings.Split(f[0], "/") {
		where := fmt.Sprintf("tableau/%d", i)
		down, up, ok := strings.Cut(pile, ":")
		if !ok {
			return Position{}, &LayoutError{Where: where, Reason: "bad_syntax", Detail: `a pile is DOWN:UP`}
		}
		d, err := parseCards(where, down, "")
		if err != nil {
			return Position{}, err
		}
		u, err := parseCards(where, up, "")
		if err != nil {
			return Position{}, err
		}
		p.Tableau = append(p.Tableau, PileLayout{Down: d, Up: u})
	}
	var err error
	if p.Stock, err = parseCards("stock", f[1], "-"); err != nil {
		return Position{}, err
	}
	if p.Waste, err = parseCards("waste", f[2], "-"); err != nil {
		return Position{}, err
	}
	if f[3] != "-" {
		for i, fs := range strings.Split(f[3], "/") {
			c, err := parseCards(fmt.Sprintf("foundation/%d", i), fs, "-")
			if err != nil {
				return Position{}, err
			}
			p.Foundations = append(p.Foundations, c)
		}
	}
	if len(f) == 5 {
		n, err := strconv.Atoi(f[4])
		if err != nil || n < 0 || n > 1000 || strconv.Itoa(n) != f[4] {
			return Position{}, &LayoutError{Where: "recycles", Reason: "bad_syntax", Detail: "want a number 0..1000"}
		}
		p.Recycles = n
	}
	return p, nil
}

// parseCards reads back-to-back card codes; empty (or the given empty
// marker) is no card.
func parseCards(where, s, empty string) ([]Card, error) {
	if s == empty || s == "" {
		if s == "" && empty != "" {
			return nil, &LayoutError{Where: where, Reason: "bad_syntax", Detail: "empty field: write " + empty}
		}
		return nil, nil
	}
	if len(s)%2 != 0 {
		return nil, &LayoutError{Where: where, Reason: "bad_syntax", Detail: "cards are two characters each"}
	}
	out := make([]Card, 0, len(s)/2)
	for i := 0; i < len(s); i += 2 {
		c, err := ParseCard(s[i : i+2])
		if err != nil {
			return nil, &LayoutError{Where: where, Reason: "bad_card", Detail: quoteShort(s[i:i+2]) + " is not a card code"}
		}
		out = append(out, c)
	}
	return out, nil
}
