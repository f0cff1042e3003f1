package domain

import (
	"fmt"
	"time"
)

// Decide checks move m against state s at instant now and returns the
// events it causes, numbered from s.Version+1 and stamped Millis(now), and
// the state after them, which it builds as it decides (each event applied
// as it is made): the caller goes on from that state rather than applying
// the events again. s is not changed, and the state after shares no
// memory that either may write with s (Clone; undorecord.go). The events
// of one command share Data.Move = s.Moves+1 and include its automatic
// follow-ups: the auto flip of an uncovered card (R2.4, flip=auto),
// autocomplete where it is automatic (R2.6), and the win (R2.8).
//
// Errors are *MoveError (with no events and a nil state): ReasonGameOver
// after the end (matches ErrGameOver), ReasonTimeExpired at or after the
// deadline (matches ErrTimeExpired; the caller appends Expire's event,
// R5.3), otherwise the reason the move is not in LegalMoves.
func Decide(s *State, m Move, now time.Time) ([]Event, *State, error) {
	now = monotonic(s, now)
	if s.Version == 0 {
		return nil, nil, &MoveError{Move: m, Reason: ReasonIllegal, Detail: "the game has no deal"}
	}
	if s.Status.Ended() {
		return nil, nil, &MoveError{Move: m, Reason: ReasonGameOver, Detail: "the game is " + string(s.Status)}
	}
	if dl, ok := s.Deadline(); ok && !now.Before(dl) {
		return nil, nil, &MoveError{Move: m, Reason: ReasonTimeExpired, Detail: "the time limit ran out at " + FormatTime(dl)}
	}
	n := normalize(s, m)
	var legal [32]Move // most positions have fewer legal moves: no allocation
	if !contains(appendLegalMoves(legal[:0], s), n) {
		reason, detail := explain(s, n)
		return nil, nil, &MoveError{Move: m, Reason: reason, Detail: detail}
	}
	b := &builder{s: s.Clone(), move: s.Moves + 1, now: now}
	switch n.Type {
	case MoveDraw:
		if k := min(s.Rules.Draw, len(s.Stock)); k > 0 {
			cards := make([]Card, k)
			for i := range cards {
				cards[i] = s.Stock[len(s.Stock)-1-i]
			}
			b.emit(EventStockDrawn, EventData{Count: k, Cards: cards})
		} else {
			b.emit(EventStockRecycled, EventData{Count: len(s.Waste)})
		}
	case MoveCards, MoveTakeBack:
		b.moveCards(n.From, n.To, n.Count, false)
	case MoveFlip:
		b.flip(n.Pile.Index, false)
	case MoveUndo:
		b.emit(EventMoveUndone, EventData{V: UndoPayloadVersion, Undone: s.Turns[len(s.Turns)-1].Version,
			Changes: s.undoChanges()})
		return b.events, b.s, nil
	case MoveRedo:
		// One event that names the undo it takes back; Apply re-applies the
		// turn from the redo record, follow-ups included, so the log needs
		// no copy of the turn's events and replay stays exact (R2.9). No
		// follow-up can be due: the turn's own ran before the undo.
		b.emit(EventMoveRedone, EventData{V: UndoPayloadVersion, Redone: s.Redo[len(s.Redo)-1].Undo,
			Changes: s.redoChanges()})
		return b.events, b.s, nil
	case MoveResign:
		b.emit(EventGameResigned, EventData{})
		return b.events, b.s, nil
	case MoveAutocomplete:
		b.autocomplete()
	}
	if b.s.Rules.Autocomplete == AutocompleteAutomatic && b.s.canAutocomplete() {
		b.autocomplete()
	}
	if b.s.onFoundations() == b.s.Rules.Cards() {
		b.emit(EventGameWon, EventData{Auto: true})
	}
	return b.events, b.s, nil
}

// Expire returns the expiry event of R5.3 if s is in progress and now is at
// or after its deadline, else nil. The event is automatic, belongs to no
// command, and records the deadline; the game's end time is the deadline.
func Expire(s *State, now time.Time) []Event {
	dl, ok := s.Deadline()
	now = monotonic(s, now)
	if s.Status != StatusInProgress || !ok || now.Before(dl) {
		return nil
	}
	return []Event{{Version: s.Version + 1, Type: EventGameExpired, OccurredAt: now,
		Data: EventData{V: PayloadVersion, Move: s.Moves, Auto: true, Deadline: &dl}}}
}

// monotonic is the time of a new event: Millis(now), but never before the
// stream's latest event, so a server clock stepping back cannot write a
// log whose times run backwards (R5.1).
func monotonic(s *State, now time.Time) time.Time {
	now = Millis(now)
	if now.Before(s.LastAt) {
		return s.LastAt
	}
	return now
}

// builder collects the events of one command, applying each to a private
// clone so follow-ups are decided on the state they follow.
type builder struct {
	s      *State
	move   int
	now    time.Time
	events []Event
}

func (b *builder) emit(t EventType, d EventData) {
	if d.V == 0 {
		d.V = PayloadVersion
	}
	d.Move = b.move
	e := Event{Version: b.s.Version + 1, Type: t, OccurredAt: b.now, Data: d}
	b.s.Apply(e)
	b.events = append(b.events, e)
}

// moveCards emits a move of n cards and, where flips are automatic, the
// flip of a face-down card it uncovers (R2.4).
func (b *builder) moveCards(from, to PileRef, n int, auto bool) {
	src, _ := b.s.pile(from)
	cards := append([]Card{}, (*src)[len(*src)-n:]...)
	b.emit(EventCardsMoved, EventData{From: from, To: to, Count: n, Cards: cards, Auto: auto})
	if from.Kind == Tableau && b.s.Rules.Flip == FlipAuto {
		if p := b.s.Tableau[from.Index]; p.Down > 0 && p.Down == len(p.Cards) {
			b.flip(from.Index, true)
		}
	}
}

func (b *builder) flip(i int, auto bool) {
	c := b.s.Tableau[i].Cards[b.s.Tableau[i].Down-1]
	b.emit(EventCardFlipped, EventData{Pile: TableauRef(i), Card: &c, Auto: auto})
}

// autocomplete emits every remaining card to the foundations, each as its
// own automatic event (R2.6).
func (b *builder) autocomplete() {
	plan, _ := autocompletePlan(b.s)
	for _, m := range plan {
		b.moveCards(m.From, m.To, 1, true)
	}
}

func contains(ms []Move, m Move) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// explain says why a normalized move that is not in LegalMoves is refused.
// It only diagnoses; legality itself is LegalMoves.
func explain(s *State, m Move) (Reason, string) {
	r := s.Rules
	switch m.Type {
	case MoveDraw:
		if len(s.Stock) == 0 && len(s.Waste) == 0 {
			return ReasonNothingToDraw, "stock and waste are empty (R2.1)"
		}
		if r.Passes == 1 {
			return ReasonNoPassesLeft, r.Variant + " goes through the stock once, and that pass is used (R2.1, R3)"
		}
		return ReasonNoPassesLeft, fmt.Sprintf("all %d passes are used (R2.1, R3)", r.Passes)
	case MoveUndo:
		if !r.Undo {
			return ReasonUndoNotAllowed, r.Variant + " is played without undo"
		}
		return ReasonNothingToUndo, "no move left to undo (R2.5)"
	case MoveRedo:
		if !r.Undo {
			return ReasonUndoNotAllowed, r.Variant + " is played without undo, so without redo (R2.9)"
		}
		return ReasonNothingToRedo, "no undo to take back since the last other move (R2.9)"
	case MoveAutocomplete:
		return ReasonCannotAutocomplete, "autocomplete needs an empty stock and waste and every tableau card face up (R2.6)"
	case MoveFlip:
		if r.Flip == FlipAuto {
			return ReasonFlipIsAutomatic, r.Variant + " turns cards up automatically (R2.4)"
		}
		if m.Pile.Kind != Tableau {
			return ReasonBadSource, "only tableau cards are flipped (R2.4)"
		}
		if m.Pile.Index < 0 || m.Pile.Index >= len(s.Tableau) {
			return ReasonNoSuchPile, fmt.Sprintf("%s has tableau/0..tableau/%d", r.Variant, len(s.Tableau)-1)
		}
		return ReasonNoFaceDownCard, "the top card of " + m.Pile.String() + " is not face down (R2.4)"
	case MoveCards, MoveTakeBack:
		return explainMove(s, m)
	case MoveResign:
		return ReasonIllegal, "resign is not possible now"
	}
	return ReasonUnknownType, "type must be draw, move, take-back, flip, undo, redo, autocomplete or resign"
}

func explainMove(s *State, m Move) (Reason, string) {
	r := s.Rules
	if m.Count < 1 || m.Count > maxCount {
		return ReasonBadCount, fmt.Sprintf("count must be 1..%d", maxCount)
	}
	if reason, detail := checkRef(s, m.From); reason != "" {
		return reason, detail
	}
	if reason, detail := checkRef(s, m.To); reason != "" {
		return reason, detail
	}
	if m.From.Kind == Foundation && m.From.Index == AnyFoundation {
		return ReasonBadSource, "name the foundation a card comes back from: foundation/<i>"
	}
	if m.Type == MoveTakeBack {
		if !r.TakeBack {
			return ReasonTakeBackNotAllowed, r.Variant + " keeps foundation cards (R2.3)"
		}
		if m.From.Kind != Foundation {
			return ReasonBadSource, "take-back starts at a foundation (R2.3)"
		}
		if m.To.Kind != Tableau {
			return ReasonBadDestination, "take-back ends on a tableau pile (R2.3)"
		}
		if m.Count != 1 {
			return ReasonTakeBackOneCard, "take-back moves one card (R2.3)"
		}
	} else {
		switch m.From.Kind {
		case Foundation:
			if !r.TakeBack {
				return ReasonTakeBackNotAllowed, r.Variant + " keeps foundation cards (R2.3)"
			}
			return ReasonUseTakeBack, `a foundation card leaves only by "take-back" (R2.3)`
		case Stock:
			return ReasonBadSource, `cards leave the stock only by "draw" (R2.1)`
		}
		if m.To.Kind == Stock || m.To.Kind == Waste {
			return ReasonBadDestination, "cards go to a tableau pile or a foundation (R2.2)"
		}
	}
	if m.From == m.To {
		return ReasonSamePile, "from and to are the same pile"
	}
	var moving []Card
	switch m.From.Kind {
	case Waste:
		if len(s.Waste) == 0 {
			return ReasonEmptyPile, "the waste is empty"
		}
		if m.Count != 1 {
			return ReasonOnlyTopWasteCard, "only the top waste card is playable, one card at a time (R1.3)"
		}
		moving = s.Waste[len(s.Waste)-1:]
	case Foundation:
		f := s.Foundations[m.From.Index]
		if len(f) == 0 {
			return ReasonEmptyPile, m.From.String() + " is empty"
		}
		moving = f[len(f)-1:]
	case Tableau:
		p := s.Tableau[m.From.Index]
		up := p.faceUp()
		if len(up) == 0 {
			if p.Down > 0 {
				return ReasonFaceDownTop, "the top card of " + m.From.String() + " is face down: flip it first (R2.4)"
			}
			return ReasonEmptyPile, m.From.String() + " is empty"
		}
		if m.Count > len(up) || m.Count > runLength(up) {
			return ReasonNotARun, fmt.Sprintf("the top %d cards of %s are not a face-up run (R1.6)", m.Count, m.From)
		}
		moving = up[len(up)-m.Count:]
	}
	head := moving[0]
	switch m.To.Kind {
	case Foundation:
		if m.Count != 1 {
			return ReasonSingleCardOnly, "only single cards go to a foundation (R1.6)"
		}
		if m.To.Index == AnyFoundation {
			return ReasonCardDoesNotFit, "no foundation takes " + head.String() + " (R1.4)"
		}
		return ReasonCardDoesNotFit, m.To.String() + " does not take " + head.String() + " (R1.4)"
	case Tableau:
		if m.Count > 1 && !r.Sequences {
			return ReasonSequenceNotAllowed, r.Variant + " moves single cards only (R3)"
		}
		switch reason := s.tableauRefusal(m.To.Index, head); reason {
		case ReasonOnlyKingOnEmpty:
			return reason, "an empty pile takes only a king (R1.5)"
		case ReasonFaceDownTop:
			return reason, "nothing is placed on a face-down card (R1.5)"
		case ReasonCardDoesNotFit:
			d := s.Tableau[m.To.Index]
			return reason, head.String() + " does not go on " + d.Cards[len(d.Cards)-1].String() + " (R1.5)"
		}
	}
	return ReasonIllegal, "not a legal move now"
}

// checkRef diagnoses a pile reference that names no pile of this game.
func checkRef(s *State, p PileRef) (Reason, string) {
	switch p.Kind {
	case Stock, Waste:
		return "", ""
	case Foundation:
		if p.Index == AnyFoundation || (p.Index >= 0 && p.Index < len(s.Foundations)) {
			return "", ""
		}
		return ReasonNoSuchPile, fmt.Sprintf("%s has foundation/0..foundation/%d", s.Rules.Variant, len(s.Foundations)-1)
	case Tableau:
		if p.Index >= 0 && p.Index < len(s.Tableau) {
			return "", ""
		}
		return ReasonNoSuchPile, fmt.Sprintf("%s has tableau/0..tableau/%d", s.Rules.Variant, len(s.Tableau)-1)
	}
	return ReasonBadPile, "from and to must name piles"
}
