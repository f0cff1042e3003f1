package domain

import "time"

// View is what a client may see of a state (R6.4): while the game is in
// progress, face-down cards and the stock only as counts; once it has
// ended, everything. Card lists are bottom first; Stock is drawn-first
// first. Its card lists other than Stock are the state's own (NewView):
// read them; writing an element would change the state.
type View struct {
	Rules      Rules
	Status     Status
	Version    int
	Moves      int
	Score      *int       // nil for scoring none (R4.1)
	StartedAt  *time.Time // nil until the clock starts (R5.2)
	ElapsedMS  int64
	Deadline   *time.Time // nil without a time limit or before the start
	StockCount int
	Stock      []Card // only once ended
	PassesUsed int    // Recycles+1
	PassLimit  int    // 0 = unlimited
	Waste      []Card
	// WasteFanned is how many waste cards a frontend shows fanned out, the
	// playable one last: the cards of the latest draw still on the waste,
	// at least 1 when the waste is not empty (so always 1 with draw 1).
	WasteFanned int
	Foundations [][]Card
	Tableau     []PileView
	CanUndo     bool
	CanRedo     bool
	Commitment  string
	Revealed    bool // true when hidden cards are included (the game has ended)
}

// PileView is one tableau pile as a client sees it.
type PileView struct {
	FaceDown      int    // number of face-down cards
	FaceDownCards []Card // only once ended; bottom first
	Cards         []Card // face-up cards, bottom first
}

// NewView returns the view of s at instant now (for elapsed time and
// standard scoring). Its card lists are s's own (only the stock, reversed,
// is a copy), each capped at its length so that appending to one copies
// it: a view is read while s stays as it is (a move's answer renders it at
// once), and copying every list cost each answer a dozen allocations.
func NewView(s *State, now time.Time) View {
	v := View{Rules: s.Rules, Status: s.Status, Version: s.Version, Moves: s.Moves,
		ElapsedMS: s.Elapsed(now).Milliseconds(), StockCount: len(s.Stock),
		PassesUsed: s.Recycles + 1, PassLimit: s.Rules.Passes, CanUndo: s.CanUndo(), CanRedo: s.CanRedo(),
		Commitment: s.Commitment, Revealed: s.Status.Ended()}
	if sc, ok := s.ScoreAt(now); ok {
		v.Score = &sc
	}
	if !s.StartedAt.IsZero() {
		t := s.StartedAt
		v.StartedAt = &t
	}
	if d, ok := s.Deadline(); ok {
		v.Deadline = &d
	}
	v.Waste = capped(s.Waste)
	if len(s.Waste) > 0 {
		v.WasteFanned = max(1, min(s.Fan, len(s.Waste)))
	}
	v.Foundations = make([][]Card, len(s.Foundations))
	for i, f := range s.Foundations {
		v.Foundations[i] = capped(f)
	}
	v.Tableau = make([]PileView, len(s.Tableau))
	for i, t := range s.Tableau {
		v.Tableau[i] = PileView{FaceDown: t.Down, Cards: capped(t.Cards[t.Down:])}
		if v.Revealed {
			v.Tableau[i].FaceDownCards = capped(t.Cards[:t.Down])
		}
	}
	if v.Revealed {
		v.Stock = reversed(s.Stock)
	}
	return v
}

// capped is cards with its capacity cut to its length, never nil: an
// append to it copies rather than writing into the memory after it.
func capped(cards []Card) []Card {
	if cards == nil {
		return []Card{}
	}
	return cards[:len(cards):len(cards)]
}

// RedactEvent returns e as a client may see it while the game is in
// progress (R6.4): a game_dealt event loses its face-down cards, its stock
// and its salt (R6.8); the cards are replaced by counts in Data.Hidden.
// Other events carry only face-up cards and are returned unchanged. The
// result shares no memory with e's deal.
func RedactEvent(e Event) Event {
	if e.Type != EventGameDealt || e.Data.Deal == nil {
		return e
	}
	d := e.Data.Deal
	red := Position{Tableau: make([]PileLayout, len(d.Tableau)), Stock: []Card{},
		Waste: append([]Card(nil), d.Waste...), Recycles: d.Recycles}
	for _, f := range d.Foundations {
		red.Foundations = append(red.Foundations, append([]Card{}, f...))
	}
	h := &Hidden{FaceDown: make([]int, len(d.Tableau)), Stock: len(d.Stock)}
	for i, t := range d.Tableau {
		red.Tableau[i] = PileLayout{Down: []Card{}, Up: append([]Card{}, t.Up...)}
		h.FaceDown[i] = len(t.Down)
	}
	e.Data.Deal = &red
	e.Data.Hidden = h
	e.Data.Salt = ""
	return e
}

// ChainShown reports whether the hashes of a game's chain (each event's
// hash and prev_hash, the audit's head) may be shown to a reader (R6.8):
// always once the deal is revealed (revealed: R6.4, R6.6), and before that
// only when the deal event carries the game's salt (s.ChainSalted), since
// the hash of a deal without one is a function of the cards alone and a
// reader who has seen all but a few of them could test every order of the
// rest against it. s may be nil (a log that does not load): not shown.
func ChainShown(revealed bool, s *State) bool {
	return revealed || (s != nil && s.ChainSalted)
}
