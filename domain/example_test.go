package domain

import (
	"errors"
	"fmt"
	"time"
)

// A Klondike ending: clubs on the foundations to the ten, diamonds to the
// eight, hearts and spades to the jack; the queen of spades on the waste.
const examplePosition = ":KS/:QH/9D:JC/:/:/:/: QCKCTDJDQDKDKH QS " +
	"AC2C3C4C5C6C7C8C9CTC/AD2D3D4D5D6D7D8D/AH2H3H4H5H6H7H8H9HTHJH/AS2S3S4S5S6S7S8S9STSJS 0"

// exampleGame deals examplePosition as a klondike game.
func exampleGame() *State {
	v, _ := LookupVariant("klondike")
	rules, _, _ := v.Resolve(Options{})
	p, err := ParsePosition(examplePosition)
	if err != nil {
		panic(err)
	}
	if err := p.Validate(rules); err != nil {
		panic(err)
	}
	s := &State{}
	s.Apply(DealtEvent(rules, p, "", time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)))
	return s
}

func ExampleParsePosition() {
	// TABLEAU STOCK WASTE FOUNDATIONS RECYCLES: piles are DOWN:UP, bottom
	// first; the stock lists the card drawn first, first; "-" is empty.
	p, err := ParsePosition(":KH/QS7C:JD/:/:/:/:/: 9C2D - AS/-/-/- 0")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(p.Tableau), "piles")
	fmt.Println("tableau/1 face down:", p.Tableau[1].Down, "face up:", p.Tableau[1].Up)
	fmt.Println("stock:", p.Stock, "foundations:", p.Foundations)
	fmt.Println(p.String())

	_, err = ParsePosition(":KH/:XX - - - 0")
	var le *LayoutError
	if errors.As(err, &le) {
		fmt.Println(le.Reason, "at", le.Where)
	}
	// Output:
	// 7 piles
	// tableau/1 face down: [QS 7C] face up: [JD]
	// stock: [9C 2D] foundations: [[AS] [] [] []]
	// :KH/QS7C:JD/:/:/:/:/: 9C2D - AS/-/-/- 0
	// bad_card at tableau/1
}

func ExampleLegalMoves() {
	s := exampleGame()
	for _, m := range LegalMoves(s) {
		fmt.Println(m)
	}
	// Output:
	// draw
	// move waste -> foundation/3 x1
	// move tableau/0 -> tableau/3 x1
	// move tableau/0 -> tableau/4 x1
	// move tableau/0 -> tableau/5 x1
	// move tableau/0 -> tableau/6 x1
	// move tableau/1 -> foundation/2 x1
	// move tableau/1 -> tableau/0 x1
	// move tableau/2 -> foundation/0 x1
	// move tableau/2 -> tableau/1 x1
	// resign
}

func ExampleDecide() {
	s := exampleGame()
	now := time.Date(2026, 11, 29, 12, 0, 5, 0, time.UTC)

	// "foundation" without an index: whichever foundation takes the card.
	to, _ := ParsePileRef("foundation")
	m := Move{Type: MoveCards, From: TableauRef(2), To: to, Count: 1}
	events, _, err := Decide(s, m, now)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range events {
		s.Apply(e) // Decide does not change s; the caller appends and applies
		d := e.Data
		switch e.Type {
		case EventCardsMoved:
			fmt.Println(e.Version, e.Type, d.From, "->", d.To, d.Cards, "move", d.Move)
		case EventCardFlipped:
			fmt.Println(e.Version, e.Type, d.Pile, *d.Card, "move", d.Move, "auto", d.Auto)
		}
	}
	fmt.Println("moves:", s.Moves)

	// A refused move says why with a stable reason.
	_, _, err = Decide(s, Move{Type: MoveCards, From: TableauRef(1), To: TableauRef(3)}, now)
	var me *MoveError
	if errors.As(err, &me) {
		fmt.Println("refused:", me.Reason)
	}
	// Output:
	// 2 cards_moved tableau/2 -> foundation/0 [JC] move 1
	// 3 card_flipped tableau/2 9D move 1 auto true
	// moves: 1
	// refused: only_king_on_empty
}
