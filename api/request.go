package api

import (
	"fmt"
	"slices"

	"github.com/openpatience/solitaire/domain"
)

// CreateGameRequest asks for a new game (POST /v1/games). variant is
// an id of GET /v1/variants. seed (0..2^64-1), layout or deal, at most one,
// make the game unranked; without any the server deals from a secret seed.
// deal is "pysolfc:<number>" (RULES R6.7), for the variants whose
// numbered_deals list "pysolfc".
// duel_id joins that same-deal duel, as POST /v1/duels/{id}/games does:
// variant must be the duel's, with no options, seed or layout.
// winnable true deals a deal the solver proved winnable (RULES R7.2), in
// every variant, not with seed, layout, deal or duel_id; the game
// stays ranked (its statistics apart from random deals').
type CreateGameRequest struct {
	Variant string         `json:"variant" example:"klondike" minLength:"1" maxLength:"64"`                                     // variant id (GET /v1/variants)
	Options *CreateOptions `json:"options,omitempty"`                                                                           // options; absent ones keep the variant's defaults
	Seed    *Seed          `json:"seed,omitempty" swaggertype:"string" example:"9925980916699881289" extensions:"x-seed=input"` // deal from this seed (R6.1), a decimal string (or a JSON integer up to 2^53-1); unranked
	Layout  *Layout        `json:"layout,omitempty"`                                                                            // deal this layout (R6.5); unranked
	DuelID  *string        `json:"duel_id,omitempty"`                                                                           // join this same-deal duel (R6.3); as POST /v1/duels/{id}/games

	Deal *string `json:"deal,omitempty" example:"pysolfc:12345" minLength:"1" maxLength:"220"` // deal PySolFC's game of this number (R6.7): "pysolfc:" then e.g. 12345, 12,345 or ms5; unranked

	Winnable *bool `json:"winnable,omitempty"` // true: deal a deal proven winnable (R7.2), not with seed, layout, deal or duel_id; 503 deal_not_ready with Retry-After if none is ready
} // @name CreateGameRequest

// CreateOptions are the options a client may set at creation (RULES R3
// "Options a client may set"); an absent one keeps the variant's default.
// Any change other than draw makes the game unranked. time_limit_s is 0
// (none) or 10..86400.
type CreateOptions struct {
	Draw         *int    `json:"draw,omitempty" enums:"1,3"`
	Scoring      *string `json:"scoring,omitempty" enums:"none,klassik,standard,vegas"`
	TakeBack     *bool   `json:"take_back,omitempty"`
	Flip         *string `json:"flip,omitempty" enums:"auto,player"`
	Autocomplete *string `json:"autocomplete,omitempty" enums:"offered,automatic"`
	TimeLimitS   *int    `json:"time_limit_s,omitempty" minimum:"0" maximum:"86400"`
	Undo         *bool   `json:"undo,omitempty"`
} // @name CreateOptions

// Layout is a custom deal (RULES R6.5; Layout in openapi.yaml): one pile
// per tableau pile of the variant, cards bottom first, and the stock with
// the card drawn first, first. Waste and foundations start empty. Cards are
// R1.1 codes; every card must appear as often as the variant has decks.
type Layout struct {
	Tableau []LayoutPile `json:"tableau"`
	Stock   []string     `json:"stock"`
} // @name Layout

// LayoutPile is one tableau pile of a layout or a deal: face-down cards,
// then face-up cards (a run, R1.6), each bottom first.
type LayoutPile struct {
	FaceDown []string `json:"face_down" example:"AS"`
	FaceUp   []string `json:"face_up" example:"7D"`
} // @name LayoutPile

// MoveRequest is one command (MoveRequest in openapi.yaml). type is one of the
// commands of RULES R2 (redo is R2.9). move and take-back use from, to and count (default
// 1, at most 13); flip uses pile. Piles: stock, waste, foundation/<i>,
// tableau/<i> (0-based), and foundation alone for "whichever foundation
// takes it".
type MoveRequest struct {
	Type  string  `json:"type" enums:"draw,move,take-back,flip,undo,redo,autocomplete,resign"`                                                // the command (R2)
	From  *string `json:"from,omitempty" example:"tableau/3" pattern:"^(stock|waste|foundation(/(0|[1-9][0-9]?))?|tableau/(0|[1-9][0-9]?))$"` // move, take-back: the source pile
	To    *string `json:"to,omitempty" example:"foundation" pattern:"^(stock|waste|foundation(/(0|[1-9][0-9]?))?|tableau/(0|[1-9][0-9]?))$"`  // move, take-back: the destination; "foundation" for whichever takes the card
	Count *int    `json:"count,omitempty" minimum:"1" maximum:"13"`                                                                           // move: cards to move as a run (R1.6); default 1
	Pile  *string `json:"pile,omitempty" example:"tableau/2" pattern:"^(stock|waste|foundation(/(0|[1-9][0-9]?))?|tableau/(0|[1-9][0-9]?))$"` // flip: the tableau pile whose top card to turn up
} // @name MoveRequest

// MoveResult answers an accepted move: the game after it and the events it
// appended, in order.
type MoveResult struct {
	Game   Game    `json:"game"`
	Events []Event `json:"events"` // the events appended, oldest first
} // @name MoveResult

// LegalMoves lists every move the game accepts at version, in the shape of
// a move request (domain.LegalMoves). It is empty once the game has ended.
type LegalMoves struct {
	Version int           `json:"version" minimum:"1"` // the game version the list is for
	Moves   []MoveRequest `json:"moves"`
} // @name LegalMoves

// newMoveRequest renders a domain move in request shape.
func newMoveRequest(m domain.Move) MoveRequest {
	out := MoveRequest{Type: string(m.Type)}
	str := func(p domain.PileRef) *string {
		if p.IsZero() {
			return nil
		}
		s := p.String()
		return &s
	}
	out.From, out.To, out.Pile = str(m.From), str(m.To), str(m.Pile)
	if m.Count != 0 {
		n := m.Count
		out.Count = &n
	}
	return out
}

// move turns the request into a domain move. Pile names are parsed here
// (errors: *domain.MoveError with reason bad_pile); an explicit count below
// 1 is refused with reason bad_count, since the domain reads 0 as "1".
// Whether the move is legal is the domain's call.
func (r MoveRequest) move() (domain.Move, error) {
	if err := r.fieldsFit(); err != nil {
		return domain.Move{}, err
	}
	m := domain.Move{Type: domain.MoveType(r.Type)}
	for _, f := range []struct {
		s   *string
		dst *domain.PileRef
	}{{r.From, &m.From}, {r.To, &m.To}, {r.Pile, &m.Pile}} {
		if f.s == nil {
			continue
		}
		p, err := domain.ParsePileRef(*f.s)
		if err != nil {
			return domain.Move{}, err
		}
		*f.dst = p
	}
	if r.Count != nil {
		if *r.Count < 1 {
			return domain.Move{}, &domain.MoveError{Move: m, Reason: domain.ReasonBadCount,
				Detail: "count must be at least 1"}
		}
		m.Count = *r.Count
	}
	return m, nil
}

// MoveFields says which fields each command of a MoveRequest takes besides
// type (RULES R2): the spec describes MoveRequest as one schema per
// command from this table (docs/gen), and the server refuses a field a
// command does not take. The first list is required by the spec, the
// second optional.
var MoveFields = map[string][2][]string{
	"draw": {}, "undo": {}, "redo": {}, "autocomplete": {}, "resign": {},
	"move":      {{"from", "to"}, {"count"}},
	"take-back": {{"from", "to"}, {"count"}},
	"flip":      {{"pile"}, nil},
}

// fieldsFit refuses a field the request's command does not take (400
// invalid_body naming it): a body like {"type":"resign","pile":…} is not
// a resign, and acting on it would hide the client's mistake. A command
// this table does not name is left to the rules (unknown_move_type).
func (r MoveRequest) fieldsFit() error {
	fields, ok := MoveFields[r.Type]
	if !ok {
		return nil
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"from", r.From != nil}, {"to", r.To != nil}, {"pile", r.Pile != nil}, {"count", r.Count != nil}} {
		if f.set && !slices.Contains(fields[0], f.name) && !slices.Contains(fields[1], f.name) {
			return invalidBody(f.name, fmt.Sprintf("a %s takes no %s", r.Type, f.name))
		}
	}
	return nil
}

// options turns the request's options into domain options; the domain
// validates them against the variant.
func (o *CreateOptions) options() domain.Options {
	if o == nil {
		return domain.Options{}
	}
	out := domain.Options{Draw: o.Draw, TakeBack: o.TakeBack, TimeLimitS: o.TimeLimitS, Undo: o.Undo}
	if o.Scoring != nil {
		v := domain.Scoring(*o.Scoring)
		out.Scoring = &v
	}
	if o.Flip != nil {
		v := domain.FlipMode(*o.Flip)
		out.Flip = &v
	}
	if o.Autocomplete != nil {
		v := domain.AutocompleteMode(*o.Autocomplete)
		out.Autocomplete = &v
	}
	return out
}

// position parses the layout's card codes (errors: *domain.LayoutError);
// the domain validates the position against the variant.
func (l *Layout) position() (*domain.Position, error) {
	parse := func(where string, in []string) ([]domain.Card, error) {
		out := make([]domain.Card, len(in))
		for i, s := range in {
			c, err := domain.ParseCard(s)
			if err != nil {
				return nil, &domain.LayoutError{Where: where, Reason: "bad_card",
					Detail: "not a card code (R1.1: rank A23456789TJQK then suit CDHS, e.g. TD)"}
			}
			out[i] = c
		}
		return out, nil
	}
	p := &domain.Position{Tableau: make([]domain.PileLayout, len(l.Tableau))}
	var err error
	for i, t := range l.Tableau {
		where := domain.TableauRef(i).String()
		if p.Tableau[i].Down, err = parse(where, t.FaceDown); err != nil {
			return nil, err
		}
		if p.Tableau[i].Up, err = parse(where, t.FaceUp); err != nil {
			return nil, err
		}
	}
	if p.Stock, err = parse("stock", l.Stock); err != nil {
		return nil, err
	}
	return p, nil
}
