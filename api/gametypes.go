package api

import (
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// Card is one playing card (RULES R1.1): its two-character code, rank 1..13
// (A=1, J=11, Q=12, K=13) and suit.
type Card struct {
	Code string `json:"code" example:"TD" minLength:"2" maxLength:"2"` // rank A23456789TJQK then suit CDHS (R1.1)
	Rank int    `json:"rank" example:"10" minimum:"1" maximum:"13"`    // A=1, J=11, Q=12, K=13
	Suit string `json:"suit" example:"diamonds" enums:"clubs,diamonds,hearts,spades"`
} // @name Card

// CardList is a pile of face-up cards, bottom first.
type CardList struct {
	Cards []Card `json:"cards"`
} // @name CardList

// Stock is the stock pile: its size, and once the game has ended its cards,
// the card drawn first, first (Game in openapi.yaml).
type Stock struct {
	Count int    `json:"count" minimum:"0"`                  // cards in the stock
	Cards []Card `json:"cards,omitzero" validate:"optional"` // only once the game has ended: the card drawn first, first
} // @name Stock

// Passes counts trips through the stock (RULES R3, R2.1). used is the
// number of the pass in progress, counting from 1: a new game is in its
// first pass (used 1) before any draw, and each recycle of the waste
// starts the next. limit is null where passes are unlimited; recycles_left
// is how many recycles are still allowed (limit − used), null where
// unlimited: 0 means the stock, once empty, stays empty.
type Passes struct {
	Used         int  `json:"used" minimum:"1"`                                  // the pass in progress, from 1 (a new game is in pass 1)
	Limit        *int `json:"limit" minimum:"1" extensions:"x-nullable"`         // passes allowed; null: unlimited
	RecyclesLeft *int `json:"recycles_left" minimum:"0" extensions:"x-nullable"` // recycles still allowed; null: unlimited
} // @name Passes

// Competition names the shared-deal competition a game belongs to (RULES
// R6.3, R6.6): a duel (GET /v1/duels/{id}) or a daily deal
// (GET /v1/daily/{variant}?date={date}).
type Competition struct {
	Kind string  `json:"kind" enums:"duel,daily"`                                         // which kind
	ID   string  `json:"id"`                                                              // the duel's id, or the daily deal's ("daily:<variant>:<date>")
	Date *string `json:"date" format:"date" example:"2026-11-29" extensions:"x-nullable"` // daily: the UTC date; null for a duel
} // @name Competition

// TableauPile is one tableau pile: the number of face-down cards, the
// face-up cards bottom first, and once the game has ended the face-down
// cards too, bottom first.
type TableauPile struct {
	FaceDown      int    `json:"face_down" minimum:"0"`                        // number of face-down cards
	Cards         []Card `json:"cards"`                                        // face-up cards, bottom first
	FaceDownCards []Card `json:"face_down_cards,omitzero" validate:"optional"` // only once the game has ended: the face-down cards, bottom first
} // @name TableauPile

// GameOptions are the rules a game is played with (RULES R3): the
// variant's defaults with the options given at creation applied. passes
// and time_limit_s are null where there is no limit.
type GameOptions struct {
	Draw         int    `json:"draw" enums:"1,3"`                                                  // cards turned per draw (R2.1)
	Passes       *int   `json:"passes" minimum:"1" extensions:"x-nullable"`                        // trips through the stock; null: unlimited
	Scoring      string `json:"scoring" enums:"none,klassik,standard,vegas"`                       // R4
	TakeBack     bool   `json:"take_back"`                                                         // foundation cards may come back (R2.3)
	Flip         string `json:"flip" enums:"auto,player"`                                          // who turns face-down cards up (R2.4)
	Autocomplete string `json:"autocomplete" enums:"offered,automatic"`                            // R2.6
	TimeLimitS   *int   `json:"time_limit_s" minimum:"10" maximum:"86400" extensions:"x-nullable"` // seconds; null: none (R5.3)
	Undo         bool   `json:"undo"`                                                              // undo allowed (R2.5)
} // @name GameOptions

// Game is a game as a client sees it (Game in openapi.yaml). While the game is
// in progress face-down cards and the stock appear only as counts (RULES
// R6.4). Times are RFC 3339 UTC with milliseconds.
type Game struct {
	ID          string        `json:"id"`                         // opaque id
	Variant     string        `json:"variant" example:"klondike"` // variant id (GET /v1/variants)
	Options     GameOptions   `json:"options"`
	Status      string        `json:"status" enums:"in_progress,won,lost,expired"`           // in_progress until the game ends once (R2.8)
	Version     int           `json:"version" minimum:"1"`                                   // events in the log; the ETag
	Moves       int           `json:"moves" minimum:"0"`                                     // commands accepted, undos included (R2.5)
	Score       *int          `json:"score" extensions:"x-nullable"`                         // null for scoring none (R4.1)
	StartedAt   *string       `json:"started_at" format:"date-time" extensions:"x-nullable"` // when the clock started (R5.2); null before
	ElapsedMS   int64         `json:"elapsed_ms" minimum:"0"`                                // playing time in milliseconds (R5.2)
	Deadline    *string       `json:"deadline" format:"date-time" extensions:"x-nullable"`   // when the time limit runs out (R5.3); null without one
	Stock       Stock         `json:"stock"`
	Passes      Passes        `json:"passes"`
	Waste       CardList      `json:"waste"`                             // face-up, bottom first; the last card is playable
	WasteFanned int           `json:"waste_fanned" minimum:"0"`          // the top waste cards to show fanned out, the playable one last: the cards of the latest draw still on the waste (draw 3: up to 3), at least 1 when the waste is not empty
	Foundations []CardList    `json:"foundations"`                       // bottom (ace) first
	Tableau     []TableauPile `json:"tableau"`                           // tableau piles, 0 first
	CanUndo     bool          `json:"can_undo"`                          // an undo would be accepted now (R2.5)
	CanRedo     bool          `json:"can_redo"`                          // a redo would be accepted now (R2.9)
	Commitment  string        `json:"commitment" example:"sha256:0f1e…"` // SHA-256 over the deal and a secret salt, published at creation (R6.4)
	Ranked      bool          `json:"ranked"`                            // counts for statistics: default options (a draw choice aside) and a server seed (R3)
	CreatedAt   string        `json:"created_at" format:"date-time"`     // when the game was dealt

	Deal *string `json:"deal" example:"pysolfc:12345" extensions:"x-nullable"` // the numbered deal it was dealt from (R6.7); null for any other game

	Competition *Competition `json:"competition" extensions:"x-nullable"` // the duel or daily deal the game belongs to; null for any other game

	LegalMoves []MoveRequest `json:"legal_moves,omitempty"` // only with ?include=legal_moves: every move the game accepts now, as GET /v1/games/{id}/legal-moves lists them (empty once it has ended)

	Winnable           bool    `json:"winnable"`                                                           // dealt from a deal proven winnable (R7.2)
	SolutionCommitment *string `json:"solution_commitment" example:"sha256:7a3c…" extensions:"x-nullable"` // winnable: SHA-256 over the canonical winning line and the salt, published at creation (R7.2); null otherwise
	Difficulty         *string `json:"difficulty" enums:"easy,medium,hard,expert" extensions:"x-nullable"` // winnable: the deal's band (R7.5); null otherwise
} // @name Game

// GameSummary is a game in a listing: its record without the piles.
type GameSummary struct {
	ID         string      `json:"id"`      // opaque id
	Variant    string      `json:"variant"` // variant id (GET /v1/variants)
	Options    GameOptions `json:"options"`
	Status     string      `json:"status" enums:"in_progress,won,lost,expired"`                        // in_progress until the game ends once (R2.8)
	Version    int         `json:"version" minimum:"1"`                                                // events in the log; the ETag
	Moves      int         `json:"moves" minimum:"0"`                                                  // commands accepted, undos included (R2.5)
	Score      *int        `json:"score" extensions:"x-nullable"`                                      // null for scoring none (R4.1)
	ElapsedMS  int64       `json:"elapsed_ms" minimum:"0"`                                             // playing time in milliseconds (R5.2)
	Ranked     bool        `json:"ranked"`                                                             // counts for statistics: default options (a draw choice aside) and a server seed (R3)
	Deal       *string     `json:"deal" example:"pysolfc:12345" extensions:"x-nullable"`               // the numbered deal it was dealt from (R6.7); null for any other game
	Winnable   bool        `json:"winnable"`                                                           // dealt from a deal proven winnable (R7.2)
	Difficulty *string     `json:"difficulty" enums:"easy,medium,hard,expert" extensions:"x-nullable"` // winnable: the deal's band (R7.5); null otherwise
	CreatedAt  string      `json:"created_at" format:"date-time"`                                      // when the game was dealt
	UpdatedAt  string      `json:"updated_at" format:"date-time"`                                      // time of the latest event
	FinishedAt *string     `json:"finished_at" format:"date-time" extensions:"x-nullable"`             // when the game ended; null while in progress
} // @name GameSummary

// GameList is one page of the caller's games, newest first. next_cursor is
// null on the last page.
type GameList struct {
	Games      []GameSummary `json:"games"`
	NextCursor *string       `json:"next_cursor" extensions:"x-nullable"` // cursor of the next page; null on the last
} // @name GameList

func newCard(c domain.Card) Card {
	return Card{Code: c.String(), Rank: c.Rank(), Suit: c.Suit().String()}
}

func newCards(cs []domain.Card) []Card {
	out := make([]Card, len(cs))
	for i, c := range cs {
		out[i] = newCard(c)
	}
	return out
}

// cardArena hands out the card lists of one answer from one allocation.
type cardArena []Card

// cards is newCards(cs) cut from the arena (a new list once it is used
// up): empty but not nil for no cards, as newCards.
func (a *cardArena) cards(cs []domain.Card) []Card {
	if len(cs) > cap(*a)-len(*a) {
		return newCards(cs)
	}
	n := len(*a)
	*a = (*a)[:n+len(cs)]
	out := (*a)[n : n+len(cs) : n+len(cs)]
	for i, c := range cs {
		out[i] = newCard(c)
	}
	return out
}

func timePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := domain.FormatTime(*t)
	return &s
}

func positive(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

func newGameOptions(r domain.Rules) GameOptions {
	return GameOptions{Draw: r.Draw, Passes: positive(r.Passes), Scoring: string(r.Scoring),
		TakeBack: r.TakeBack, Flip: string(r.Flip), Autocomplete: string(r.Autocomplete),
		TimeLimitS: positive(r.TimeLimitS), Undo: r.Undo}
}

// newGame renders state s of game g as seen at instant now. reveal lists
// the face-down cards and the stock, also where s itself is a state from
// before the end: a replayed state of a game that has since ended (every
// view of an ended game, current, states/{version} and events, lists them).
// Without reveal they show only as counts, even in an ended state: the
// caller decides with app.Games.Reveal (R6.4, R6.6).
func newGame(g *app.Game, s *domain.State, now time.Time, reveal bool) Game {
	v := domain.NewView(s, now)
	total := len(v.Waste)
	for _, f := range v.Foundations {
		total += len(f)
	}
	for _, p := range v.Tableau {
		total += len(p.Cards)
	}
	arena := make(cardArena, 0, total)
	out := Game{ID: g.ID, Variant: g.Variant, Options: newGameOptions(v.Rules), Status: string(v.Status),
		Version: v.Version, Moves: v.Moves, Score: v.Score, StartedAt: timePtr(v.StartedAt),
		ElapsedMS: v.ElapsedMS, Deadline: timePtr(v.Deadline),
		Stock:  Stock{Count: v.StockCount},
		Passes: newPasses(v),
		Waste:  CardList{Cards: arena.cards(v.Waste)}, WasteFanned: v.WasteFanned, Competition: competitionOf(g),
		CanUndo: v.CanUndo, CanRedo: v.CanRedo, Commitment: v.Commitment, Ranked: g.Ranked, Deal: dealOf(g),
		CreatedAt: domain.FormatTime(g.CreatedAt),
		Winnable:  g.Winnable, SolutionCommitment: nonEmpty(g.SolutionCommitment), Difficulty: nonEmpty(g.Difficulty)}
	out.Foundations = make([]CardList, len(v.Foundations))
	for i, f := range v.Foundations {
		out.Foundations[i] = CardList{Cards: arena.cards(f)}
	}
	out.Tableau = make([]TableauPile, len(v.Tableau))
	for i, p := range v.Tableau {
		out.Tableau[i] = TableauPile{FaceDown: p.FaceDown, Cards: arena.cards(p.Cards)}
	}
	if !reveal {
		return out
	}
	pos := s.Position()
	out.Stock.Cards = newCards(pos.Stock)
	for i, p := range pos.Tableau {
		out.Tableau[i].FaceDownCards = newCards(p.Down)
	}
	return out
}

// newPasses renders the passes of view v.
func newPasses(v domain.View) Passes {
	p := Passes{Used: v.PassesUsed, Limit: positive(v.PassLimit)}
	if v.PassLimit > 0 {
		left := max(v.PassLimit-v.PassesUsed, 0)
		p.RecyclesLeft = &left
	}
	return p
}

// competitionOf names the competition of game g, nil if none. A daily
// game's CompetitionID is its daily deal's id (app.DailyDealID).
func competitionOf(g *app.Game) *Competition {
	switch {
	case g.DailyDate != "":
		day := g.DailyDate
		return &Competition{Kind: "daily", ID: g.CompetitionID, Date: &day}
	case g.CompetitionID != "":
		return &Competition{Kind: "duel", ID: g.CompetitionID}
	}
	return nil
}

// nonEmpty is s, nil for "".
func nonEmpty[S ~string](s S) *string {
	if s == "" {
		return nil
	}
	v := string(s)
	return &v
}

// dealOf is the game's numbered deal (R6.7), nil for any other game.
func dealOf(g *app.Game) *string {
	if g.Deal == "" {
		return nil
	}
	d := g.Deal
	return &d
}

func newGameSummary(g *app.Game) GameSummary {
	return GameSummary{ID: g.ID, Variant: g.Variant, Options: newGameOptions(g.Rules), Status: string(g.Status),
		Version: g.Version, Moves: g.Moves, Score: g.Score, ElapsedMS: g.ElapsedMS, Ranked: g.Ranked,
		Deal: dealOf(g), Winnable: g.Winnable, Difficulty: nonEmpty(g.Difficulty),
		CreatedAt: domain.FormatTime(g.CreatedAt), UpdatedAt: domain.FormatTime(g.UpdatedAt),
		FinishedAt: timePtr(g.FinishedAt)}
}
