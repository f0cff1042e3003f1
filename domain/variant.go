package domain

import (
	"fmt"
	"strconv"
)

// FlipMode says who turns a face-down tableau card up (R2.4): the server
// automatically ("auto") or the player with a flip move ("player").
type FlipMode string

// Flip modes (persisted: do not rename).
const (
	FlipAuto   FlipMode = "auto"
	FlipPlayer FlipMode = "player"
)

// AutocompleteMode says whether autocomplete (R2.6) is a move the player may
// make ("offered") or is done by the server right after the move that made
// it possible ("automatic", seed 003).
type AutocompleteMode string

// Autocomplete modes (persisted: do not rename).
const (
	AutocompleteOffered   AutocompleteMode = "offered"
	AutocompleteAutomatic AutocompleteMode = "automatic"
)

// Scoring names a scoring system of R4 (persisted: do not rename).
type Scoring string

// The scoring systems of R4.1–R4.4.
const (
	ScoringNone     Scoring = "none"
	ScoringKlassik  Scoring = "klassik"
	ScoringStandard Scoring = "standard"
	ScoringVegas    Scoring = "vegas"
)

// Rules are a variant's table row (R3) with a game's options applied: all a
// game needs to know to decide moves. Recorded in the first event of every
// game (R6.2), so a log replays under the rules it was played with.
type Rules struct {
	Variant      string           `json:"variant"`
	Decks        int              `json:"decks"`        // 1..3
	Piles        int              `json:"piles"`        // tableau piles, dealt 1..Piles cards
	Foundations  int              `json:"foundations"`  // 4 per deck
	Draw         int              `json:"draw"`         // cards turned per draw: 1 or 3
	Passes       int              `json:"passes"`       // trips through the stock; 0 = unlimited (R3)
	Sequences    bool             `json:"sequences"`    // runs move as a unit (R1.6)
	TakeBack     bool             `json:"take_back"`    // foundation -> tableau allowed (R2.3)
	Flip         FlipMode         `json:"flip"`         // R2.4
	Autocomplete AutocompleteMode `json:"autocomplete"` // R2.6
	Scoring      Scoring          `json:"scoring"`      // R4
	TimeLimitS   int              `json:"time_limit_s"` // seconds; 0 = none (R5.3)
	Undo         bool             `json:"undo"`         // undo allowed (R2.5)
}

// Cards is the number of cards in play: 52 per deck.
func (r Rules) Cards() int { return 52 * r.Decks }

// Variant is one row of the R3 table: the rules a game gets by default and
// which options a client may change. Adding a Klondike-family game is adding
// a Variant to the table in variants; no code depends on a variant's id.
type Variant struct {
	ID          string // stable id used by the API, e.g. "klondike-draw3"
	Name        string // display name
	Source      string // where the rules come from (the seed number of docs/rules.md R3)
	Defaults    Rules  // the row of R3
	DrawChoices []int  // draw counts a client may choose; len 1 = fixed
}

// variants is the R3 table. Decisions where the table is silent:
//   - undo is allowed by default only in relaxed (seed 003: "unbegrenztes
//     Rückgängig"); the other seeds do not offer it. A client may switch it
//     on (the game becomes unranked).
//   - draw is a choice only where R3 says "option" (relaxed: 1 or 3).
var variants = []Variant{
	{ID: "klondike", Name: "Klondike (draw 1)", Source: "seed 001", DrawChoices: []int{1},
		Defaults: Rules{Decks: 1, Piles: 7, Foundations: 4, Draw: 1, Passes: 1, Sequences: true,
			Flip: FlipAuto, Autocomplete: AutocompleteOffered, Scoring: ScoringNone}},
	{ID: "klondike-draw3", Name: "Klondike (draw 3)", Source: "seed 001 (variant)", DrawChoices: []int{3},
		Defaults: Rules{Decks: 1, Piles: 7, Foundations: 4, Draw: 3, Passes: 3, Sequences: true,
			Flip: FlipAuto, Autocomplete: AutocompleteOffered, Scoring: ScoringNone}},
	{ID: "klassik", Name: "Solitaire Klassik", Source: "seed 002", DrawChoices: []int{3},
		Defaults: Rules{Decks: 1, Piles: 7, Foundations: 4, Draw: 3, Passes: 0, Sequences: true, TakeBack: true,
			Flip: FlipPlayer, Autocomplete: AutocompleteOffered, Scoring: ScoringKlassik, TimeLimitS: 300}},
	{ID: "relaxed", Name: "Relaxed Klondike", Source: "seed 003", DrawChoices: []int{1, 3},
		Defaults: Rules{Decks: 1, Piles: 7, Foundations: 4, Draw: 1, Passes: 0, Sequences: true, TakeBack: true,
			Flip: FlipPlayer, Autocomplete: AutocompleteAutomatic, Scoring: ScoringNone, Undo: true}},
	{ID: "tripleharp", Name: "Tripleharp", Source: "seed 000", DrawChoices: []int{1},
		Defaults: Rules{Decks: 3, Piles: 12, Foundations: 12, Draw: 1, Passes: 4, Sequences: false, TakeBack: true,
			Flip: FlipAuto, Autocomplete: AutocompleteOffered, Scoring: ScoringNone}},
	{ID: "harp", Name: "Harp", Source: "seed 000's two-deck sibling", DrawChoices: []int{1},
		Defaults: Rules{Decks: 2, Piles: 9, Foundations: 8, Draw: 1, Passes: 4, Sequences: false, TakeBack: true,
			Flip: FlipAuto, Autocomplete: AutocompleteOffered, Scoring: ScoringNone}},
}

func init() {
	for i := range variants {
		variants[i].Defaults.Variant = variants[i].ID
	}
}

// Variants returns a copy of the R3 table, in table order.
func Variants() []Variant {
	out := make([]Variant, len(variants))
	copy(out, variants)
	for i := range out {
		out[i].DrawChoices = append([]int(nil), out[i].DrawChoices...)
	}
	return out
}

// LookupVariant returns the variant with that id, or *UnknownVariantError.
func LookupVariant(id string) (Variant, error) {
	for _, v := range variants {
		if v.ID == id {
			return v, nil
		}
	}
	return Variant{}, &UnknownVariantError{ID: id}
}

// Options are what a client may set when it creates a game (R3 "Options a
// client may set"). A nil field keeps the variant's default.
type Options struct {
	Draw         *int              `json:"draw,omitempty"`         // 1 or 3, where the variant offers the choice
	Scoring      *Scoring          `json:"scoring,omitempty"`      // none|klassik|standard|vegas; not none only with 1 deck
	TakeBack     *bool             `json:"take_back,omitempty"`    // R2.3
	Flip         *FlipMode         `json:"flip,omitempty"`         // auto|player
	Autocomplete *AutocompleteMode `json:"autocomplete,omitempty"` // offered|automatic
	TimeLimitS   *int              `json:"time_limit_s,omitempty"` // 0 (none) or MinTimeLimitS..MaxTimeLimitS
	Undo         *bool             `json:"undo,omitempty"`         // R2.5
}

// Bounds of the time_limit_s option, in seconds (R5.3).
const (
	MinTimeLimitS = 10
	MaxTimeLimitS = 86400
)

// Resolve applies o to the variant's defaults and validates the result. It
// returns the rules, whether the game is ranked (no option differs from the
// default except a draw the variant offers, R3), and an *OptionError naming
// the first refused option.
func (v Variant) Resolve(o Options) (Rules, bool, error) {
	r := v.Defaults
	if o.Draw != nil {
		ok := false
		for _, d := range v.DrawChoices {
			ok = ok || d == *o.Draw
		}
		if !ok {
			return Rules{}, false, &OptionError{Option: "draw",
				Detail: fmt.Sprintf("%s deals %s", v.ID, v.DrawChoiceText())}
		}
		r.Draw = *o.Draw
	}
	if o.Scoring != nil {
		switch *o.Scoring {
		case ScoringNone, ScoringKlassik, ScoringStandard, ScoringVegas:
		default:
			return Rules{}, false, &OptionError{Option: "scoring", Detail: "want none, klassik, standard or vegas"}
		}
		if *o.Scoring != ScoringNone && r.Decks != 1 {
			return Rules{}, false, &OptionError{Option: "scoring", Detail: "scoring applies to one-deck variants only (R3)"}
		}
		r.Scoring = *o.Scoring
	}
	if o.TakeBack != nil {
		r.TakeBack = *o.TakeBack
	}
	if o.Flip != nil {
		if *o.Flip != FlipAuto && *o.Flip != FlipPlayer {
			return Rules{}, false, &OptionError{Option: "flip", Detail: "want auto or player"}
		}
		r.Flip = *o.Flip
	}
	if o.Autocomplete != nil {
		if *o.Autocomplete != AutocompleteOffered && *o.Autocomplete != AutocompleteAutomatic {
			return Rules{}, false, &OptionError{Option: "autocomplete", Detail: "want offered or automatic"}
		}
		r.Autocomplete = *o.Autocomplete
	}
	if o.TimeLimitS != nil {
		t := *o.TimeLimitS
		if t != 0 && (t < MinTimeLimitS || t > MaxTimeLimitS) {
			return Rules{}, false, &OptionError{Option: "time_limit_s",
				Detail: fmt.Sprintf("want 0 (no limit) or %d..%d seconds", MinTimeLimitS, MaxTimeLimitS)}
		}
		r.TimeLimitS = t
	}
	if o.Undo != nil {
		r.Undo = *o.Undo
	}
	ranked := r == withDraw(v.Defaults, r.Draw)
	return r, ranked, nil
}

func withDraw(r Rules, d int) Rules { r.Draw = d; return r }

// DrawChoiceText lists the draw counts a client may choose, for messages:
// "1", or "1 or 3".
func (v Variant) DrawChoiceText() string {
	s := ""
	for i, x := range v.DrawChoices {
		if i > 0 {
			s += " or "
		}
		s += strconv.Itoa(x)
	}
	return s
}

// tableauCards is the number of cards the deal puts in the tableau:
// 1+2+…+Piles (R3 "tableau deal").
func (r Rules) tableauCards() int { return r.Piles * (r.Piles + 1) / 2 }

// Validate checks that r describes a playable Klondike-family game: 1..3
// decks, 4 foundations per deck (R1.4), 1..13 tableau piles whose deal
// (1..Piles cards) fits the pack, draw 1 or 3 (R2.1), passes 0..100, known
// flip, autocomplete and scoring words, scoring only with one deck (R3), a
// time limit of 0 or MinTimeLimitS..MaxTimeLimitS. It guards the first
// event of a log, so a forged deal cannot make replay allocate without
// bound. Errors are *OptionError.
func (r Rules) Validate() error {
	bad := func(opt, detail string) error { return &OptionError{Option: opt, Detail: detail} }
	switch {
	case r.Decks < 1 || r.Decks > 3:
		return bad("decks", "want 1..3")
	case r.Foundations != 4*r.Decks:
		return bad("foundations", "want 4 per deck")
	case r.Piles < 1 || r.Piles > 13 || r.tableauCards() > r.Cards():
		return bad("piles", "want 1..13 piles whose deal fits the pack")
	case r.Draw != 1 && r.Draw != 3:
		return bad("draw", "want 1 or 3")
	case r.Passes < 0 || r.Passes > 100:
		return bad("passes", "want 0 (unlimited) to 100")
	case r.Flip != FlipAuto && r.Flip != FlipPlayer:
		return bad("flip", "want auto or player")
	case r.Autocomplete != AutocompleteOffered && r.Autocomplete != AutocompleteAutomatic:
		return bad("autocomplete", "want offered or automatic")
	case r.Scoring != ScoringNone && r.Scoring != ScoringKlassik && r.Scoring != ScoringStandard && r.Scoring != ScoringVegas:
		return bad("scoring", "want none, klassik, standard or vegas")
	case r.Scoring != ScoringNone && r.Decks != 1:
		return bad("scoring", "scoring applies to one-deck variants only (R3)")
	case r.TimeLimitS != 0 && (r.TimeLimitS < MinTimeLimitS || r.TimeLimitS > MaxTimeLimitS):
		return bad("time_limit_s", "want 0 or 10..86400")
	}
	return nil
}
