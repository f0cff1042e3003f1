package domain

import "strconv"

// MoveType is the command a player sends (R2). Stable API words: never
// rename one.
type MoveType string

// The commands of R2.
const (
	MoveDraw         MoveType = "draw"         // R2.1, includes the recycle
	MoveCards        MoveType = "move"         // R2.2
	MoveTakeBack     MoveType = "take-back"    // R2.3
	MoveFlip         MoveType = "flip"         // R2.4
	MoveUndo         MoveType = "undo"         // R2.5
	MoveAutocomplete MoveType = "autocomplete" // R2.6
	MoveResign       MoveType = "resign"       // R2.7
	MoveRedo         MoveType = "redo"         // R2.9
)

// Move is one command, in the shape of MoveRequest in openapi.yaml. From, To
// and Count are used by move and take-back (Count defaults to 1), Pile by
// flip; the other types use no field. To may be FoundationRef(AnyFoundation)
// for "the foundation that takes it" (R2.2).
type Move struct {
	Type  MoveType `json:"type"`
	From  PileRef  `json:"from,omitzero"`
	To    PileRef  `json:"to,omitzero"`
	Count int      `json:"count,omitempty"`
	Pile  PileRef  `json:"pile,omitzero"`
}

// String is a short human form, e.g. "move tableau/3 -> foundation/0 x1".
func (m Move) String() string {
	switch m.Type {
	case MoveCards, MoveTakeBack:
		return string(m.Type) + " " + m.From.String() + " -> " + m.To.String() + " x" + strconv.Itoa(m.Count)
	case MoveFlip:
		return "flip " + m.Pile.String()
	}
	return string(m.Type)
}

// maxCount bounds a move's count before any state is consulted: no run is
// longer than 13 cards (R1.6).
const maxCount = King

// normalize returns m in canonical form against s: fields a type does not
// use are cleared, Count 0 becomes 1 for move and take-back, and "any
// foundation" is resolved to the lowest-numbered foundation that takes the
// card (R2.2). A move that cannot be resolved keeps AnyFoundation and will
// not be found in LegalMoves.
func normalize(s *State, m Move) Move {
	switch m.Type {
	case MoveCards, MoveTakeBack:
		m.Pile = PileRef{}
		if m.Count == 0 {
			m.Count = 1
		}
		if m.To.Kind == Foundation && m.To.Index == AnyFoundation && m.Count == 1 {
			if c, ok := s.topCard(m.From); ok {
				if i := s.foundationFor(c); i >= 0 {
					m.To.Index = i
				}
			}
		}
	case MoveFlip:
		m.From, m.To, m.Count = PileRef{}, PileRef{}, 0
	default:
		m.From, m.To, m.Pile, m.Count = PileRef{}, PileRef{}, PileRef{}, 0
	}
	return m
}
