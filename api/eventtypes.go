package api

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"

	"github.com/openpatience/solitaire/domain"
)

// Event is one entry of a game's log, in the wire form of
// domain.ExportedEvent (the same fields in the same order): the game, the
// 1-based version, the type, the server's time, the payload
// (domain.EventData) and the hash chain links (domain.EventHash, lower-case
// hex). data is the stored payload byte for byte, so anyone can recompute
// hash from prev_hash, game_id, version, type, occurred_at and data, and an
// NDJSON export of a game that has ended is exactly what `solitaire audit`
// verifies offline.
//
// The spec describes Event as a oneOf of one schema per type with a
// discriminator on type, each with its own payload (GameDealtData and the
// rest below); the JSON is the same either way. Go code reads any payload
// into domain.EventData, whose encoding is the one definition of every
// payload (TestEventPayloadsAreTheirTypes checks the spec's types on it).
//
// While the game is in progress a game_dealt event is redacted (RULES
// R6.4): its deal lists no face-down or stock card and no salt, and
// data.hidden gives their counts. Its hash is still that of the stored
// payload, which holds the game's secret salt (R6.8): every later link can
// be checked at once, the deal's own hash once the deal is shown whole.
// On a log whose deal carries no salt (deal payload version 1) hash and
// prev_hash are empty strings until then (domain.ChainShown).
type Event struct {
	GameID     string           `json:"game_id"` // the game, bound into every hash
	Version    int              `json:"version" minimum:"1"`
	Type       string           `json:"type"` // the event type, which says what data holds
	OccurredAt string           `json:"occurred_at" format:"date-time"`
	Data       domain.EventData `json:"data" swaggertype:"object"`                                                            // the payload, as its type says
	PrevHash   string           `json:"prev_hash" example:"0000000000000000000000000000000000000000000000000000000000000000"` // hash of the previous event, 64 hex digits; all zeros for version 1; "" while a deal without salt is hidden (R6.8)
	Hash       string           `json:"hash" example:"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`      // this event's chain link, 64 hex digits; "" while a deal without salt is hidden (R6.8)

	// raw is the data as sent, the stored payload. MarshalJSON writes it
	// in place of Data; a redacted deal (newEvent) and an Event decoded
	// from JSON have none and write Data.
	raw json.RawMessage
} // @name Event

// MarshalJSON writes the event as json.Marshal writes the
// domain.ExportedEvent of the same fields, with data the raw payload the
// event was made from (see Event), else Data.
func (e Event) MarshalJSON() ([]byte, error) {
	data := e.raw
	if data == nil {
		b, err := json.Marshal(e.Data)
		if err != nil {
			return nil, err
		}
		data = b
	}
	return json.Marshal(domain.ExportedEvent{GameID: e.GameID, Version: e.Version, Type: domain.EventType(e.Type),
		OccurredAt: e.OccurredAt, Data: data, PrevHash: e.PrevHash, Hash: e.Hash})
}

// line is the event's JSON on one line, as MarshalJSON writes it but with
// data exactly the stored bytes: json.Marshal compacts a RawMessage, which
// would hide a whitespace-only change to a stored event from the offline
// audit of an export while the online audit reports it. A payload holding
// a line break (the server writes none) is sent as null so that the line
// stays one line; its hash shows the chain broken there, as online.
func (e Event) line() ([]byte, error) {
	if e.raw == nil {
		return json.Marshal(e)
	}
	data := e.raw
	if bytes.ContainsAny(data, "\r\n") {
		data = nullData
	}
	head, err := json.Marshal(domain.ExportedEvent{GameID: e.GameID, Version: e.Version, Type: domain.EventType(e.Type),
		OccurredAt: e.OccurredAt, Data: nullData, PrevHash: e.PrevHash, Hash: e.Hash})
	if err != nil {
		return nil, err
	}
	// Quotes inside string values are escaped, so the key's one
	// occurrence is the field itself.
	const key = `,"data":null,"prev_hash":`
	i := bytes.Index(head, []byte(key))
	if i < 0 {
		return nil, errors.New("api: event line without its data field")
	}
	out := make([]byte, 0, len(head)+len(data))
	out = append(append(append(out, head[:i+len(`,"data":`)]...), data...), head[i+len(`,"data":null`):]...)
	return out, nil
}

// EventRules are the rules a game is played with, as recorded in its first
// event (RULES R3, R6.2). passes and time_limit_s are 0 for no limit.
type EventRules struct {
	Variant      string `json:"variant"`
	Decks        int    `json:"decks"`
	Piles        int    `json:"piles"`
	Foundations  int    `json:"foundations"`
	Draw         int    `json:"draw"`
	Passes       int    `json:"passes"`
	Sequences    bool   `json:"sequences"`
	TakeBack     bool   `json:"take_back"`
	Flip         string `json:"flip"`
	Autocomplete string `json:"autocomplete"`
	Scoring      string `json:"scoring"`
	TimeLimitS   int    `json:"time_limit_s"`
	Undo         bool   `json:"undo"`
} // @name EventRules

// Deal is the position a game started from (RULES R6.2): tableau piles
// (face-down then face-up cards, each bottom first) and the stock (the
// card drawn first, first). Redacted while the game is in progress.
type Deal struct {
	Tableau     []LayoutPile `json:"tableau"`
	Stock       []string     `json:"stock"`
	Waste       []string     `json:"waste,omitempty"`
	Foundations [][]string   `json:"foundations,omitempty"`
	Recycles    int          `json:"recycles,omitempty"`
} // @name Deal

// Hidden gives the counts of the cards a redacted deal leaves out: face-down
// cards per tableau pile and the stock.
type Hidden struct {
	FaceDown []int `json:"face_down"`
	Stock    int   `json:"stock"`
} // @name Hidden

// EventPage is a page of a game's log, oldest first. next_after is the
// `after` of the next page, null on the last one.
type EventPage struct {
	Events    []Event `json:"events"`
	NextAfter *int    `json:"next_after" extensions:"x-nullable"`
} // @name EventPage

// nullData stands in for a stored payload that is not JSON at all (a log
// changed in the database): the event is still listed, and its hash, over
// the stored bytes, shows the chain broken there.
var nullData = json.RawMessage("null")

// logView is how a reader sees a game's log at present: redact hides the
// deal's face-down cards, stock and salt (RULES R6.4, R6.6), hideHashes
// blanks every hash of a chain whose deal carries no salt (R6.8). fresh
// says the records are the ones Store.Append has just returned: their
// payloads are the rules' own encoding (domain.EncodePayload), valid JSON
// by construction, so newEvent need not check them as it checks bytes
// read back from the database.
type logView struct{ redact, hideHashes, fresh bool }

// viewOf is the logView of a game whose deal may be revealed or not
// (app.Games.Reveal), in state st (nil: its log does not load).
func viewOf(reveal bool, st *domain.State) logView {
	return logView{redact: !reveal, hideHashes: !domain.ChainShown(reveal, st)}
}

// newEvent renders a recorded event as v says: with v.redact (the game is
// in progress) a game_dealt event is redacted (RULES R6.4); every other
// event carries its stored payload verbatim. It never fails: a payload
// that does not decode is sent as data null (redacted) or as stored, and
// one that is not JSON as data null, unless v.fresh says it is the rules'
// own encoding.
func newEvent(r domain.RecordedEvent, v logView) Event {
	out := Event{GameID: r.GameID, Version: r.Version, Type: string(r.Type), OccurredAt: domain.FormatTime(r.OccurredAt),
		PrevHash: hex.EncodeToString(r.PrevHash), Hash: hex.EncodeToString(r.Hash), raw: r.Payload}
	if v.hideHashes {
		out.PrevHash, out.Hash = "", ""
	}
	// The first event is the deal whatever its stored type says: a type
	// changed in the database must not unredact it.
	if v.redact && (r.Type == domain.EventGameDealt || r.Version == 1) {
		e, err := domain.DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload)
		if err != nil || e.Data.Deal == nil {
			out.raw = nullData // nothing of it may be shown while in progress
			return out
		}
		out.Data, out.raw = domain.RedactEvent(e).Data, nil
		return out
	}
	if !v.fresh && !json.Valid(out.raw) {
		out.raw = nullData
	}
	return out
}

// The payload of each event type, as the spec describes it: Event.data is
// the JSON of domain.EventData with only the fields of the event's type
// (the rest are omitted). domain.EventData owns that JSON; these types
// only describe it, and TestEventPayloadsAreTheirTypes holds them to it:
// every payload of played games decodes strictly into its type's struct
// and encodes back to the same bytes, every key a struct declares occurs,
// and the table matches domain.EventTypes. docs/gen builds the spec's
// Event as a oneOf of one schema per type, with a discriminator on type,
// from EventTypes.
//
// To add an event type: add its constant to domain (and to
// domain.EventTypes), its payload type here (embedding EventMeta, named
// <Name>Data, a field per key its payload carries; omitempty on a key it
// may leave out) and a field to EventTypes named as the type is on the
// wire; then `go generate ./...`.

// EventMeta are the keys every payload has: the payload version, the
// 1-based number of the command that caused the event (0 for the deal),
// and auto, present and true when the server did it unasked (an auto flip,
// autocomplete, the win).
type EventMeta struct {
	V    int  `json:"v" minimum:"1"`    // payload version
	Move int  `json:"move" minimum:"0"` // number of the command that caused it; 0 for the deal
	Auto bool `json:"auto,omitempty"`   // done by the server (auto flip, autocomplete, win)
}

// GameDealtData is game_dealt, the first event (RULES R6.2): the rules,
// the deal and the commitment to it (R6.4), and from payload version 2 the
// commitment's salt (R6.8). While the game is in progress the deal lists
// no face-down or stock card and no salt, and hidden gives their counts.
type GameDealtData struct {
	EventMeta
	Rules      EventRules `json:"rules"`
	Deal       Deal       `json:"deal"`
	Commitment string     `json:"commitment" example:"sha256:0f1e…"` // R6.4
	Salt       string     `json:"salt,omitempty" example:"5e2b…"`    // payload version 2, once the deal is revealed: hex of the commitment's 32-byte salt, which the deal's hash covers (R6.8)
	Hidden     *Hidden    `json:"hidden,omitempty"`                  // only while the deal is redacted

	Winnable           bool   `json:"winnable,omitempty"`                                   // present and true on a proven winnable deal (R7.2)
	SolutionCommitment string `json:"solution_commitment,omitempty" example:"sha256:7a3c…"` // winnable: SHA-256 over the canonical winning line and the salt (R7.2)
	Difficulty         string `json:"difficulty,omitempty" enums:"easy,medium,hard,expert"` // winnable: the deal's band (R7.5)
} // @name GameDealtData

// StockDrawnData is stock_drawn (R2.1): count cards from the stock to the
// waste, in draw order.
type StockDrawnData struct {
	EventMeta
	Count int      `json:"count" minimum:"1"`
	Cards []string `json:"cards" example:"7D"` // R1.1 codes, in draw order
} // @name StockDrawnData

// StockRecycledData is stock_recycled (R2.1): the waste of count cards
// turned over as the new stock.
type StockRecycledData struct {
	EventMeta
	Count int `json:"count,omitempty" minimum:"1"` // cards turned over
} // @name StockRecycledData

// CardsMovedData is cards_moved (R2.2, R2.3, R2.6): count cards from one
// pile to another, bottom first.
type CardsMovedData struct {
	EventMeta
	From  string   `json:"from" example:"tableau/3"`  // API pile name
	To    string   `json:"to" example:"foundation/0"` // API pile name
	Count int      `json:"count" minimum:"1"`         // cards moved
	Cards []string `json:"cards" example:"QH"`        // R1.1 codes, bottom first
} // @name CardsMovedData

// CardFlippedData is card_flipped (R2.4): the top card of a tableau pile
// turned face up.
type CardFlippedData struct {
	EventMeta
	Pile string `json:"pile" example:"tableau/2"` // API pile name
	Card string `json:"card" example:"KH"`        // R1.1 code
} // @name CardFlippedData

// MoveUndoneData is move_undone (R2.5): the turn that started at version
// undone reverted.
type MoveUndoneData struct {
	EventMeta
	Undone  int           `json:"undone" minimum:"1"` // first version of the undone turn
	Changes []EventChange `json:"changes,omitempty"`  // payload version 2: what the undo did to the piles, in order (absent in version 1 logs)
} // @name MoveUndoneData

// MoveRedoneData is move_redone (R2.9): the turn that the undo at version
// redone reverted, re-applied.
type MoveRedoneData struct {
	EventMeta
	Redone  int           `json:"redone" minimum:"1"` // version of the move_undone it takes back
	Changes []EventChange `json:"changes,omitempty"`  // payload version 2: what the redo did to the piles, in order (absent in version 1 logs)
} // @name MoveRedoneData

// EventChange is one thing an undo or a redo did to the piles (RULES R2.5,
// R2.9; domain.Change), so a frontend animates it from the event alone:
// either cards (bottom first, as they land) moved from one pile to
// another, or the top card of a tableau pile turned up or down. Every card
// it names has been face up before. The score and clock after the undo or
// redo are the move answer's game's.
type EventChange struct {
	From  string   `json:"from,omitempty" example:"waste"`     // a move: the pile the cards leave (API pile name)
	To    string   `json:"to,omitempty" example:"stock"`       // a move: the pile they land on
	Cards []string `json:"cards,omitempty" example:"7D"`       // a move: R1.1 codes, bottom first as they land
	Pile  string   `json:"pile,omitempty" example:"tableau/2"` // a turn: the tableau pile
	Card  string   `json:"card,omitempty" example:"KH"`        // a turn: the card turned
	Turn  string   `json:"turn,omitempty" enums:"up,down"`     // a turn: which way
} // @name EventChange

// GameWonData is game_won (R2.8): every card on the foundations.
type GameWonData struct {
	EventMeta
} // @name GameWonData

// GameResignedData is game_resigned (R2.7): the player gave up; the game
// is lost.
type GameResignedData struct {
	EventMeta
} // @name GameResignedData

// GameExpiredData is game_expired (R5.3): the clock ran out at deadline.
type GameExpiredData struct {
	EventMeta
	Deadline string `json:"deadline" format:"date-time" example:"2026-11-29T20:32:08.123Z"` // when the time limit ran out
} // @name GameExpiredData

// HintGivenData is hint_given (RULES R7.3): a hint was asked for and
// answered. It is not a move: move is the number of the last command, and
// it changes no pile. From it on the game is unranked. hint is the move
// answered, present exactly when verdict is winnable.
type HintGivenData struct {
	EventMeta
	Verdict string       `json:"verdict" enums:"winnable,unwinnable,unknown"` // the verdict on the position (R7.1)
	Hint    *MoveRequest `json:"hint,omitempty"`                              // the move answered; only when winnable
} // @name HintGivenData

// EventTypes is the table of event types: one field per type, named as
// Event.type names it, of the type of its payload. docs/gen reads it (from
// the doc-only operation eventTypesDoc) to build Event's oneOf.
type EventTypes struct {
	GameDealt     GameDealtData     `json:"game_dealt"`
	StockDrawn    StockDrawnData    `json:"stock_drawn"`
	StockRecycled StockRecycledData `json:"stock_recycled"`
	CardsMoved    CardsMovedData    `json:"cards_moved"`
	CardFlipped   CardFlippedData   `json:"card_flipped"`
	MoveUndone    MoveUndoneData    `json:"move_undone"`
	MoveRedone    MoveRedoneData    `json:"move_redone"`
	GameWon       GameWonData       `json:"game_won"`
	GameResigned  GameResignedData  `json:"game_resigned"`
	GameExpired   GameExpiredData   `json:"game_expired"`
	HintGiven     HintGivenData     `json:"hint_given"`
} // @name EventTypes

// eventTypesDoc is no route: swag describes only the types an operation
// uses, so this operation hands it EventTypes; docs/gen takes the table
// and removes the operation (x-schemas) from the spec.
//
//	@Summary	Event types (spec generator only; not served)
//	@Tags		x-schemas
//	@Success	200	{object}	EventTypes
//	@ID			xEventTypes
//	@Router		/x-schemas/event-types [get]
func eventTypesDoc() {}

var _ = eventTypesDoc
