package domain

import (
	"fmt"
	"strings"
)

// Suit is a card suit, RULES R1.1. Values are persisted inside Card values:
// do not reorder.
type Suit uint8

// The four suits in the order of a fresh deck (R6.1): clubs, diamonds,
// hearts, spades.
const (
	Clubs Suit = iota
	Diamonds
	Hearts
	Spades
)

const suitLetters = "CDHS"

var suitNames = [4]string{"clubs", "diamonds", "hearts", "spades"}

// Letter is the suit's one-letter code of R1.1: C, D, H or S.
func (s Suit) Letter() byte { return suitLetters[s&3] }

// String is the lower-case English name: "clubs", "diamonds", "hearts", "spades".
func (s Suit) String() string { return suitNames[s&3] }

// Red reports whether the suit is red (diamonds, hearts), R1.1.
func (s Suit) Red() bool { return s == Diamonds || s == Hearts }

// Card is one playing card, encoded as suit*13 + (rank-1), so 0..51:
// 0 = AC, 12 = KC, 13 = AD, 26 = AH, 39 = AS, 51 = KS. Copies of a card in
// multi-deck games are the same value (R1.2). Values outside 0..51 are not
// cards; Valid reports which. The encoding is persisted in snapshots: do not
// change it.
type Card uint8

// NoCard is the zero-information placeholder used where a card is absent.
const NoCard Card = 0xFF

// The lowest and highest ranks (R1.1): a suit holds the ranks Ace..King, so
// King is also the number of cards of a suit and the longest run (R1.6).
const (
	Ace  = 1
	King = 13
)

// NewCard returns the card of rank 1..13 (A=1, J=11, Q=12, K=13) and suit.
// It does not check its arguments; use ParseCard for outside input.
func NewCard(rank int, s Suit) Card { return Card(int(s)*King + rank - Ace) }

// cardRank and cardRed are Rank and Red by table: LegalMoves asks them for
// every pair of piles, and a table beats a division there.
var cardRank, cardRed = func() (r [256]uint8, red [256]bool) {
	for c := 0; c < 52; c++ {
		r[c] = uint8(c%King + Ace)
		red[c] = Suit(c / King).Red()
	}
	return
}()

// Rank is 1..13: A=1, 2..10, J=11, Q=12, K=13 (R1.1); 0 for a value that
// is not a card.
func (c Card) Rank() int { return int(cardRank[c]) }

// Suit is the card's suit (R1.1).
func (c Card) Suit() Suit { return Suit(c / King) }

// Red reports whether the card is red (R1.1); black otherwise.
func (c Card) Red() bool { return cardRed[c] }

// Valid reports whether c encodes a card (0..51).
func (c Card) Valid() bool { return c < 52 }

const rankLetters = "A23456789TJQK"

// String is the two-character code of R1.1, rank then suit: "TD" is the ten
// of diamonds, "AS" the ace of spades. An invalid card prints as "??".
func (c Card) String() string {
	if !c.Valid() {
		return "??"
	}
	return cardCodes[c]
}

// cardCodes are the 52 codes, made once: a game's answer names every
// face-up card, and a code made per call would be an allocation each.
var cardCodes = func() (codes [52]string) {
	for c := range Card(52) {
		codes[c] = string([]byte{rankLetters[c.Rank()-1], c.Suit().Letter()})
	}
	return codes
}()

// MarshalText encodes the card as its R1.1 code, so JSON shows "TD".
func (c Card) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("domain: card value %d is not a card", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText parses an R1.1 code; see ParseCard.
func (c *Card) UnmarshalText(b []byte) error {
	v, err := ParseCard(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}

// ParseCard parses a two-character card code of R1.1 (rank
// A 2 3 4 5 6 7 8 9 T J Q K, then suit C D H S; upper case). It returns a
// *LayoutError with reason "bad_card" for anything else.
func ParseCard(s string) (Card, error) {
	if len(s) != 2 {
		return NoCard, &LayoutError{Where: quoteShort(s), Reason: "bad_card"}
	}
	r := strings.IndexByte(rankLetters, s[0])
	u := strings.IndexByte(suitLetters, s[1])
	if r < 0 || u < 0 {
		return NoCard, &LayoutError{Where: quoteShort(s), Reason: "bad_card"}
	}
	return NewCard(r+1, Suit(u)), nil
}

// quoteShort quotes at most 16 bytes of outside input for an error message.
func quoteShort(s string) string {
	if len(s) > 16 {
		s = s[:16] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// fitsOnTableau reports whether card c may be placed on tableau card t:
// one rank lower and the opposite colour (R1.5).
func fitsOnTableau(c, t Card) bool {
	return c.Rank()+1 == t.Rank() && c.Red() != t.Red()
}

// fitsOnFoundation reports whether c may go on a foundation whose top card is
// top (NoCard for an empty foundation): an ace on an empty foundation, else
// the same suit one rank higher (R1.4).
func fitsOnFoundation(c, top Card) bool {
	if top == NoCard {
		return c.Rank() == Ace
	}
	return c.Suit() == top.Suit() && c.Rank() == top.Rank()+1
}
