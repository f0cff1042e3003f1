package domain

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// piles is a frontend's model of the board: every pile's cards bottom
// first (the stock with its top last, as State keeps it) and each tableau
// pile's face-down count.
type piles struct {
	cards map[PileRef][]Card
	down  []int
}

func modelOf(s *State) piles {
	m := piles{cards: map[PileRef][]Card{{Kind: Stock}: slices.Clone(s.Stock), {Kind: Waste}: slices.Clone(s.Waste)}}
	for i, f := range s.Foundations {
		m.cards[FoundationRef(i)] = slices.Clone(f)
	}
	for i, p := range s.Tableau {
		m.cards[TableauRef(i)] = slices.Clone(p.Cards)
		m.down = append(m.down, p.Down)
	}
	return m
}

// apply makes change c on the model; it reports why c does not fit.
func (m piles) apply(c Change) string {
	if c.Turn != "" {
		i, cards := c.Pile.Index, m.cards[c.Pile]
		switch {
		case c.Turn == "up" && m.down[i] > 0 && cards[m.down[i]-1] == *c.Card:
			m.down[i]--
		case c.Turn == "down" && m.down[i] < len(cards) && cards[m.down[i]] == *c.Card:
			m.down[i]++
		default:
			return "a turn of a card that is not there"
		}
		return ""
	}
	src := m.cards[c.From]
	n := len(c.Cards)
	if n == 0 || n > len(src) {
		return "a move of more cards than the pile holds"
	}
	top := slices.Clone(src[len(src)-n:])
	want := slices.Clone(c.Cards)
	slices.Sort(top)
	slices.Sort(want)
	if !slices.Equal(top, want) {
		return "a move of cards that are not on top of the pile"
	}
	m.cards[c.From] = src[:len(src)-n]
	m.cards[c.To] = append(m.cards[c.To], c.Cards...)
	return ""
}

// TestR2_5_UndoRedoChanges (R2.5, R2.9): the changes a move_undone or
// move_redone event carries, made in order on a frontend's model of the
// board before it, give exactly the board after it (every pile's cards in
// order, every face-down count), over random games with undo and redo on
// every one-deck and multi-deck variant; and every card a change names has
// been face up before.
func TestR2_5_UndoRedoChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	checked := 0
	for _, v := range Variants() {
		for seed := uint64(1); seed <= 6; seed++ {
			s, _ := newTestGame(t, v.ID, seed, Options{Undo: ptr(true)})
			seen := map[Card]bool{}
			see := func() {
				for _, c := range s.Waste {
					seen[c] = true
				}
				for _, f := range s.Foundations {
					for _, c := range f {
						seen[c] = true
					}
				}
				for _, p := range s.Tableau {
					for _, c := range p.Cards[p.Down:] {
						seen[c] = true
					}
				}
			}
			see()
			for i := 0; i < 150 && s.Status == StatusInProgress; i++ {
				legal := LegalMoves(s)
				m := legal[rng.IntN(len(legal))]
				if r := rng.IntN(10); r < 3 && s.CanUndo() {
					m = mvUndo
				} else if r < 5 && s.CanRedo() {
					m = Move{Type: MoveRedo}
				} else if m.Type == MoveResign {
					continue
				}
				before := modelOf(s)
				evs := mustPlay(t, s, m, sec(float64(i+1)))
				for _, e := range evs {
					if e.Type != EventMoveUndone && e.Type != EventMoveRedone {
						continue
					}
					if e.Data.V != UndoPayloadVersion {
						t.Fatalf("%s v%d: payload version %d", e.Type, e.Version, e.Data.V)
					}
					for _, c := range e.Data.Changes {
						for _, card := range append(slices.Clone(c.Cards), cardOr(c.Card)...) {
							if !seen[card] {
								t.Fatalf("%s seed %d: %s names %s, never face up", v.ID, seed, e.Type, card)
							}
						}
						if why := before.apply(c); why != "" {
							t.Fatalf("%s seed %d: %s at version %d: %s: %+v", v.ID, seed, e.Type, e.Version, why, c)
						}
					}
					after := modelOf(s)
					for k, cards := range after.cards {
						if !slices.Equal(before.cards[k], cards) {
							t.Fatalf("%s seed %d: after %s at version %d, %s is %v by the changes, %v in the state",
								v.ID, seed, e.Type, e.Version, k, before.cards[k], cards)
						}
					}
					if !slices.Equal(before.down, after.down) {
						t.Fatalf("%s seed %d: face-down counts %v by the changes, %v in the state", v.ID, seed, before.down, after.down)
					}
					checked++
				}
				see()
			}
		}
	}
	if checked < 200 {
		t.Fatalf("only %d undo and redo events checked", checked)
	}
	t.Logf("%d undo and redo events checked", checked)
}

func cardOr(c *Card) []Card {
	if c == nil {
		return nil
	}
	return []Card{*c}
}

// TestR2_5_LegacyUndoPayloadAudits: a log written before undo payloads
// carried their changes (payload version 1, no changes) still passes the
// audit's replay; one whose version 2 changes were altered does not.
func TestR2_5_LegacyUndoPayloadAudits(t *testing.T) {
	s, first := newTestGame(t, "relaxed", 3, Options{})
	evs := append([]Event{}, first...)
	for i, m := range []Move{{Type: MoveDraw}, {Type: MoveDraw}, mvUndo, {Type: MoveRedo}, mvUndo} {
		evs = append(evs, mustPlay(t, s, m, sec(float64(i+1)))...)
	}
	legacy := slices.Clone(evs)
	forged := slices.Clone(evs)
	n := 0
	for i, e := range evs {
		if e.Type == EventMoveUndone || e.Type == EventMoveRedone {
			legacy[i].Data.V, legacy[i].Data.Changes = PayloadVersion, nil
			if n == 0 {
				forged[i].Data.Changes = slices.Clone(e.Data.Changes)
				forged[i].Data.Changes[0].Cards = nil
			}
			n++
		}
	}
	if n != 3 {
		t.Fatalf("%d undo and redo events, want 3", n)
	}
	if _, at, why := Redecide(evs); at != 0 {
		t.Fatalf("the log as written: broken at %d: %s", at, why)
	}
	if _, at, why := Redecide(legacy); at != 0 {
		t.Fatalf("the legacy log: broken at %d: %s", at, why)
	}
	if _, at, _ := Redecide(forged); at == 0 {
		t.Fatal("a changed change passes the audit")
	}
}
