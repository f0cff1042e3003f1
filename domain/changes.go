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
	ops := slices.Clone(s.Ops[t.OpStart:])
	slices.Reverse(ops)
	return s.changes(ops, true)
}

// redoChanges is what redoing the newest turn on s's redo record does, in
// order (redoTurn's operations). s is not changed; the caller has checked
// redoFits.
func (s *State) redoChanges() []Change {
	return s.changes(s.Redo[len(s.Redo)-1].Ops, false)
}

// changes makes ops on a clone of s, reverted (undo) or made again, and
// says what each did, read off the clone just before it.
func (s *State) changes(ops []Op, undo bool) []Change {
	w := s.Clone()
	out := make([]Change, 0, len(ops))
	for _, op := range ops {
		from, to := op.from(), op.to()
		switch op.Kind {
		case OpDraw:
			from, to = PileRef{Kind: Stock}, PileRef{Kind: Waste}
		case OpRecycle:
			from, to = PileRef{Kind: Waste}, PileRef{Kind: Stock}
		}
		if undo {
			from, to = to, from
		}
		var c Change
		switch op.Kind {
		case OpFlip:
			p, turn := w.Tableau[op.FromI], "up"
			k := p.Down - 1
			if undo {
				k, turn = p.Down, "down"
			}
			card := p.Cards[k]
			c = Change{Pile: op.from(), Card: &card, Turn: turn}
		case OpRecycle:
			src := w.Waste // cards land reversed: the recycle's order, or its undo's
			if from.Kind == Stock {
				src = w.Stock
			}
			c = Change{From: from, To: to, Cards: reversed(src)}
		default:
			src := w.Stock // a draw, or its undo (from the waste)
			if op.Kind == OpMove || from.Kind == Waste {
				p, _ := w.pile(from)
				src = *p
			}
			top := src[len(src)-int(op.Count):]
			if op.Kind == OpDraw {
				c = Change{From: from, To: to, Cards: reversed(top)} // one card at a time: the top lands first
			} else {
				c = Change{From: from, To: to, Cards: slices.Clone(top)}
			}
		}
		out = append(out, c)
		if undo {
			w.undoOp(op)
		} else {
			w.redoOp(op)
		}
	}
	return out
}
