// Package domaintest holds an in-memory implementation of the domain's
// store interfaces, for tests: the same guarantees as the databases behind
// package persistence (the conformance suite, persistence/storetest, runs
// on all three), in one process and without persistence. Standard library
// only, as all of domain.
package domaintest

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// MemStore keeps games, their event logs and players in memory. It
// implements app.Store and app.PlayerStore with the guarantees the
// interfaces state: appends are all or nothing under an expected version
// (ErrConflict otherwise), each event chained to the previous one by
// domain.EventHash from domain.GenesisHash, one daily game per owner,
// variant and day. Load replays the whole log. The zero value is not
// ready: use NewMemStore. Safe for concurrent use.
type MemStore struct {
	mu       sync.Mutex
	games    map[string]*memGame
	players  map[string]app.Player // by id
	position int64                 // the last global event position given out
}

type memGame struct {
	rec    app.Game
	events []domain.RecordedEvent
}

var (
	_ app.Store       = (*MemStore)(nil)
	_ app.PlayerStore = (*MemStore)(nil)
)

// NewMemStore returns an empty store.
func NewMemStore() *MemStore {
	return &MemStore{games: map[string]*memGame{}, players: map[string]app.Player{}}
}

// copyGame copies g's record, sharing no memory with it.
func copyGame(g app.Game) app.Game {
	g.Salt = bytes.Clone(g.Salt)
	if g.Score != nil {
		v := *g.Score
		g.Score = &v
	}
	if g.FinishedAt != nil {
		t := *g.FinishedAt
		g.FinishedAt = &t
	}
	return g
}

// checkEvents refuses events that cannot follow version expected of a log
// as given (a plain error, neither ErrConflict nor ErrNotFound, as the
// databases answer such arguments).
func checkEvents(expected int, events []domain.Event, after *domain.State) error {
	switch {
	case len(events) == 0:
		return errors.New("domaintest: append: no events")
	case after == nil:
		return errors.New("domaintest: append: no state after the events")
	case after.Version != expected+len(events):
		return fmt.Errorf("domaintest: append: state after at version %d, want %d", after.Version, expected+len(events))
	}
	for i, e := range events {
		if e.Version != expected+1+i {
			return fmt.Errorf("domaintest: append: event %d has version %d, want %d", i, e.Version, expected+1+i)
		}
		if e.OccurredAt.Location() != time.UTC || !e.OccurredAt.Equal(domain.Millis(e.OccurredAt)) {
			return fmt.Errorf("domaintest: append: event %d time %v is not whole UTC milliseconds", e.Version, e.OccurredAt)
		}
		payload, err := domain.EncodePayload(e)
		if err != nil {
			return err
		}
		if _, err := domain.DecodeEvent(e.Version, e.Type, e.OccurredAt, payload); err != nil {
			return err // an unknown type
		}
	}
	return nil
}

// record chains events after the log's head and gives them positions; the
// caller holds mu.
func (m *MemStore) record(g *memGame, events []domain.Event) ([]domain.RecordedEvent, error) {
	prev := domain.GenesisHash
	if n := len(g.events); n > 0 {
		prev = g.events[n-1].Hash
	}
	recs, err := domain.Record(g.rec.ID, prev, events)
	if err != nil {
		return nil, err
	}
	for i := range recs {
		m.position++
		recs[i].Position = m.position
	}
	g.events = append(g.events, recs...)
	return slices.Clone(recs), nil
}

// Create stores a new stream: g's record and its first event (version 1,
// game_dealt), keeping no receipt (as Append). Errors: ErrConflict if the id exists, or the owner already
// has a daily game of g's variant and day; a plain error for a first event
// that is not game_dealt at version 1.
func (m *MemStore) Create(_ context.Context, g *app.Game, first domain.Event, s *domain.State, _ *app.Receipt) error {
	if g == nil || g.ID == "" || first.Version != 1 || first.Type != domain.EventGameDealt {
		return errors.New("domaintest: create: a record with an id and a game_dealt event at version 1 required")
	}
	if err := checkEvents(0, []domain.Event{first}, s); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.games[g.ID]; ok {
		return domain.ErrConflict
	}
	if g.DailyDate != "" {
		for _, o := range m.games {
			if o.rec.Owner == g.Owner && o.rec.Variant == g.Variant && o.rec.DailyDate == g.DailyDate {
				return domain.ErrConflict
			}
		}
	}
	mg := &memGame{rec: copyGame(*g)}
	mg.rec.Project(s)
	if _, err := m.record(mg, []domain.Event{first}); err != nil {
		return err
	}
	m.games[g.ID] = mg
	return nil
}

// Append adds events after version expected, all or nothing, and projects
// after onto the record, and returns the records it stored. It keeps no
// Receipt (the API's idempotency keys live in the real stores only).
// Errors: ErrNotFound for an unknown id, ErrConflict
// if the stream is not at version expected, a plain error for events that
// cannot follow expected (no events, a gap, an unknown type, a time not in
// whole UTC milliseconds, after at another version).
func (m *MemStore) Append(_ context.Context, gameID string, expected int, events []domain.Event, after app.After, _ *app.Receipt) ([]domain.RecordedEvent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.games[gameID]
	if !ok {
		return nil, domain.ErrNotFound
	}
	if err := checkEvents(expected, events, after.State); err != nil {
		return nil, err
	}
	if len(g.events) != expected {
		return nil, domain.ErrConflict
	}
	recs, err := m.record(g, events)
	if err != nil {
		return nil, err
	}
	if after.State.Hinted {
		g.rec.Ranked = false // R7.3
	}
	g.rec.Projection = after.Projection
	return recs, nil
}

// Load returns the game's record and its state, replayed from the whole
// log. Errors: ErrNotFound; a plain error for a log that does not replay.
func (m *MemStore) Load(_ context.Context, gameID string) (*app.Game, *domain.State, error) {
	m.mu.Lock()
	g, ok := m.games[gameID]
	var (
		rec  app.Game
		recs []domain.RecordedEvent
	)
	if ok {
		rec, recs = copyGame(g.rec), slices.Clone(g.events)
	}
	m.mu.Unlock()
	if !ok {
		return nil, nil, domain.ErrNotFound
	}
	evs := make([]domain.Event, len(recs))
	for i, r := range recs {
		e, err := domain.DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload)
		if err != nil {
			return nil, nil, err
		}
		evs[i] = e
	}
	st, bad := domain.Replay(evs)
	if bad != 0 {
		return nil, nil, fmt.Errorf("domaintest: game %s does not replay at version %d: %s", gameID, bad, st.Fault)
	}
	return &rec, st, nil
}

// Game returns the game's record without its log. Errors: ErrNotFound.
func (m *MemStore) Game(_ context.Context, gameID string) (*app.Game, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.games[gameID]
	if !ok {
		return nil, domain.ErrNotFound
	}
	rec := copyGame(g.rec)
	return &rec, nil
}

// Events returns up to limit recorded events with version > after, in
// order (limit below 1: all of them). Errors: ErrNotFound.
func (m *MemStore) Events(_ context.Context, gameID string, after, limit int) ([]domain.RecordedEvent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.games[gameID]
	if !ok {
		return nil, domain.ErrNotFound
	}
	out := []domain.RecordedEvent{}
	for _, r := range g.events[min(max(after, 0), len(g.events)):] {
		if limit > 0 && len(out) == limit {
			break
		}
		r.Payload, r.PrevHash, r.Hash = bytes.Clone(r.Payload), bytes.Clone(r.PrevHash), bytes.Clone(r.Hash)
		out = append(out, r)
	}
	return out, nil
}

// VerifyChain checks the game's log with domain.VerifyChain and against
// the record's version. It returns 0 if all is well, else the first broken
// version. Errors: ErrNotFound.
func (m *MemStore) VerifyChain(ctx context.Context, gameID string) (int, error) {
	recs, err := m.Events(ctx, gameID, 0, 0)
	if err != nil {
		return 0, err
	}
	rec, err := m.Game(ctx, gameID)
	if err != nil {
		return 0, err
	}
	if v := domain.VerifyChain(gameID, recs); v != 0 {
		return v, nil
	}
	if len(recs) != rec.Version {
		return min(len(recs), rec.Version) + 1, nil
	}
	return 0, nil
}

// memCursor is the position after which a listing's next page starts.
type memCursor struct {
	At int64  `json:"t"` // CreatedAt in Unix milliseconds
	ID string `json:"id"`
}

// List returns the games matching f, newest first (CreatedAt, then id,
// both descending), and the cursor of the next page ("" at the end).
// Errors: app.ErrBadCursor for a cursor List did not make.
func (m *MemStore) List(_ context.Context, f app.GameFilter) ([]app.Game, string, error) {
	limit := f.PageSize()
	var from *memCursor
	if f.Cursor != "" {
		var c memCursor
		b, err := base64.RawURLEncoding.DecodeString(f.Cursor)
		if err != nil || json.Unmarshal(b, &c) != nil || c.ID == "" {
			return nil, "", app.ErrBadCursor
		}
		from = &c
	}
	m.mu.Lock()
	var all []app.Game
	for _, g := range m.games {
		r := g.rec
		if (f.Owner == "" || r.Owner == f.Owner) && (f.Status == "" || r.Status == f.Status) &&
			(f.Variant == "" || r.Variant == f.Variant) {
			all = append(all, copyGame(r))
		}
	}
	m.mu.Unlock()
	slices.SortFunc(all, func(a, b app.Game) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	out := []app.Game{}
	for _, g := range all {
		at := g.CreatedAt.UnixMilli()
		if from != nil && (at > from.At || at == from.At && g.ID >= from.ID) {
			continue
		}
		if len(out) == limit {
			last := out[len(out)-1]
			b, _ := json.Marshal(memCursor{At: last.CreatedAt.UnixMilli(), ID: last.ID})
			return out, base64.RawURLEncoding.EncodeToString(b), nil
		}
		out = append(out, g)
	}
	return out, "", nil
}

// CreatePlayer stores p. Errors: ErrConflict if its id or token hash
// exists.
func (m *MemStore) CreatePlayer(_ context.Context, p *app.Player) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.players {
		if o.ID == p.ID || bytes.Equal(o.TokenHash, p.TokenHash) {
			return domain.ErrConflict
		}
	}
	c := *p
	c.TokenHash = bytes.Clone(p.TokenHash)
	m.players[p.ID] = c
	return nil
}

// PlayerByTokenHash finds the player whose token hashes to hash. Errors:
// ErrNotFound.
func (m *MemStore) PlayerByTokenHash(_ context.Context, hash []byte) (*app.Player, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, p := range m.players {
		if bytes.Equal(p.TokenHash, hash) {
			c := p
			c.TokenHash = bytes.Clone(p.TokenHash)
			return &c, nil
		}
	}
	return nil, domain.ErrNotFound
}
