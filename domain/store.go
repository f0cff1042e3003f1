package domain

import (
	"context"
	"time"
)

// Game is a stream's record: who owns the game, how it was made, and the
// projection of its state kept for listing and rankings. The secret fields
// (Seed, Salt) never leave the server while the game is in progress (R6.4).
type Game struct {
	ID         string    // opaque id, 1..64 characters
	Variant    string    // variant id (R3)
	Rules      Rules     // resolved rules
	Options    Options   // options as the client gave them
	Owner      string    // player id
	Ranked     bool      // R3: default options, dealt from a server seed
	Seed       uint64    // the deal's seed (R6.1); 0 with HasSeed false for a layout
	HasSeed    bool      // false for an explicit layout (R6.5)
	Salt       []byte    // 32 random bytes of the commitment (R6.4)
	Commitment string    // Commitment(deal, Salt)
	DuelID     string    // same-deal duel, "" if none (R6.3)
	DailyDate  string    // "2006-01-02" for a daily deal, "" if none
	Deal       string    // numbered deal in canonical form, "pysolfc:<number>" (R6.7); "" if none
	CreatedAt  time.Time // UTC, ms

	// Projection of the state after the latest event.
	Status     Status
	Version    int
	Moves      int
	Score      *int  // nil for scoring none
	ElapsedMS  int64 // playing time so far (at the latest event)
	FinishedAt *time.Time
	UpdatedAt  time.Time
}

// Project copies the summary of s into g's projection fields.
func (g *Game) Project(s *State) {
	g.Status = s.Status
	g.Version = s.Version
	g.Moves = s.Moves
	g.UpdatedAt = s.LastAt
	g.ElapsedMS = s.Elapsed(s.LastAt).Milliseconds()
	g.Score = nil
	if v, ok := s.ScoreAt(s.LastAt); ok {
		g.Score = &v
	}
	g.FinishedAt = nil
	if s.Status.Ended() {
		t := s.EndedAt
		g.FinishedAt = &t
	}
}

// GameFilter selects games for a listing, newest first. Zero fields do not
// filter. Limit is 1..MaxListLimit (PageSize); Cursor is opaque, "" for the
// first page.
type GameFilter struct {
	Owner   string
	Status  Status
	Variant string
	Limit   int
	Cursor  string
}

// Bounds of a listing's page (GameFilter.Limit).
const (
	DefaultListLimit = 50
	MaxListLimit     = 500
)

// PageSize is how many games a page of f holds at most: Limit, or
// DefaultListLimit below 1, MaxListLimit above it.
func (f GameFilter) PageSize() int {
	switch {
	case f.Limit < 1:
		return DefaultListLimit
	case f.Limit > MaxListLimit:
		return MaxListLimit
	}
	return f.Limit
}

// Store is the event store the rules need; persistence implements it on
// PostgreSQL and on the embedded database alike.
type Store interface {
	// Create stores a new stream: the game record and its first event
	// (version 1, game_dealt). It fails with ErrConflict if the id exists.
	Create(ctx context.Context, g *Game, first Event, s *State) error
	// Append adds events (versions expected+1 …) to the stream in one
	// transaction, chained to the stream's head, and updates the game's
	// projection from after (the state with the events applied). If the
	// stream's version is not expected it writes nothing and returns
	// ErrConflict; an unknown id gives ErrNotFound.
	Append(ctx context.Context, gameID string, expected int, events []Event, after *State) error
	// Load returns the game record and its current state, rebuilt from the
	// newest snapshot and the events after it. ErrNotFound if none.
	Load(ctx context.Context, gameID string) (*Game, *State, error)
	// Events returns up to limit recorded events with version > after, in
	// order. An unknown id gives ErrNotFound.
	Events(ctx context.Context, gameID string, after, limit int) ([]RecordedEvent, error)
	// List returns games matching f, newest first, and the cursor of the
	// next page ("" at the end).
	List(ctx context.Context, f GameFilter) ([]Game, string, error)
}

// CommandLoader is a Store that can load a game for a command without the
// check Load makes that the state is the stream's newest: from a copy it
// keeps (a cache), at no cost to the database. Games.Play uses it when the
// Store has it (one statement per move). A state older than the
// log does no harm there: events decided on it are appended with its
// version as the expected one, so Append refuses them (ErrConflict) and
// Play decides again on Load's state; and every answer other than a
// committed append (a refused move, a stale If-Match version) is given
// only after Play has checked it on Load's state. A successful Append at
// version v proves the state was the log's: the log had exactly v events,
// and events never change.
type CommandLoader interface {
	// LoadForCommand returns the game and a state the stream had at some
	// version, possibly older than its newest; verified is true when it
	// came from Load (it was the newest when read). The game's identity
	// (owner, rules, ...) is exact; its projection follows the state.
	// Errors: ErrNotFound, or the store's.
	LoadForCommand(ctx context.Context, gameID string) (g *Game, s *State, verified bool, err error)
}

// Player is someone who plays: an id, a display name and the SHA-256 of the
// bearer token (API.md "Auth"); the token itself is never stored.
type Player struct {
	ID        string    // opaque, 1..64 characters
	Name      string    // 1..64 characters
	TokenHash []byte    // SHA-256 of the token, 32 bytes
	CreatedAt time.Time // UTC, ms
}

// PlayerStore keeps players.
type PlayerStore interface {
	// CreatePlayer stores p; ErrConflict if the id or token hash exists.
	CreatePlayer(ctx context.Context, p *Player) error
	// PlayerByTokenHash finds the player whose token hashes to hash;
	// ErrNotFound if none.
	PlayerByTokenHash(ctx context.Context, hash []byte) (*Player, error)
}
