package domain

import "slices"

// UndoPayloadVersion is the version of a move_undone or move_redone
// payload written by this code: version 2 adds Changes, what the undo or
// redo did to the piles, so that a frontend animates it from the event
// alone. Version 1 payloads (no Changes) stay valid: the audit compares
// them without it.
const UndoPayloadVersion = 2

// Change is one thing an undo or a redo does to the piles (R2.5, R2.9),
// in the terms a frontend animates, in the order it does it: either Cards
// (bottom first, as they land) moved From one pile To another — a draw's
// cards stock -> waste, a recycle's waste -> stock and back, a move's —
// or the top card of tableau pile Pile turned, Turn "up" or "down". Every
// card a Change names has been face up before (an undo or redo only
// repeats or reverts what the player saw), so it reveals nothing (R6.4).
type Change struct {
	From  PileRef `json:"from,omitzero"`   // a move: the pile the cards leave
	To    PileRef `json:"to,omitzero"`     // a move: the pile they land on
	Cards []Card  `json:"cards,omitempty"` // a move: the cards, bottom first as they land
	Pile  PileRef `json:"pile,omitzero"`   // a turn: the tableau pile
	Card  *Card   `json:"card,omitempty"`  // a turn: the card turned
	Turn  string  `json:"turn,omitempty"`  // a turn: "up" or "down"
}

// undoChanges is what undoing the newest turn on s's undo record does, in
// order (undoTurn's operations, newest first). s is not changed; the
// caller has checked undoFits.
func (s *State) undoChanges() []Change {
	t := s.Turns[len(s.Turns)-1]
	w := s.Clone()
	var out []Change
	for i := len(s.Ops) - 1; i >= t.OpStart; i-- {
		op := s.Ops[i]
		switch op.Kind {
		case OpDraw:
			n := int(op.Count)
			out = append(out, Change{From: PileRef{Kind: Waste}, To: PileRef{Kind: Stock},
				Cards: reversed(w.Waste[len(w.Waste)-n:])})
		case OpRecycle:
			out = append(out, Change{From: PileRef{Kind: Stock}, To: PileRef{Kind: Waste}, Cards: reversed(w.Stock)})
		case OpMove:
			src, _ := w.pile(op.to())
			out = append(out, Change{From: op.to(), To: op.from(), Cards: slices.Clone((*src)[len(*src)-int(op.Count):])})
		case OpFlip:
			p := w.Tableau[op.FromI]
			c := p.Cards[p.Down]
			out = append(out, Change{Pile: op.from(), Card: &c, Turn: "down"})
		}
		w.undoOp(op)
	}
	return out
}

// redoChanges is what redoing the newest turn on s's redo record does, in
// order (redoTurn's operations). s is not changed; the caller has checked
// redoFits.
func (s *State) redoChanges() []Change {
	r := s.Redo[len(s.Redo)-1]
	w := s.Clone()
	var out []Change
	for _, op := range r.Ops {
		switch op.Kind {
		case OpDraw:
			n := int(op.Count)
			out = append(out, Change{From: PileRef{Kind: Stock}, To: PileRef{Kind: Waste},
				Cards: reversed(w.Stock[len(w.Stock)-n:])})
		case OpRecycle:
			out = append(out, Change{From: PileRef{Kind: Waste}, To: PileRef{Kind: Stock}, Cards: reversed(w.Waste)})
		case OpMove:
			src, _ := w.pile(op.from())
			out = append(out, Change{From: op.from(), To: op.to(), Cards: slices.Clone((*src)[len(*src)-int(op.Count):])})
		case OpFlip:
			p := w.Tableau[op.FromI]
			c := p.Cards[p.Down-1]
			out = append(out, Change{Pile: op.from(), Card: &c, Turn: "up"})
		}
		w.redoOp(op)
	}
	return out
}
