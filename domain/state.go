package domain

import "time"

// Status is a game's state of play. Persisted and shown by the API: never
// rename a value.
type Status string

// The statuses of a game. A game ends exactly once (R2.8).
const (
	StatusInProgress Status = "in_progress"
	StatusWon        Status = "won"     // R2.8
	StatusLost       Status = "lost"    // resigned, R2.7
	StatusExpired    Status = "expired" // past the time limit, R5.3
)

// Ended reports whether the status is final.
func (s Status) Ended() bool { return s != StatusInProgress && s != "" }

// TableauPile is one tableau pile: Cards bottom first, of which the first
// Down are face down and the rest face up (R1.3).
type TableauPile struct {
	Cards []Card `json:"cards"`
	Down  int    `json:"down"`
}

// faceUp returns the face-up tail.
func (p TableauPile) faceUp() []Card { return p.Cards[p.Down:] }

// State is the aggregate: everything the rules need to decide the next move,
// rebuilt by applying a game's events in order (see Apply). The zero State
// has no deal; its first event must be game_dealt.
//
// Piles store their top card last. Note that Stock is therefore the reverse
// of the "drawn first, first" order of Position.Stock and the API.
//
// A State is not safe for concurrent use while it changes; a State that
// no longer changes (a store's cached state) may be read, and cloned, by
// any number of goroutines: reading writes nothing, and Clone's sharing of
// the undo record claims its growth with a compare-and-swap. Clone gives
// an independent copy: changing either never changes the other.
type State struct {
	Rules       Rules         `json:"rules"`
	Version     int           `json:"version"` // events applied; the stream version
	Moves       int           `json:"moves"`   // commands accepted, undos included (R2.5)
	Status      Status        `json:"status"`
	Stock       []Card        `json:"stock"`       // top (drawn next) last
	Waste       []Card        `json:"waste"`       // top last
	Foundations [][]Card      `json:"foundations"` // each bottom (ace) first
	Tableau     []TableauPile `json:"tableau"`
	Recycles    int           `json:"recycles"` // passes used = Recycles+1 (R2.1)
	// Fan is how many cards of the latest draw are still on the waste:
	// the cards a frontend shows fanned out with draw 3 (View.WasteFanned).
	// 0 after a recycle, or once the draw's cards have been played; in a
	// snapshot that lacks it, 0 (shown as the top card alone).
	Fan        int    `json:"fan,omitempty"`
	Commitment string `json:"commitment"`
	// ChainSalted is set when the deal event carries the game's salt
	// (DealPayloadVersion 2, R6.8): the chain's hashes reveal nothing of
	// the hidden cards and may be shown while the game is in progress.
	// A state decoded from a snapshot that lacks the field reads false,
	// the safe answer for logs written before the salt was in the deal.
	ChainSalted bool `json:"chain_salted,omitempty"`

	CreatedAt time.Time `json:"created_at"`          // time of the deal event
	StartedAt time.Time `json:"started_at,omitzero"` // clock start (R5.2); zero until it starts
	LastAt    time.Time `json:"last_at"`             // time of the latest event (R5.1)
	EndedAt   time.Time `json:"ended_at,omitzero"`   // when the game ended (the deadline for an expiry)

	Score ScoreState `json:"score"`

	// Hinted is set once a hint_given event is applied (R7.3): the game
	// was helped with the whole deal known and counts as unranked from
	// then on, whatever it was dealt as.
	Hinted bool `json:"hinted,omitempty"`

	// Turns and Ops are the undo record (R2.5): one Turn per undoable move
	// not yet undone, newest last, and the pile operations of all of them.
	Turns []Turn `json:"turns,omitempty"`
	Ops   []Op   `json:"ops,omitempty"`
	// Redo is the redo record (R2.9): the turns the undos since the last
	// other move reverted, the latest undo's last. A redo pops one; any
	// other move empties it.
	Redo []RedoTurn `json:"redo,omitempty"`

	// Fault names the first event that did not fit the state (a corrupt or
	// forged log), as "version N (type): why". Empty for every log the
	// server writes. Apply leaves no trace of that event and ignores every
	// later one, so the state stays the one after the last event that fit.
	Fault string `json:"fault,omitempty"`

	// turnsGrowth and opsGrowth are the growth claims of the arrays of
	// Turns and Ops (undorecord.go); nil: not known, the next append
	// copies.
	turnsGrowth *growth[Turn]
	opsGrowth   *growth[Op]
}

// ScoreState holds what the scores of R4 are computed from. The zero value
// is the start of a game.
type ScoreState struct {
	// Points is the running sum of per-event points of R4.3 (standard).
	Points int `json:"points"`
	// Placed has bit c set once card c has been placed on a foundation
	// (R4.2 "for the first time"); one-deck games only.
	Placed uint64 `json:"placed"`
	// Flipped has bit c set once card c was turned face up (R4.2).
	Flipped uint64 `json:"flipped"`
}

// Turn is one undoable move on the undo record: the version of its first
// event, the counters before it, and where its operations start in Ops.
type Turn struct {
	Version  int        `json:"version"`
	Move     int        `json:"move"`
	OpStart  int        `json:"op_start"`
	Recycles int        `json:"recycles"`
	Score    ScoreState `json:"score"`
	Fan      int        `json:"fan,omitempty"`
}

// RedoTurn is a turn an undo reverted, kept so that a redo can re-apply
// it exactly (R2.9): the Turn as it stood on the undo record, the version
// of the move_undone event that reverted it, its pile operations in the
// order they were made, and the counters as they were after it.
type RedoTurn struct {
	Turn     Turn       `json:"turn"`
	Undo     int        `json:"undo"`
	Ops      []Op       `json:"ops"`
	Recycles int        `json:"recycles"`
	Score    ScoreState `json:"score"`
	Fan      int        `json:"fan,omitempty"`
}

// OpKind is a pile operation on the undo record. Persisted in snapshots: do
// not reorder.
type OpKind uint8

// Pile operations, each exactly reversible.
const (
	OpDraw    OpKind = iota + 1 // Count cards stock -> waste
	OpRecycle                   // Count cards waste -> stock, reversed
	OpMove                      // Count cards From -> To
	OpFlip                      // top card of From turned face up
)

// Op is one pile operation of a turn, packed into 8 bytes because the undo
// record of a long game holds one per event: pile kinds and indices (0..15,
// Rules.Validate bounds the piles) and a count (at most 3 decks' cards).
type Op struct {
	Kind  OpKind   `json:"k"`
	FromK PileKind `json:"fk,omitempty"`
	FromI int8     `json:"fi,omitempty"`
	ToK   PileKind `json:"tk,omitempty"`
	ToI   int8     `json:"ti,omitempty"`
	Count int16    `json:"n,omitempty"`
}

// newOp packs an operation.
func newOp(k OpKind, from, to PileRef, n int) Op {
	return Op{Kind: k, FromK: from.Kind, FromI: int8(from.Index), ToK: to.Kind, ToI: int8(to.Index), Count: int16(n)}
}

func (o Op) from() PileRef { return PileRef{Kind: o.FromK, Index: int(o.FromI)} }
func (o Op) to() PileRef   { return PileRef{Kind: o.ToK, Index: int(o.ToI)} }

// Clone returns a copy of s that no later change of either state affects:
// piles are copied; the append-only undo record is shared, capped.
func (s *State) Clone() *State {
	c := *s
	total := len(s.Stock) + len(s.Waste)
	for _, f := range s.Foundations {
		total += len(f)
	}
	for _, p := range s.Tableau {
		total += len(p.Cards)
	}
	buf := make([]Card, 0, total)
	cp := func(src []Card) []Card {
		start := len(buf)
		buf = append(buf, src...)
		return buf[start:len(buf):len(buf)]
	}
	c.Stock = cp(s.Stock)
	c.Waste = cp(s.Waste)
	c.Foundations = make([][]Card, len(s.Foundations))
	for i, f := range s.Foundations {
		c.Foundations[i] = cp(f)
	}
	c.Tableau = make([]TableauPile, len(s.Tableau))
	for i, p := range s.Tableau {
		c.Tableau[i] = TableauPile{Cards: cp(p.Cards), Down: p.Down}
	}
	// The undo record only grows by append (pushTurn, pushOps: in place
	// only past every sharing state's length, undorecord.go) and shrinks by
	// reslicing, so no State ever writes below the length of the slice it
	// holds: sharing it is safe, and a Clone costs the same however long
	// the game.
	c.Turns, c.Ops = s.Turns, s.Ops
	c.Redo = s.Redo[:len(s.Redo):len(s.Redo)] // same discipline; a RedoTurn's Ops never change
	return &c
}

// topCard returns the playable top card of a waste, foundation or tableau
// pile (a face-down tableau top does not count).
func (s *State) topCard(p PileRef) (Card, bool) {
	switch p.Kind {
	case Waste:
		if n := len(s.Waste); n > 0 {
			return s.Waste[n-1], true
		}
	case Foundation:
		if p.Index >= 0 && p.Index < len(s.Foundations) {
			if f := s.Foundations[p.Index]; len(f) > 0 {
				return f[len(f)-1], true
			}
		}
	case Tableau:
		if p.Index >= 0 && p.Index < len(s.Tableau) {
			t := s.Tableau[p.Index]
			if len(t.Cards) > t.Down {
				return t.Cards[len(t.Cards)-1], true
			}
		}
	}
	return NoCard, false
}

// foundationFor returns the lowest-numbered foundation that takes card c
// (R1.4, R2.2), or -1.
func (s *State) foundationFor(c Card) int {
	for i, f := range s.Foundations {
		top := NoCard
		if len(f) > 0 {
			top = f[len(f)-1]
		}
		if fitsOnFoundation(c, top) {
			return i
		}
	}
	return -1
}

// onFoundations counts the cards on all foundations.
func (s *State) onFoundations() int {
	n := 0
	for _, f := range s.Foundations {
		n += len(f)
	}
	return n
}

// Position returns the current arrangement of the cards as a Position
// (Stock in drawn-first order). The result shares no memory with s.
func (s *State) Position() Position {
	p := Position{Recycles: s.Recycles}
	p.Tableau = make([]PileLayout, len(s.Tableau))
	for i, t := range s.Tableau {
		p.Tableau[i] = PileLayout{Down: append([]Card{}, t.Cards[:t.Down]...), Up: append([]Card{}, t.Cards[t.Down:]...)}
	}
	p.Stock = reversed(s.Stock)
	p.Waste = append([]Card{}, s.Waste...)
	p.Foundations = make([][]Card, len(s.Foundations))
	for i, f := range s.Foundations {
		p.Foundations[i] = append([]Card{}, f...)
	}
	return p
}

func reversed(cards []Card) []Card {
	out := make([]Card, len(cards))
	for i, c := range cards {
		out[len(cards)-1-i] = c
	}
	return out
}

// Deadline returns when the time limit runs out (R5.3), and false where the
// game has no limit or its clock has not started.
func (s *State) Deadline() (time.Time, bool) {
	if s.Rules.TimeLimitS <= 0 || s.StartedAt.IsZero() {
		return time.Time{}, false
	}
	return s.StartedAt.Add(time.Duration(s.Rules.TimeLimitS) * time.Second), true
}

// Elapsed is the game's playing time at instant now (R5.2): zero before the
// clock starts; for an ended game, its end minus its start, whatever now is.
func (s *State) Elapsed(now time.Time) time.Duration {
	if s.StartedAt.IsZero() {
		return 0
	}
	end := now
	if s.Status.Ended() {
		end = s.EndedAt
	}
	if d, ok := s.Deadline(); ok && end.After(d) {
		end = d
	}
	if end.Before(s.StartedAt) {
		return 0
	}
	return end.Sub(s.StartedAt)
}

// CanUndo reports whether an undo would be accepted now (R2.5).
func (s *State) CanUndo() bool {
	return s.Status == StatusInProgress && s.Rules.Undo && len(s.Turns) > 0
}

// CanRedo reports whether a redo would be accepted now (R2.9): undo is
// allowed and an undo since the last other move is not yet redone.
func (s *State) CanRedo() bool {
	return s.Status == StatusInProgress && s.Rules.Undo && len(s.Redo) > 0 && s.redoFits()
}
