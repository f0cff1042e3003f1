package api

// The payload of each event type, as the spec describes it: Event.data is
// the JSON of domain.EventData with only the fields of the event's type
// (the rest are omitted). docs/gen builds the spec's Event as a oneOf of
// one schema per type, with a discriminator on type, from EventTypes.
//
// To add an event type: add its payload type here (embedding EventMeta,
// named <Name>Data, a field per key its payload carries; omitempty on a key
// it may leave out) and a field to EventTypes named as the type is on the
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
