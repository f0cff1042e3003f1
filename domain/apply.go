package domain

import (
	"encoding/hex"
	"fmt"
	"math/bits"
	"time"
)

// Apply folds event e into s. It is pure and total: it reads nothing but s
// and e, never fails and never panics. Events come from Decide (or a log
// written from it), so they fit; an event that does not (wrong version, a
// move from an empty pile, no deal yet) changes nothing but sets s.Fault to
// the first such problem, which replay and audit report.
//
// Turn bookkeeping: an event whose Data.Move is higher than s.Moves starts
// a new command; if it is undoable and the rules allow undo, a Turn is
// pushed with the counters as they were (R2.5). Later events of the same
// command (automatic flips, autocomplete, the win) join that turn. An undo
// moves the newest turn, with its operations, onto the redo record; a redo
// moves it back and re-applies its operations; any other command empties
// the redo record (R2.9).
func (s *State) Apply(e Event) {
	if s.Fault != "" {
		return // frozen at the last event that fitted
	}
	if e.Type == EventGameDealt {
		if s.Version != 0 || e.Version != 1 {
			s.fault(e, "a deal must be the first event")
			return
		}
		s.applyDeal(e)
		return
	}
	if why := s.misfit(e); why != "" {
		s.fault(e, why)
		return
	}
	// The event fits: nothing below can fail.
	switch e.Type {
	case EventMoveUndone:
		s.undoTurn(e.Version) // misfit checked undoFits
	case EventMoveRedone:
		s.redoTurn() // misfit checked redoFits
	default:
		if e.Data.Move > s.Moves && len(s.Redo) > 0 {
			s.Redo = nil // another move ends what can be redone (R2.9)
		}
	}
	s.Version = e.Version
	s.LastAt = e.OccurredAt
	if e.Data.Move > s.Moves {
		s.Moves = e.Data.Move
		if s.StartedAt.IsZero() {
			s.StartedAt = e.OccurredAt // R5.2: clock starts at the first move
		}
		if e.Type.undoable() && s.Rules.Undo {
			s.pushTurn(Turn{Version: e.Version, Move: e.Data.Move, OpStart: len(s.Ops),
				Recycles: s.Recycles, Score: s.Score, Fan: s.Fan})
		}
	}
	d := e.Data
	switch e.Type {
	case EventStockDrawn:
		s.drawN(d.Count)
		s.Fan = d.Count
		s.record(newOp(OpDraw, PileRef{}, PileRef{}, d.Count))
	case EventStockRecycled:
		s.recycle()
		s.Fan = 0
		s.Recycles++
		s.Score.Points += recyclePoints(s.Rules, s.Recycles)
		s.record(newOp(OpRecycle, PileRef{}, PileRef{}, d.Count))
	case EventCardsMoved:
		if d.From.Kind == Waste {
			s.Fan = max(s.Fan-d.Count, 0)
		}
		moved, _ := s.moveCards(d.From, d.To, d.Count)
		s.scoreMove(d.From, d.To, moved)
		s.record(newOp(OpMove, d.From, d.To, d.Count))
	case EventCardFlipped:
		i := d.Pile.Index
		s.Tableau[i].Down--
		c := s.Tableau[i].Cards[s.Tableau[i].Down]
		s.Score.Flipped |= cardBit(c)
		s.Score.Points += standardFlipPoints
		s.record(newOp(OpFlip, d.Pile, PileRef{}, 0))
	case EventGameWon:
		s.end(StatusWon, e.OccurredAt)
	case EventGameResigned:
		s.end(StatusLost, e.OccurredAt)
	case EventGameExpired:
		dl, _ := s.Deadline()
		s.end(StatusExpired, dl)
	case EventHintGiven:
		s.Hinted = true // the board is unchanged; the game is unranked from now on (R7.3)
	}
}

// misfit says why e (not a deal) does not fit s, or "" if it does. It
// changes nothing.
func (s *State) misfit(e Event) string {
	switch {
	case s.Version == 0:
		return "no deal before this event"
	case e.Version != s.Version+1:
		return fmt.Sprintf("version follows %d", s.Version)
	case s.Status.Ended():
		return "event after the end of the game"
	case e.Type == EventHintGiven && (e.Data.Move != s.Moves || e.Data.Auto):
		// Not a command (R7.3): it carries the number of the last one.
		return "move number out of sequence"
	case e.Type != EventHintGiven &&
		(e.Data.Move < s.Moves || (e.Data.Move == s.Moves && !e.Data.Auto) || e.Data.Move > s.Moves+1):
		return "move number out of sequence"
	case e.OccurredAt.Before(s.LastAt):
		return "time runs backwards (R5.1)"
	}
	newTurn := e.Data.Move > s.Moves
	if e.Type.undoable() && s.Rules.Undo && !newTurn && (len(s.Turns) == 0 || s.Turns[len(s.Turns)-1].Move != s.Moves) {
		// A pile change must belong to an undoable command's turn: one
		// joining an undo, a resign or nothing would escape the undo record.
		return "pile change outside an undoable command"
	}
	d := e.Data
	switch e.Type {
	case EventStockDrawn:
		if d.Count < 1 || d.Count != min(s.Rules.Draw, len(s.Stock)) || !s.stockTopIs(d.Cards) {
			return "draw does not match the stock (R2.1)"
		}
	case EventStockRecycled:
		if len(s.Stock) != 0 || len(s.Waste) == 0 || d.Count != len(s.Waste) || !s.canRecycle() {
			return "recycle needs an empty stock, the whole waste and a pass left (R2.1)"
		}
	case EventCardsMoved:
		if !s.moveFits(d) {
			return "move breaks the building rules (R1.4-R1.6, R2.2, R2.3)"
		}
	case EventCardFlipped:
		i := d.Pile.Index
		if d.Pile.Kind != Tableau || i < 0 || i >= len(s.Tableau) ||
			s.Tableau[i].Down == 0 || s.Tableau[i].Down != len(s.Tableau[i].Cards) ||
			d.Auto != (s.Rules.Flip == FlipAuto) ||
			(d.Card != nil && *d.Card != s.Tableau[i].Cards[s.Tableau[i].Down-1]) {
			return "no face-down top card to flip that way there (R2.4)"
		}
	case EventMoveUndone:
		n := len(s.Turns)
		if !s.Rules.Undo || n == 0 || s.Turns[n-1].Version != d.Undone || !s.undoFits() {
			return "nothing to undo at that version (R2.5)"
		}
	case EventMoveRedone:
		n := len(s.Redo)
		if !s.Rules.Undo || n == 0 || s.Redo[n-1].Undo != d.Redone || !s.redoFits() {
			return "nothing to redo for that undo (R2.9)"
		}
	case EventGameWon:
		if s.onFoundations() != s.Rules.Cards() {
			return "win with cards outside the foundations (R2.8)"
		}
	case EventGameResigned:
	case EventGameExpired:
		dl, ok := s.Deadline()
		if !ok || d.Deadline == nil || !d.Deadline.Equal(dl) || e.OccurredAt.Before(dl) {
			return "expiry before the deadline (R5.3)"
		}
	case EventHintGiven:
		if !hintVerdicts[d.Verdict] || (d.Hint != nil) != (d.Verdict == VerdictWinnable) {
			return "a hint names its verdict, and a move exactly when winnable (R7.3)"
		}
	default:
		return "unknown event type"
	}
	return ""
}

func (s *State) fault(e Event, why string) {
	if s.Fault == "" {
		s.Fault = fmt.Sprintf("version %d (%s): %s", e.Version, e.Type, why)
	}
}

func (s *State) end(st Status, at time.Time) {
	s.Status = st
	s.EndedAt = at
	s.Turns, s.Ops, s.Redo = nil, nil, nil // a finished game cannot be undone (R2.5) or redone (R2.9)
	s.turnsGrowth, s.opsGrowth = nil, nil
}

// applyDeal starts the game from the first event (R6.2).
func (s *State) applyDeal(e Event) {
	d := e.Data
	if d.Rules == nil || d.Deal == nil {
		s.fault(e, "deal without rules or cards")
		return
	}
	r := *d.Rules
	if err := r.Validate(); err != nil {
		s.fault(e, err.Error())
		return
	}
	if err := d.Deal.Validate(r); err != nil {
		s.fault(e, err.Error())
		return
	}
	if d.Salt != "" {
		// R6.8: a deal that carries its salt must carry the one its
		// commitment was made with; a forged salt would otherwise key
		// the chain with a value the commitment does not bind.
		salt, err := hex.DecodeString(d.Salt)
		if err != nil || len(salt) != 32 || hex.EncodeToString(salt) != d.Salt {
			s.fault(e, "the deal's salt is not 64 lower-case hex digits")
			return
		}
		if !CheckCommitment(d.Commitment, *d.Deal, salt) {
			s.fault(e, "the commitment does not match the deal and its salt (R6.4)")
			return
		}
	}
	p := d.Deal
	*s = State{Rules: r, Version: 1, Status: StatusInProgress, Commitment: d.Commitment,
		CreatedAt: e.OccurredAt, LastAt: e.OccurredAt, Recycles: p.Recycles, ChainSalted: d.Salt != ""}
	s.Stock = reversed(p.Stock)
	s.Waste = append([]Card{}, p.Waste...)
	s.Foundations = make([][]Card, r.Foundations)
	for i, f := range p.Foundations {
		s.Foundations[i] = append([]Card{}, f...)
	}
	s.Tableau = make([]TableauPile, r.Piles)
	for i, t := range p.Tableau {
		cards := make([]Card, 0, len(t.Down)+len(t.Up))
		cards = append(append(cards, t.Down...), t.Up...)
		s.Tableau[i] = TableauPile{Cards: cards, Down: len(t.Down)}
	}
	if r.TimeLimitS > 0 {
		s.StartedAt = e.OccurredAt // R5.2: a limited clock starts at creation
	}
}

// record puts op on the undo record of the current turn.
func (s *State) record(op Op) {
	if len(s.Turns) > 0 && s.Turns[len(s.Turns)-1].Move == s.Moves {
		s.pushOps(op)
	}
}

// drawN turns n cards from the stock top onto the waste, one at a time, so
// the last one turned is the waste's top (R2.1).
func (s *State) drawN(n int) {
	for ; n > 0; n-- {
		c := s.Stock[len(s.Stock)-1]
		s.Stock = s.Stock[:len(s.Stock)-1]
		s.Waste = append(s.Waste, c)
	}
}

// recycle turns the waste over as the new stock (R2.1): the card drawn
// first comes first again.
func (s *State) recycle() {
	for i := len(s.Waste) - 1; i >= 0; i-- {
		s.Stock = append(s.Stock, s.Waste[i])
	}
	s.Waste = s.Waste[:0]
}

// pile returns a pointer to the card list of a waste, foundation or tableau
// pile, and for a tableau pile its face-down count; nil if p names none.
func (s *State) pile(p PileRef) (*[]Card, int) {
	switch p.Kind {
	case Waste:
		return &s.Waste, 0
	case Foundation:
		if p.Index >= 0 && p.Index < len(s.Foundations) {
			return &s.Foundations[p.Index], 0
		}
	case Tableau:
		if p.Index >= 0 && p.Index < len(s.Tableau) {
			return &s.Tableau[p.Index].Cards, s.Tableau[p.Index].Down
		}
	}
	return nil, 0
}

// moveCards moves the top n face-up cards from one pile to another,
// keeping their order, and returns them. It checks only that the cards
// exist and are face up, not the building rules (Decide did): Apply must
// also undo moves, which go against those rules.
func (s *State) moveCards(from, to PileRef, n int) ([]Card, bool) {
	src, down := s.pile(from)
	dst, _ := s.pile(to)
	if src == nil || dst == nil || src == dst || n < 1 || n > len(*src)-down {
		return nil, false
	}
	if to.Kind == Tableau && len(*dst) > 0 && len(*dst) == s.Tableau[to.Index].Down {
		return nil, false // R1.5: nothing is placed on a face-down card
	}
	k := len(*src) - n
	moved := (*src)[k:]
	*dst = append(*dst, moved...)
	*src = (*src)[:k]
	return (*dst)[len(*dst)-n:], true
}

// undoFits reports whether the newest turn on the undo record can be
// reverted: every operation, taken back newest first, finds the cards it
// needs. It simulates pile sizes only, so its cost is the turn's length,
// not the game's. Only a corrupt snapshot or a forged log fails it: Apply
// records every pile change.
func (s *State) undoFits() bool {
	if len(s.Turns) == 0 {
		return false
	}
	t := s.Turns[len(s.Turns)-1]
	if t.OpStart < 0 || t.OpStart > len(s.Ops) || len(s.Foundations) > 16 || len(s.Tableau) > 16 {
		return false
	}
	stock, waste := len(s.Stock), len(s.Waste)
	var found, cards, down [16]int
	for i, f := range s.Foundations {
		found[i] = len(f)
	}
	for i, p := range s.Tableau {
		cards[i], down[i] = len(p.Cards), p.Down
	}
	size := func(p PileRef) *int {
		switch {
		case p.Kind == Waste:
			return &waste
		case p.Kind == Foundation && p.Index >= 0 && p.Index < len(s.Foundations):
			return &found[p.Index]
		case p.Kind == Tableau && p.Index >= 0 && p.Index < len(s.Tableau):
			return &cards[p.Index]
		}
		return nil
	}
	for i := len(s.Ops) - 1; i >= t.OpStart; i-- {
		op := s.Ops[i]
		switch op.Kind {
		case OpDraw:
			if int(op.Count) < 0 || int(op.Count) > waste {
				return false
			}
			waste, stock = waste-int(op.Count), stock+int(op.Count)
		case OpRecycle:
			if waste != 0 || stock != int(op.Count) {
				return false
			}
			waste, stock = stock, 0
		case OpMove:
			src, dst := size(op.to()), size(op.from())
			if src == nil || dst == nil || src == dst || int(op.Count) < 1 || int(op.Count) > *src {
				return false
			}
			if op.ToK == Tableau && *src-int(op.Count) < down[op.ToI] {
				return false // would take face-down cards
			}
			*src, *dst = *src-int(op.Count), *dst+int(op.Count)
		case OpFlip:
			j := int(op.FromI)
			if op.FromK != Tableau || j < 0 || j >= len(s.Tableau) || down[j] >= cards[j] {
				return false
			}
			down[j]++
		default:
			return false
		}
	}
	return true
}

// undoTurn reverts the newest turn on the undo record (R2.5), in place,
// and puts it on the redo record for the undo event at version undo
// (R2.9). The caller has checked undoFits.
func (s *State) undoTurn(undo int) {
	t := s.Turns[len(s.Turns)-1]
	// The redo record gets its own copy of the operations: the undo
	// record's array is shared with clones and will be written over.
	s.Redo = append(s.Redo, RedoTurn{Turn: t, Undo: undo, Ops: append([]Op(nil), s.Ops[t.OpStart:]...),
		Recycles: s.Recycles, Score: s.Score, Fan: s.Fan})
	for i := len(s.Ops) - 1; i >= t.OpStart; i-- {
		s.undoOp(s.Ops[i])
	}
	// Shrink with the capacity clipped: the next append copies (it would
	// anyway: the growth claim is past the new length, undorecord.go).
	s.Ops = s.Ops[:t.OpStart:t.OpStart]
	s.Turns = s.Turns[: len(s.Turns)-1 : len(s.Turns)-1]
	s.Recycles = t.Recycles
	s.Score = t.Score
	s.Fan = t.Fan
}

// undoOp reverts pile operation op, the newest not yet reverted of a turn
// being undone (undoTurn checked that its cards are there).
func (s *State) undoOp(op Op) {
	switch op.Kind {
	case OpDraw:
		for n := int(op.Count); n > 0; n-- {
			c := s.Waste[len(s.Waste)-1]
			s.Waste = s.Waste[:len(s.Waste)-1]
			s.Stock = append(s.Stock, c)
		}
	case OpRecycle:
		for j := len(s.Stock) - 1; j >= 0; j-- {
			s.Waste = append(s.Waste, s.Stock[j])
		}
		s.Stock = s.Stock[:0]
	case OpMove:
		src, _ := s.pile(op.to())
		dst, _ := s.pile(op.from())
		k := len(*src) - int(op.Count)
		*dst = append(*dst, (*src)[k:]...)
		*src = (*src)[:k]
	case OpFlip:
		s.Tableau[op.FromI].Down++
	}
}

// redoFits reports whether the newest turn on the redo record can be
// re-applied: it was reverted from exactly this undo record, and every
// operation, made again in order, finds the cards it needs. It tries them
// on a clone (a few hundred bytes of piles). Only a corrupt snapshot or a
// forged log fails it: Apply empties the redo record on any other move.
func (s *State) redoFits() bool {
	if len(s.Redo) == 0 {
		return false
	}
	r := s.Redo[len(s.Redo)-1]
	if r.Turn.OpStart != len(s.Ops) {
		return false
	}
	w := s.Clone()
	for _, op := range r.Ops {
		if !w.redoOp(op) {
			return false
		}
	}
	return true
}

// redoTurn re-applies the newest turn on the redo record (R2.9): its
// operations in order, the turn back on the undo record, and the counters
// as they were after it. The caller has checked redoFits.
func (s *State) redoTurn() {
	r := s.Redo[len(s.Redo)-1]
	for _, op := range r.Ops {
		s.redoOp(op)
	}
	s.pushTurn(r.Turn)
	s.pushOps(r.Ops...)
	s.Recycles, s.Score, s.Fan = r.Recycles, r.Score, r.Fan
	s.Redo = s.Redo[: len(s.Redo)-1 : len(s.Redo)-1]
	if len(s.Redo) == 0 {
		s.Redo = nil // as before the first undo: states compare equal
	}
}

// redoOp makes pile operation op again, as the event that recorded it
// did; it reports false, changing nothing, when the cards are not there.
func (s *State) redoOp(op Op) bool {
	n := int(op.Count)
	switch op.Kind {
	case OpDraw:
		if n < 1 || n > len(s.Stock) {
			return false
		}
		s.drawN(n)
	case OpRecycle:
		if len(s.Stock) != 0 || len(s.Waste) != n {
			return false
		}
		s.recycle()
	case OpMove:
		_, ok := s.moveCards(op.from(), op.to(), n)
		return ok
	case OpFlip:
		j := int(op.FromI)
		if op.FromK != Tableau || j < 0 || j >= len(s.Tableau) || s.Tableau[j].Down == 0 ||
			s.Tableau[j].Down != len(s.Tableau[j].Cards) {
			return false
		}
		s.Tableau[j].Down--
	default:
		return false
	}
	return true
}

func cardBit(c Card) uint64 { return 1 << (uint(c) & 63) }

func popcount(x uint64) int { return bits.OnesCount64(x) }

// stockTopIs reports whether cards (in draw order) are the next cards of
// the stock; an empty list (a payload without cards) matches anything.
func (s *State) stockTopIs(cards []Card) bool {
	if len(cards) == 0 {
		return true
	}
	if len(cards) > len(s.Stock) {
		return false
	}
	for i, c := range cards {
		if s.Stock[len(s.Stock)-1-i] != c {
			return false
		}
	}
	return true
}

// moveFits checks a cards_moved payload against the building rules, so a
// log that breaks them (forged with a recomputed hash chain) faults on
// replay: the source holds Count face-up cards forming a run (R1.6), runs
// move only where the variant allows (R3), foundations take single cards
// that fit (R1.4), tableau piles take what R1.5 allows, foundation cards
// leave only by take-back where allowed (R2.3), and Cards, when given, are
// the cards moved.
func (s *State) moveFits(d EventData) bool {
	n := d.Count
	if n < 1 || d.From == d.To {
		return false
	}
	var moving []Card
	switch d.From.Kind {
	case Waste:
		if n != 1 || len(s.Waste) == 0 {
			return false
		}
		moving = s.Waste[len(s.Waste)-1:]
	case Foundation:
		if !s.Rules.TakeBack || n != 1 || d.To.Kind != Tableau || d.From.Index < 0 || d.From.Index >= len(s.Foundations) {
			return false
		}
		f := s.Foundations[d.From.Index]
		if len(f) == 0 {
			return false
		}
		moving = f[len(f)-1:]
	case Tableau:
		if d.From.Index < 0 || d.From.Index >= len(s.Tableau) {
			return false
		}
		up := s.Tableau[d.From.Index].faceUp()
		if len(up) < n || runLength(up) < n || (n > 1 && !s.Rules.Sequences) {
			return false
		}
		moving = up[len(up)-n:]
	default:
		return false
	}
	if len(d.Cards) > 0 && !equalCards(d.Cards, moving) {
		return false
	}
	switch d.To.Kind {
	case Foundation:
		c, ok := s.topCard(d.To)
		if !ok {
			c = NoCard
		}
		return n == 1 && d.To.Index >= 0 && d.To.Index < len(s.Foundations) && fitsOnFoundation(moving[0], c)
	case Tableau:
		return d.To.Index >= 0 && d.To.Index < len(s.Tableau) && s.takes(d.To.Index, moving[0])
	}
	return false
}

func equalCards(a, b []Card) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
