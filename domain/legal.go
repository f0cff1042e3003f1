package domain

// LegalMoves returns every move the player may make in state s, in canonical form
// (foundations by index, Count set), in a fixed order: draw, waste moves,
// tableau moves, take-backs, flips, autocomplete, undo, redo, resign. It is the
// single authority on legality: Decide accepts exactly these moves (after
// resolving "foundation" without index, R2.2). An ended game has none.
//
// Rules applied: R1.4 foundations, R1.5/R1.6 tableau building and runs,
// R2.1 draw and recycle within the passes of R3, R2.3 take-back where
// allowed, R2.4 flip where the player flips, R2.5 undo, R2.6 autocomplete
// only when it can finish, R2.7 resign, R2.9 redo.
func LegalMoves(s *State) []Move {
	if s.Status != StatusInProgress || s.Version == 0 {
		return nil
	}
	return appendLegalMoves(make([]Move, 0, 16), s)
}

// appendLegalMoves appends LegalMoves(s) to out and returns it: Decide
// passes a buffer on its stack, so that checking a move allocates no list
// while there are at most 32 legal moves (a list of a dozen moves is most
// of a kilobyte; more than 32 is rare, up to 41 in random play).
func appendLegalMoves(out []Move, s *State) []Move {
	if s.Status != StatusInProgress || s.Version == 0 {
		return out
	}
	r := s.Rules
	if len(s.Stock) > 0 || (len(s.Waste) > 0 && s.canRecycle()) {
		out = append(out, Move{Type: MoveDraw})
	}
	if c, ok := s.topCard(WastePile); ok {
		out = s.appendToFoundations(out, WastePile, c)
		for j := range s.Tableau {
			if s.takes(j, c) {
				out = append(out, Move{Type: MoveCards, From: WastePile, To: TableauRef(j), Count: 1})
			}
		}
	}
	for i, p := range s.Tableau {
		up := p.faceUp()
		if len(up) == 0 {
			continue
		}
		from := TableauRef(i)
		out = s.appendToFoundations(out, from, up[len(up)-1])
		maxK := 1
		if r.Sequences {
			maxK = runLength(up)
		}
		for j := range s.Tableau {
			if j == i {
				continue
			}
			for k := 1; k <= maxK; k++ {
				if s.takes(j, up[len(up)-k]) {
					out = append(out, Move{Type: MoveCards, From: from, To: TableauRef(j), Count: k})
					break // ranks rise down a run: at most one card fits
				}
			}
		}
	}
	if r.TakeBack {
		for i := range s.Foundations {
			if c, ok := s.topCard(FoundationRef(i)); ok {
				for j := range s.Tableau {
					if s.takes(j, c) {
						out = append(out, Move{Type: MoveTakeBack, From: FoundationRef(i), To: TableauRef(j), Count: 1})
					}
				}
			}
		}
	}
	if r.Flip == FlipPlayer {
		for i, p := range s.Tableau {
			if p.Down > 0 && p.Down == len(p.Cards) {
				out = append(out, Move{Type: MoveFlip, Pile: TableauRef(i)})
			}
		}
	}
	if s.canAutocomplete() {
		out = append(out, Move{Type: MoveAutocomplete})
	}
	if s.CanUndo() {
		out = append(out, Move{Type: MoveUndo})
	}
	if s.CanRedo() {
		out = append(out, Move{Type: MoveRedo})
	}
	return append(out, Move{Type: MoveResign})
}

// appendToFoundations adds a single-card move of c from `from` to every
// foundation that takes it (R1.4).
func (s *State) appendToFoundations(out []Move, from PileRef, c Card) []Move {
	for i, f := range s.Foundations {
		top := NoCard
		if len(f) > 0 {
			top = f[len(f)-1]
		}
		if fitsOnFoundation(c, top) {
			out = append(out, Move{Type: MoveCards, From: from, To: FoundationRef(i), Count: 1})
		}
	}
	return out
}

// takes reports whether tableau pile j takes card c as the head of what is
// moved (tableauRefusal is "").
func (s *State) takes(j int, c Card) bool { return s.tableauRefusal(j, c) == "" }

// tableauRefusal is why tableau pile j does not take card c as the head of
// what is moved, "" when it does (R1.5): an empty pile takes only a king
// (ReasonOnlyKingOnEmpty), a face-down top nothing (ReasonFaceDownTop), a
// face-up top the next rank down of the other colour
// (ReasonCardDoesNotFit). The rule's one statement in the rules engine:
// the legal moves, Apply's check and Decide's explanation all read it
// (the solver's byte-coded copy is held to it by its differential test).
// It builds no text, since the legal moves ask it of every pile.
func (s *State) tableauRefusal(j int, c Card) Reason {
	p := s.Tableau[j]
	switch {
	case len(p.Cards) == 0:
		if c.Rank() == King {
			return ""
		}
		return ReasonOnlyKingOnEmpty
	case p.Down == len(p.Cards):
		return ReasonFaceDownTop
	case !fitsOnTableau(c, p.Cards[len(p.Cards)-1]):
		return ReasonCardDoesNotFit
	}
	return ""
}

// runLength is the length of the run (R1.6) at the top of face-up cards.
func runLength(up []Card) int {
	k := 1
	for k < len(up) && fitsOnTableau(up[len(up)-k], up[len(up)-k-1]) {
		k++
	}
	return k
}

// canRecycle reports whether a pass remains for a recycle (R2.1, R3).
func (s *State) canRecycle() bool {
	return s.Rules.Passes == 0 || s.Recycles < s.Rules.Passes-1
}

// canAutocomplete reports whether autocomplete is allowed (R2.6): stock
// and waste empty, every tableau card face up, a card left to place, and
// placing cards one by one actually finishes.
func (s *State) canAutocomplete() bool {
	if len(s.Stock) > 0 || len(s.Waste) > 0 || s.onFoundations() == s.Rules.Cards() {
		return false
	}
	for _, p := range s.Tableau {
		if p.Down > 0 {
			return false
		}
	}
	plan, ok := autocompletePlan(s)
	return ok && len(plan) > 0
}

// autocompletePlan lists the moves autocomplete makes: repeatedly the
// lowest-numbered tableau pile whose top card a foundation takes, to the
// lowest-numbered such foundation. ok is false if cards would remain.
func autocompletePlan(s *State) ([]Move, bool) {
	w := s.Clone()
	var plan []Move
	for progress := true; progress; {
		progress = false
		for i := range w.Tableau {
			c, ok := w.topCard(TableauRef(i))
			if !ok {
				continue
			}
			if f := w.foundationFor(c); f >= 0 {
				m := Move{Type: MoveCards, From: TableauRef(i), To: FoundationRef(f), Count: 1}
				w.moveCards(m.From, m.To, 1)
				plan = append(plan, m)
				progress = true
			}
		}
	}
	return plan, w.onFoundations() == w.Rules.Cards()
}
