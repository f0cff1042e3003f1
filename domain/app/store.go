package app

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// DealSecret is a deal's commitment and the secrets behind it, as a game,
// a duel and a daily deal each hold them: Seed and Salt, and for a deal
// proven winnable its Solution, never leave the server until the deal may
// be revealed (R6.4, R6.6).
type DealSecret struct {
	Seed       uint64 // the deal's seed (R6.1); 0 for an explicit layout (Game.HasSeed false)
	Salt       []byte // 32 random bytes of the commitment (R6.4)
	Commitment string // Commitment(deal, Salt)
	// Winnable: dealt from a deal proven winnable (R7.2); statistics keep
	// these games apart from random deals. Solution is the winning line
	// and Difficulty its R7.5 band; both are zero otherwise.
	Winnable   bool
	Solution   []domain.Move
	Difficulty domain.Band
}

// CloneSecret copies d, sharing no memory with it. (Not Clone: Game, Duel
// and DailyDeal embed DealSecret, and game.Clone() must not compile to a
// copy of the secret alone.)
func (d DealSecret) CloneSecret() DealSecret {
	d.Salt, d.Solution = bytes.Clone(d.Salt), slices.Clone(d.Solution)
	return d
}

// proof is the proof a winnable deal passes to each game dealt from it
// (NewGame.Proof); nil for a random deal.
func (d DealSecret) proof() *domain.ProvenDeal {
	if !d.Winnable {
		return nil
	}
	return &domain.ProvenDeal{Seed: d.Seed, Line: d.Solution, Difficulty: d.Difficulty}
}

// Game is a stream's record: who owns the game, how it was made, and the
// projection of its state kept for listing and rankings. The DealSecret's
// secrets never leave the server while the game is in progress (R6.4).
type Game struct {
	ID      string         // opaque id, 1..64 characters
	Variant string         // variant id (R3)
	Rules   domain.Rules   // resolved rules
	Options domain.Options // options as the client gave them
	Owner   string         // player id
	Ranked  bool           // R3: default options, dealt from a server seed; false from the first hint on (R7.3)
	DealSecret
	HasSeed bool // false for an explicit layout (R6.5)
	// CompetitionID names the shared deal the game is on: a duel's id
	// (R6.3), or for a daily game its daily deal's (DailyDealID, with
	// DailyDate set); "" for a game on a deal of its own.
	CompetitionID string
	DailyDate     string // "2006-01-02" for a daily deal, "" if none
	Deal          string // numbered deal in canonical form, "pysolfc:<number>" (R6.7); "" if none
	// SolutionCommitment is the commitment of a winnable deal's Solution
	// (SolutionCommitment(Solution, Salt)); "" unless Winnable.
	SolutionCommitment string
	CreatedAt          time.Time // UTC, ms

	// Projection is the summary of the state after the latest event.
	Projection
}

// Projection is what a game's record keeps of the state after its latest
// event: the columns a listing, a leaderboard or a move's answer reads
// without replaying the log. It is computed once per append, by the
// service (ProjectionOf), and handed to the store with the state.
type Projection struct {
	Status     domain.Status
	Version    int
	Moves      int
	Score      *int  // nil for scoring none
	ElapsedMS  int64 // playing time so far (at the latest event)
	FinishedAt *time.Time
	UpdatedAt  time.Time
}

// ProjectionOf is the projection of s: its status, version and moves, its
// last event's time, the playing time and score at that time (R4, R5),
// and when it ended, if it has.
func ProjectionOf(s *domain.State) Projection {
	p := Projection{Status: s.Status, Version: s.Version, Moves: s.Moves, UpdatedAt: s.LastAt,
		ElapsedMS: s.Elapsed(s.LastAt).Milliseconds()}
	if v, ok := s.ScoreAt(s.LastAt); ok {
		p.Score = &v
	}
	if s.Status.Ended() {
		t := s.EndedAt
		p.FinishedAt = &t
	}
	return p
}

// After is what an append leads to: the state after its last event and
// that state's projection, ProjectionOf(State) (AfterOf makes one).
// The store writes the projection to the game's record and may keep both.
type After struct {
	State      *domain.State
	Projection Projection
}

// AfterOf is s with its projection.
func AfterOf(s *domain.State) After { return After{State: s, Projection: ProjectionOf(s)} }

// Project sets g's projection to s's (ProjectionOf). A state with a hint
// in its log makes the game unranked (R7.3).
func (g *Game) Project(s *domain.State) { g.project(AfterOf(s)) }

// project sets g's projection to a's, which a's state gives.
func (g *Game) project(a After) {
	if a.State.Hinted {
		g.Ranked = false
	}
	g.Projection = a.Projection
}

// GameFilter selects games for a listing, newest first. Zero fields do not
// filter. Limit is 1..MaxListLimit (PageSize); Cursor is opaque, "" for the
// first page.
type GameFilter struct {
	Owner   string
	Status  domain.Status
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

// GameReader is the read side of the event store: the logs and the game
// records as stored, for exports, audits, replays, live streams and lists
// (Games.Log, Games.List, Games.Record). Reads change nothing.
type GameReader interface {
	// Events returns up to limit recorded events with version > after, in
	// order. An unknown id gives domain.ErrNotFound.
	Events(ctx context.Context, gameID string, after, limit int) ([]domain.RecordedEvent, error)
	// List returns games matching f, newest first, and the cursor of the
	// next page ("" at the end).
	List(ctx context.Context, f GameFilter) ([]Game, string, error)
	// Game returns the game record alone, without replaying its log, so
	// that a game whose log no longer replays (an event changed in the
	// database) can still be audited and exported as stored. domain.ErrNotFound
	// if none.
	Game(ctx context.Context, gameID string) (*Game, error)
}

// Store is the event store the rules need; persistence implements it on
// PostgreSQL and on the embedded database alike: the write side (Create,
// Append) and the state a command is decided on (Load), and the read side
// (GameReader).
type Store interface {
	GameReader
	// Create stores a new stream: the game record, whose projection is
	// s's (Game.Project), and its first event (version 1, game_dealt), s
	// being the state after it. It fails with domain.ErrConflict if the id exists.
	// A receipt (nil: none) is stored in the same transaction, naming the
	// game and version 1; if its key is taken, nothing is written and the
	// error is ErrReceiptTaken.
	Create(ctx context.Context, g *Game, first domain.Event, s *domain.State, receipt *Receipt) error
	// Append adds events (versions expected+1 …) to the stream in one
	// transaction, chained to the stream's head, and updates the game's
	// projection from after (the state with the events applied, and its
	// projection). It
	// returns the records it stored (hashes included, Position set where
	// the store knows it), one per event, in order; they are the caller's.
	// after.State is the store's from the call on (a cache may keep it as
	// it is, without a copy): the caller may read it and must not change
	// it.
	// If the stream's version is not expected it writes nothing and
	// returns domain.ErrConflict; an unknown id gives domain.ErrNotFound. A receipt
	// (nil: none) is stored in the same transaction, naming the game and
	// the versions appended, so that a retry of the request is answered
	// from the log and never appends again (RELIABILITY.md "Outages"); if
	// its key is taken, nothing is written and the error is
	// ErrReceiptTaken.
	Append(ctx context.Context, gameID string, expected int, events []domain.Event, after After, receipt *Receipt) ([]domain.RecordedEvent, error)
	// Load returns the game record and its current state, rebuilt from the
	// newest snapshot and the events after it. domain.ErrNotFound if none.
	Load(ctx context.Context, gameID string) (*Game, *domain.State, error)
}

// CommandLoader is a Store that can load a game for a command without the
// check Load makes that the state is the stream's newest: from a state it
// keeps (a cache), at no cost to the database. Games.Play uses it when the
// Store has it (one statement per move). A state older than the
// log does no harm there: events decided on it are appended with its
// version as the expected one, so Append refuses them (domain.ErrConflict) and
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
	// The game is the caller's; the state may be shared with the store (a
	// cache's own), so the caller reads it and changes only a copy
	// (domain.Decide never changes its state). Errors: domain.ErrNotFound,
	// or the store's.
	LoadForCommand(ctx context.Context, gameID string) (g *Game, s *domain.State, verified bool, err error)
}

// Player is someone who plays: an id, a display name and the SHA-256 of the
// bearer token; the token itself is never stored.
type Player struct {
	ID        string    // opaque, 1..64 characters
	Name      string    // 1..64 characters
	TokenHash []byte    // SHA-256 of the token, 32 bytes
	CreatedAt time.Time // UTC, ms
}

// PlayerStore keeps players.
type PlayerStore interface {
	// CreatePlayer stores p; domain.ErrConflict if the id or token hash exists.
	CreatePlayer(ctx context.Context, p *Player) error
	// PlayerByTokenHash finds the player whose token hashes to hash;
	// domain.ErrNotFound if none.
	PlayerByTokenHash(ctx context.Context, hash []byte) (*Player, error)
}

// Receipt is the mark a request with an idempotency key leaves in the
// store (RELIABILITY.md "Outages"): the store writes it in the same transaction
// as the events the request appends, so a request whose events are in
// the log is always recognised when it comes again (after a crash or a
// lost answer), and its answer is rebuilt from the log instead of the
// move being applied a second time.
type Receipt struct {
	Owner       string    // the player who sent the request (1..64 characters)
	Key         string    // the client's Idempotency-Key, 1..255 characters
	Fingerprint []byte    // identifies the request (the API: SHA-256 of method, path and body)
	CreatedAt   time.Time // UTC, whole milliseconds
	ExpiresAt   time.Time // after this the key may be reused; at least 24 h after CreatedAt
}

// ErrReceiptTaken: a Receipt's (Owner, Key) is already stored and not
// expired: another request with the same key was written first. Nothing
// was written; the caller answers with what the stored receipt names.
var ErrReceiptTaken = errors.New("idempotency key already used")

// IdempotencyRecord is the stored outcome of a request sent with an
// Idempotency-Key (README "The API in brief"), by owner (a player id) and
// key (1..255 characters): a retry with the same key and Fingerprint (a
// SHA-256 of the request) gets the same answer, and never applies a
// command twice. Either Body holds the answer itself (Status its HTTP
// status), or, for a move or a creation, GameID names the game and
// FirstVersion..LastVersion the events the request appended (the answer
// is rendered again from them; Body empty). CreatedAt and ExpiresAt are
// UTC, kept in whole milliseconds; the record counts until ExpiresAt.
type IdempotencyRecord struct {
	Owner, Key  string
	Fingerprint []byte
	Status      int
	Body        []byte
	CreatedAt   time.Time
	ExpiresAt   time.Time
	GameID      string
	// FirstVersion and LastVersion are the versions of the events the
	// request appended (0 when GameID is "").
	FirstVersion, LastVersion int
}
