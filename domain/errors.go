package domain

import (
	"errors"
	"fmt"
)

// Sentinel errors for fixed conditions. Callers test them with errors.Is.
var (
	// ErrNotFound: no game (or other record) with that id, or the caller may
	// not see it.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the stream's version is not the expected one; another
	// writer appended first. Nothing was written.
	ErrConflict = errors.New("version conflict")
	// ErrGameOver: the game has ended (won, lost, resigned or expired) and
	// takes no further command (R2.8, R2.5). A *MoveError with reason
	// ReasonGameOver matches it.
	ErrGameOver = errors.New("game over")
	// ErrTimeExpired: the command came after the deadline (R5.3). A
	// *MoveError with reason ReasonTimeExpired matches it.
	ErrTimeExpired = errors.New("time expired")
)

// Reason is a stable machine word saying why a move was rejected. Clients
// switch on these: never rename one (the problem's reason, README "The
// API in brief").
type Reason string

// The reasons a move is rejected. Each names the rule it enforces.
const (
	ReasonUnknownType        Reason = "unknown_move_type"          // R2: type not one of R2's commands
	ReasonBadPile            Reason = "bad_pile"                   // R1.3: unparsable pile name
	ReasonNoSuchPile         Reason = "no_such_pile"               // R1.3/R3: index beyond the variant's piles
	ReasonBadCount           Reason = "bad_count"                  // R2.2: count < 1 or absurd
	ReasonBadSource          Reason = "bad_source"                 // R2.2/R2.3: a move may not start there
	ReasonBadDestination     Reason = "bad_destination"            // R2.2/R2.3: a move may not end there
	ReasonSamePile           Reason = "same_pile"                  // R2.2: from equals to
	ReasonEmptyPile          Reason = "empty_pile"                 // R2.2: nothing to move
	ReasonNotARun            Reason = "not_a_run"                  // R1.6: count exceeds the face-up run
	ReasonSingleCardOnly     Reason = "single_card_to_foundation"  // R1.6: only single cards go to a foundation
	ReasonOnlyTopWasteCard   Reason = "only_top_waste_card"        // R1.3: only the waste's top card is playable, one at a time
	ReasonTakeBackOneCard    Reason = "take_back_one_card"         // R2.3: a take-back moves one card
	ReasonSequenceNotAllowed Reason = "sequence_moves_not_allowed" // R3: variant moves single cards only
	ReasonCardDoesNotFit     Reason = "card_does_not_fit"          // R1.4, R1.5
	ReasonOnlyKingOnEmpty    Reason = "only_king_on_empty"         // R1.5
	ReasonFaceDownTop        Reason = "face_down_card_on_top"      // R1.5: nothing is placed on a face-down card
	ReasonNoFaceDownCard     Reason = "no_face_down_card"          // R2.4
	ReasonFlipIsAutomatic    Reason = "flip_is_automatic"          // R2.4, R3 flip=auto
	ReasonNothingToDraw      Reason = "nothing_to_draw"            // R2.1: stock and waste empty
	ReasonNoPassesLeft       Reason = "no_passes_left"             // R2.1, R3 passes
	ReasonTakeBackNotAllowed Reason = "take_back_not_allowed"      // R2.3
	ReasonUseTakeBack        Reason = "use_take_back"              // R2.2/R2.3: foundation cards leave only by take-back
	ReasonNothingToUndo      Reason = "nothing_to_undo"            // R2.5
	ReasonNothingToRedo      Reason = "nothing_to_redo"            // R2.9: no undo since the last other move
	ReasonUndoNotAllowed     Reason = "undo_not_allowed"           // R3 option undo
	ReasonCannotAutocomplete Reason = "autocomplete_not_possible"  // R2.6
	ReasonGameOver           Reason = "game_over"                  // R2.8, R2.5
	ReasonTimeExpired        Reason = "time_expired"               // R5.3
	ReasonIllegal            Reason = "illegal_move"               // fallback: not in LegalMoves
)

// MoveError is a rejected command: the move as sent and a stable Reason.
// Detail is a human sentence for the problem's "detail"; it never contains
// hidden information (R6.4).
type MoveError struct {
	Move   Move
	Reason Reason
	Detail string
}

// Error is "illegal move: <reason>[: <detail>]".
func (e *MoveError) Error() string {
	if e.Detail != "" {
		return "illegal move: " + string(e.Reason) + ": " + e.Detail
	}
	return "illegal move: " + string(e.Reason)
}

// Is lets errors.Is(err, ErrGameOver) and errors.Is(err, ErrTimeExpired)
// match the corresponding reasons.
func (e *MoveError) Is(target error) bool {
	switch target {
	case ErrGameOver:
		return e.Reason == ReasonGameOver
	case ErrTimeExpired:
		return e.Reason == ReasonTimeExpired
	}
	return false
}

// OptionError is a game option the variant does not accept (R3 "Options a
// client may set"). Option is the option's name ("draw", "scoring", ...).
type OptionError struct {
	Option string
	Detail string
}

// Error is "invalid option <name>: <detail>".
func (e *OptionError) Error() string { return "invalid option " + e.Option + ": " + e.Detail }

// LayoutError is an invalid explicit layout or position text (R6.5). Where
// says which part (a pile, a card, the stock) and Reason is a stable word:
// bad_card, bad_syntax, pile_count, card_count, not_a_run, face_down_top,
// seed_and_layout.
type LayoutError struct {
	Where  string
	Reason string
	Detail string
}

// Error is "invalid layout: <reason>[ at <where>][: <detail>]".
func (e *LayoutError) Error() string {
	s := "invalid layout: " + e.Reason
	if e.Where != "" {
		s += " at " + e.Where
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// UnknownVariantError is a variant id that is not in the table of R3.
type UnknownVariantError struct{ ID string }

// Error is "unknown variant <id>" with the id quoted and shortened.
func (e *UnknownVariantError) Error() string {
	return fmt.Sprintf("unknown variant %s", quoteShort(e.ID))
}
