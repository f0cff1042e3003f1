package domain

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// EventType is the stable name of an event in the log. Persisted: never
// rename or reuse one; a changed payload gets a new EventData.V.
type EventType string

// The events of a game, in past tense.
const (
	EventGameDealt     EventType = "game_dealt"     // first event: rules and the full deal (R6.2)
	EventStockDrawn    EventType = "stock_drawn"    // R2.1: Count cards stock -> waste (Cards, in draw order)
	EventStockRecycled EventType = "stock_recycled" // R2.1: the waste (Count cards) turned over as the stock
	EventCardsMoved    EventType = "cards_moved"    // R2.2, R2.3, R2.6: Count cards From -> To (Cards, bottom first)
	EventCardFlipped   EventType = "card_flipped"   // R2.4: the top card of Pile turned face up (Card)
	EventMoveUndone    EventType = "move_undone"    // R2.5: the turn starting at version Undone reverted
	EventMoveRedone    EventType = "move_redone"    // R2.9: the turn the undo at version Redone reverted, re-applied
	EventGameWon       EventType = "game_won"       // R2.8
	EventGameResigned  EventType = "game_resigned"  // R2.7
	EventGameExpired   EventType = "game_expired"   // R5.3: the clock ran out at Deadline
	EventHintGiven     EventType = "hint_given"     // R7.3: a hint was asked for (Verdict, Hint); not a move
)

// PayloadVersion is the version of EventData written by this code for
// every event but game_dealt.
const PayloadVersion = 1

// DealPayloadVersion is the version of a game_dealt payload written by
// this code. Version 2 adds salt (R6.8): the payload, and so every hash of
// the chain from the deal on, covers the game's 256-bit secret, revealed
// only with the deal. A version 1 deal payload has no salt; its hash is a
// function of the cards alone (see ChainShown).
const DealPayloadVersion = 2

// Event is one entry of a game's stream. Version is its 1-based position in
// the stream; OccurredAt is the server's UTC time in whole milliseconds
// (R5.1).
type Event struct {
	Version    int       `json:"version"`
	Type       EventType `json:"type"`
	OccurredAt time.Time `json:"occurred_at"`
	Data       EventData `json:"data"`
}

// EventData is the payload of every event type; each type uses the fields
// its comment names and leaves the rest zero. Encoded as JSON with zero
// fields omitted (see EncodePayload). Its JSON is the one definition of an
// event's data: stored, hashed, and sent by the API as it is (the API's
// per-type description of it is tested against real payloads).
type EventData struct {
	V    int  `json:"v"`              // payload version, PayloadVersion
	Move int  `json:"move"`           // 1-based number of the command that caused it; 0 for the deal
	Auto bool `json:"auto,omitempty"` // done by the server, not asked for (auto flip, autocomplete, win)

	Rules      *Rules    `json:"rules,omitempty"`      // game_dealt
	Deal       *Position `json:"deal,omitempty"`       // game_dealt (redacted while in progress, see RedactEvent)
	Commitment string    `json:"commitment,omitempty"` // game_dealt (R6.4)
	Salt       string    `json:"salt,omitempty"`       // game_dealt from DealPayloadVersion 2: hex of the commitment's 32-byte salt (R6.8); redacted with the deal
	Hidden     *Hidden   `json:"hidden,omitempty"`     // game_dealt when redacted

	// game_dealt of a winnable deal (R7.2, R7.5): the flag, the commitment
	// to one winning line (SolutionCommitment) and the deal's band. The
	// line itself is never in the log; the audit reveals it (R6.4, R6.6).
	Winnable           bool   `json:"winnable,omitempty"`
	SolutionCommitment string `json:"solution_commitment,omitempty"`
	Difficulty         Band   `json:"difficulty,omitempty"`

	From  PileRef `json:"from,omitzero"`   // cards_moved
	To    PileRef `json:"to,omitzero"`     // cards_moved
	Pile  PileRef `json:"pile,omitzero"`   // card_flipped
	Count int     `json:"count,omitempty"` // stock_drawn, stock_recycled, cards_moved
	Cards []Card  `json:"cards,omitempty"` // stock_drawn, cards_moved: the (face-up) cards moved
	Card  *Card   `json:"card,omitempty"`  // card_flipped: the card turned up

	Undone   int        `json:"undone,omitempty"`   // move_undone: first version of the undone turn
	Redone   int        `json:"redone,omitempty"`   // move_redone: version of the move_undone it takes back
	Changes  []Change   `json:"changes,omitempty"`  // move_undone, move_redone from UndoPayloadVersion 2: what it did to the piles, in order
	Deadline *time.Time `json:"deadline,omitempty"` // game_expired

	Verdict Verdict `json:"verdict,omitempty"` // hint_given: winnable, unwinnable or unknown (R7.1)
	Hint    *Move   `json:"hint,omitempty"`    // hint_given: the move answered, only when winnable
}

// Hidden replaces the face-down cards and the stock of a redacted deal by
// their counts (R6.4).
type Hidden struct {
	FaceDown []int `json:"face_down"` // per tableau pile
	Stock    int   `json:"stock"`
}

// EncodePayload returns the canonical JSON of e.Data: the bytes stored in
// the log and covered by the hash chain (chain.go), json.Marshal's. The
// payloads of the moves themselves (draws, card moves, flips, recycles,
// undos and redos without changes) are written by plainPayload, the same
// bytes without reflection (TestPlainPayloadIsJSONMarshal).
func EncodePayload(e Event) ([]byte, error) {
	if b, ok := plainPayload(&e.Data); ok {
		return b, nil
	}
	return json.Marshal(e.Data)
}

// DecodeEvent rebuilds an event from its stored parts. It returns an error
// for an unknown type or a payload that is not valid JSON for EventData; it
// does not check that the event fits any state (Apply does).
func DecodeEvent(version int, typ EventType, occurredAt time.Time, payload []byte) (Event, error) {
	if !typ.Known() {
		return Event{}, fmt.Errorf("domain: unknown event type %s", quoteShort(string(typ)))
	}
	e := Event{Version: version, Type: typ, OccurredAt: occurredAt.UTC()}
	if err := json.Unmarshal(payload, &e.Data); err != nil {
		return Event{}, fmt.Errorf("domain: event %d payload: %w", version, err)
	}
	return e, nil
}

// eventTypes are the constants above, in their order.
var eventTypes = []EventType{EventGameDealt, EventStockDrawn, EventStockRecycled, EventCardsMoved, EventCardFlipped,
	EventMoveUndone, EventMoveRedone, EventGameWon, EventGameResigned, EventGameExpired, EventHintGiven}

// EventTypes returns every event type, in the order of the constants: the
// types DecodeEvent accepts, so the API's description of each type's
// payload can be checked to cover exactly these.
func EventTypes() []EventType { return slices.Clone(eventTypes) }

// Known reports whether t is one of the event types (EventTypes), the
// types DecodeEvent accepts: a store refuses to append any other, whose
// event it could not read back.
func (t EventType) Known() bool { return slices.Contains(eventTypes, t) }

// undoable reports whether an event starting a turn puts it on the undo
// record (R2.5): the pile-changing moves. Undo, redo, resign and the end
// events are not undoable (a redo puts the turn it re-applies back on the
// record itself, R2.9).
func (t EventType) undoable() bool {
	switch t {
	case EventStockDrawn, EventStockRecycled, EventCardsMoved, EventCardFlipped:
		return true
	}
	return false
}

// Millis truncates t to whole milliseconds in UTC, the resolution of event
// times (R5.1).
func Millis(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
