// Package storetest is the conformance suite of the event store: one set
// of tests over the store ports of domain/app (Run) that every store must
// pass, run against PostgreSQL, the embedded SQLite (persistence's
// store_test.go) and the in-memory store (domaintest.MemStore,
// this package's own test), and the tests of what only the databases have:
// snapshots, tampering in SQL, idempotency records (RunSQL).
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
)

// SnapshotEvery is the snapshot interval the stores given to Run must be
// opened with (persistence.Config.SnapshotEvery): small, so that the
// suite's games cross many snapshots.
const SnapshotEvery = 7

// Store is what the suite tests: app's event and player stores,
// and the game record alone (what api reads when a log no longer loads).
// A store that also has VerifyChain(ctx, id) (int, error) or Ping(ctx)
// error is checked with them too.
type Store interface {
	app.Store
	app.PlayerStore
	// Game returns a game's record without its log; ErrNotFound if none.
	Game(ctx context.Context, id string) (*app.Game, error)
}

var _ Store = (*persistence.Store)(nil)

// Run runs the suite over the interfaces. open must return a new, empty
// store each time it is called (a persistence.Store opened with
// Config.SnapshotEvery = SnapshotEvery), closed when t ends. The subtests
// run in parallel, each on a store of its own.
func Run(t *testing.T, open func(t *testing.T) Store) {
	runEach(t, open, []suiteTest[Store]{
		{"RoundTrip", testRoundTrip},
		{"GameRecord", testGameRecord},
		{"VersionRules", testVersionRules},
		{"UnknownGame", testUnknownGame},
		{"BadAppend", testBadAppend},
		{"RandomGames", testRandomGames},
		{"Race", testRace},
		{"Players", testPlayers},
		{"List", testList},
		{"HintUnranks", testHintUnranks},
	})
}

// RunSQL runs Run on the database store open returns, then the tests of
// what only the databases have: snapshots, a log changed in SQL, the
// idempotency records.
func RunSQL(t *testing.T, open func(t *testing.T) *persistence.Store) {
	Run(t, func(t *testing.T) Store { return open(t) })
	runEach(t, open, []suiteTest[*persistence.Store]{
		{"Snapshots", testSnapshots},
		{"Tamper", testTamper},
		{"Idempotency", testIdempotency},
	})
}

// suiteTest is one test of the suite on a store of type S.
type suiteTest[S any] struct {
	name string
	fn   func(t *testing.T, s S)
}

// runEach runs each test as a parallel subtest on a store of its own.
func runEach[S comparable](t *testing.T, open func(t *testing.T) S, tests []suiteTest[S]) {
	var none S
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			if s == none {
				t.Fatal("open returned nil")
			}
			tc.fn(t, s)
		})
	}
}

// clock is a settable server clock for app.Games.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2026, 3, 14, 15, 9, 26, 535_000_000, time.UTC)}
}

// Now is the clock's time, for app.Games.Now.
func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock on by d and returns the new time.
func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// fixture is one store under test with a service over it; sql is the
// same store when it is a database's (nil for another).
type fixture struct {
	t     *testing.T
	ctx   context.Context
	s     Store
	sql   *persistence.Store
	games *app.Games
	clock *clock
}

func newFixture(t *testing.T, s Store) *fixture {
	c := newClock()
	g := app.NewGames(s)
	g.Now = c.Now
	db, _ := s.(*persistence.Store)
	return &fixture{t: t, ctx: t.Context(), s: s, sql: db, games: g, clock: c}
}

// chainVerifier is a store that checks a log's chain itself.
type chainVerifier interface {
	VerifyChain(ctx context.Context, id string) (int, error)
}

// verifyChain checks game id's chain: with the store's own VerifyChain
// if it has one, and always with domain.VerifyChain over Events and the
// record's version. It returns the first broken version, 0 if none.
func (f *fixture) verifyChain(id string) (int, error) {
	if cv, ok := f.s.(chainVerifier); ok {
		if v, err := cv.VerifyChain(f.ctx, id); err != nil || v != 0 {
			return v, err
		}
	}
	recs, err := f.s.Events(f.ctx, id, 0, 0)
	if err != nil {
		return 0, err
	}
	rec, err := f.s.Game(f.ctx, id)
	if err != nil {
		return 0, err
	}
	if v := domain.VerifyChain(id, recs); v != 0 || len(recs) == rec.Version {
		return v, nil
	}
	return min(len(recs), rec.Version) + 1, nil
}

// events counts game id's stored events (0 for an unknown game).
func (f *fixture) events(id string) int {
	f.t.Helper()
	recs, err := f.s.Events(f.ctx, id, 0, 0)
	if errors.Is(err, domain.ErrNotFound) {
		return 0
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return len(recs)
}

// create makes a game through app.Games.Create, as the API does.
func (f *fixture) create(req app.NewGame) (*app.Game, *domain.State) {
	f.t.Helper()
	if req.Owner == "" {
		req.Owner = "p1"
	}
	if req.Variant == "" {
		req.Variant = "relaxed"
	}
	if req.Seed == nil && req.Layout == nil {
		seed := uint64(42)
		req.Seed = &seed
	}
	g, st, err := f.games.Create(f.ctx, req)
	if err != nil {
		f.t.Fatalf("create %+v: %v", req, err)
	}
	return g, st
}

// drawEvent returns the next turn of a pure draw-and-recycle game: the top
// stock card drawn, or the waste turned over when the stock is empty. It
// needs no rules engine beyond Apply, so the store's basic tests do not
// depend on Decide. Valid for a variant with unlimited passes (relaxed).
func drawEvent(st *domain.State, version, move int, at time.Time) domain.Event {
	e := domain.Event{Version: version, OccurredAt: domain.Millis(at),
		Data: domain.EventData{V: domain.PayloadVersion, Move: move}}
	if n := len(st.Stock); n > 0 {
		e.Type = domain.EventStockDrawn
		e.Data.Count = 1
		e.Data.Cards = []domain.Card{st.Stock[n-1]}
	} else {
		e.Type = domain.EventStockRecycled
		e.Data.Count = len(st.Waste)
	}
	return e
}

// draws returns n draw turns following st and the state after them; st is
// not changed.
func (f *fixture) draws(st *domain.State, n int) ([]domain.Event, *domain.State) {
	f.t.Helper()
	after := st.Clone()
	var evs []domain.Event
	for range n {
		e := drawEvent(after, after.Version+1, after.Moves+1, f.clock.Advance(1234*time.Millisecond))
		after.Apply(e)
		if after.Fault != "" {
			f.t.Fatalf("draw event does not apply: %s", after.Fault)
		}
		evs = append(evs, e)
	}
	return evs, after
}

// appendDraws appends n draws to game id in batches of 1..3 events and
// returns the final state.
func (f *fixture) appendDraws(id string, st *domain.State, n int, rng *rand.Rand) *domain.State {
	f.t.Helper()
	for n > 0 {
		k := min(n, 1+rng.IntN(3))
		evs, after := f.draws(st, k)
		if _, err := f.s.Append(f.ctx, id, st.Version, evs, app.AfterOf(after), nil); err != nil {
			f.t.Fatalf("append %d events at version %d: %v", k, st.Version, err)
		}
		st, n = after, n-k
	}
	return st
}

// replay rebuilds game id's state from its whole stored log with
// domain.Replay.
func (f *fixture) replay(id string) *domain.State {
	f.t.Helper()
	recs, err := f.s.Events(f.ctx, id, 0, 0)
	if err != nil {
		f.t.Fatalf("events of %s: %v", id, err)
	}
	evs := make([]domain.Event, len(recs))
	for i, r := range recs {
		if evs[i], err = domain.DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload); err != nil {
			f.t.Fatalf("decode event %d: %v", r.Version, err)
		}
	}
	st, bad := domain.Replay(evs)
	if bad != 0 {
		f.t.Fatalf("replay of %s fails at version %d: %s", id, bad, st.Fault)
	}
	return st
}

// sameState fails the test unless the JSON encodings of got and want are
// equal (the snapshot encoding, so "equal" means "would snapshot alike").
func sameState(t *testing.T, what string, got, want *domain.State) {
	t.Helper()
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("%s: states differ\n got: %s\nwant: %s", what, g, w)
	}
}

// checkLoad loads game id and compares its state with want and with a full
// replay, and its record's projection with want.
func (f *fixture) checkLoad(id string, want *domain.State) *app.Game {
	f.t.Helper()
	g, st, err := f.s.Load(f.ctx, id)
	if err != nil {
		f.t.Fatalf("load %s: %v", id, err)
	}
	sameState(f.t, "Load vs full replay", st, f.replay(id))
	if want != nil {
		sameState(f.t, "Load vs appended state", st, want)
		var p app.Game
		p.Project(want)
		if g.Version != p.Version || g.Status != p.Status || g.Moves != p.Moves ||
			g.ElapsedMS != p.ElapsedMS || !g.UpdatedAt.Equal(p.UpdatedAt) ||
			!reflect.DeepEqual(g.Score, p.Score) || (g.FinishedAt == nil) != (p.FinishedAt == nil) ||
			(g.FinishedAt != nil && !g.FinishedAt.Equal(*p.FinishedAt)) {
			f.t.Fatalf("projection of %s = %+v, want that of the state: %+v", id, g, p)
		}
	}
	return g
}

// exec runs a statement with ? placeholders on the store's database,
// translating them for PostgreSQL.
func (f *fixture) exec(q string, args ...any) int64 {
	f.t.Helper()
	res, err := f.sql.DB().ExecContext(f.ctx, f.sql.Rebind(q), args...)
	if err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) count(q string, args ...any) int {
	f.t.Helper()
	var n int
	if err := f.sql.DB().QueryRowContext(f.ctx, f.sql.Rebind(q), args...).Scan(&n); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
	return n
}

func testRoundTrip(t *testing.T, s Store) {
	f := newFixture(t, s)
	rng := rand.New(rand.NewPCG(1, 1))
	g, st := f.create(app.NewGame{Variant: "relaxed"})

	recs, err := s.Events(f.ctx, g.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Version != 1 || recs[0].Type != domain.EventGameDealt ||
		!bytes.Equal(recs[0].PrevHash, domain.GenesisHash) || recs[0].Position <= 0 || recs[0].GameID != g.ID {
		t.Fatalf("log after create = %+v, want one game_dealt at version 1 from genesis", recs)
	}
	f.checkLoad(g.ID, st)

	for range 12 {
		st = f.appendDraws(g.ID, st, 1+rng.IntN(4), rng)
		f.checkLoad(g.ID, st)
	}
	recs, err = s.Events(f.ctx, g.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != st.Version {
		t.Fatalf("%d events stored, want %d", len(recs), st.Version)
	}
	for i, r := range recs {
		if r.Version != i+1 {
			t.Fatalf("event %d has version %d", i, r.Version)
		}
		if i > 0 && (r.Position <= recs[i-1].Position || !bytes.Equal(r.PrevHash, recs[i-1].Hash)) {
			t.Fatalf("event %d: position %d after %d, or not chained", r.Version, r.Position, recs[i-1].Position)
		}
		e, err := domain.DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if r.OccurredAt != domain.Millis(r.OccurredAt) || !e.OccurredAt.Equal(r.OccurredAt) {
			t.Fatalf("event %d time %v is not whole UTC milliseconds", r.Version, r.OccurredAt)
		}
	}
	page, err := s.Events(f.ctx, g.ID, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(page) != 3 || page[0].Version != 6 || page[2].Version != 8 || !reflect.DeepEqual(page, recs[5:8]) {
		t.Fatalf("Events(after 5, limit 3) = %d events from %v", len(page), page)
	}
	if tail, err := s.Events(f.ctx, g.ID, st.Version, 10); err != nil || len(tail) != 0 {
		t.Fatalf("Events after the head = %v, %v; want none", tail, err)
	}

	// The game ends: the projection follows.
	f.clock.Advance(time.Second)
	_, won, evs, err := f.games.Play(f.ctx, "p1", g.ID, domain.Move{Type: domain.MoveResign}, st.Version, nil)
	if err != nil {
		t.Fatalf("resign: %v", err)
	}
	if len(evs) == 0 || won.Status != domain.StatusLost {
		t.Fatalf("resign appended %v, status %s", evs, won.Status)
	}
	rec := f.checkLoad(g.ID, won)
	if rec.FinishedAt == nil || !rec.FinishedAt.Equal(won.EndedAt) || rec.Status != domain.StatusLost {
		t.Fatalf("record after resign: status %s finished %v", rec.Status, rec.FinishedAt)
	}
	if v, err := f.verifyChain(g.ID); err != nil || v != 0 {
		t.Fatalf("VerifyChain = %d, %v; want 0", v, err)
	}
	if p, ok := s.(interface{ Ping(context.Context) error }); ok {
		if err := p.Ping(f.ctx); err != nil {
			t.Fatalf("ping: %v", err)
		}
	}
}

func testGameRecord(t *testing.T, s Store) {
	f := newFixture(t, s)
	high := uint64(1)<<63 + 0xDEADBEEF // does not fit a signed BIGINT
	draw3 := 3
	scoring := domain.ScoringStandard
	cases := []app.NewGame{
		{Owner: "p1", Variant: "klondike", Seed: &high},
		{Owner: "p2", Variant: "relaxed", Options: domain.Options{Draw: &draw3}, CompetitionID: "duel-7"},
		{Owner: "p3", Variant: "klondike", Options: domain.Options{Scoring: &scoring}, DailyDate: "2026-03-14"},
		{Owner: "p1", Variant: "tripleharp"}, // secret seed: ranked
	}
	// An explicit layout: no seed (R6.5).
	rules, _, err := mustVariant(t, "klondike").Resolve(domain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	deal := domain.Deal(rules, 7)
	cases = append(cases, app.NewGame{Owner: "p4", Variant: "klondike",
		Layout: &domain.Position{Tableau: deal.Tableau, Stock: deal.Stock}})

	for i, req := range cases {
		f.clock.Advance(time.Minute)
		var want *app.Game
		var st *domain.State
		if i == 3 {
			want, st, err = f.games.Create(f.ctx, req) // no seed given
			if err != nil {
				t.Fatal(err)
			}
		} else {
			want, st = f.create(req)
		}
		got, err := s.Game(f.ctx, want.ID)
		if err != nil {
			t.Fatalf("Game(%s): %v", want.ID, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("case %d: stored record\n got %+v\nwant %+v", i, got, want)
		}
		loaded, lst, err := s.Load(f.ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(loaded, want) {
			t.Errorf("case %d: Load's record\n got %+v\nwant %+v", i, loaded, want)
		}
		sameState(t, "Load after create", lst, st)
	}
	if got, _ := s.Game(f.ctx, mustCreated(t, f, 0)); got == nil || got.Seed != high || !got.HasSeed {
		t.Errorf("seed above 2^63 did not round-trip: %+v", got)
	}

	// One daily game per player, variant and day.
	f.clock.Advance(time.Minute)
	_, _, err = f.games.Create(f.ctx, cases[2])
	if !errors.Is(err, domain.ErrConflict) {
		t.Errorf("second daily game for the same player and day: %v, want ErrConflict", err)
	}
	other := cases[2]
	other.Owner = "p9"
	if _, _, err := f.games.Create(f.ctx, other); err != nil {
		t.Errorf("daily game of another player: %v", err)
	}
}

// mustCreated returns the id of the index-th game created in f's store,
// oldest first.
func mustCreated(t *testing.T, f *fixture, index int) string {
	t.Helper()
	games, _, err := f.s.List(f.ctx, app.GameFilter{Limit: persistence.MaxListLimit})
	if err != nil || len(games) <= index {
		t.Fatalf("list: %d games, %v", len(games), err)
	}
	return games[len(games)-1-index].ID
}

func mustVariant(t *testing.T, id string) domain.Variant {
	t.Helper()
	v, err := domain.LookupVariant(id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func testVersionRules(t *testing.T, s Store) {
	f := newFixture(t, s)
	rng := rand.New(rand.NewPCG(2, 2))
	g, st := f.create(app.NewGame{})
	st = f.appendDraws(g.ID, st, 5, rng)
	before, _, err := s.Load(f.ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := f.events(g.ID)
	for _, expected := range []int{0, 1, st.Version - 1, st.Version + 1, st.Version + 10, -1} {
		// Events numbered from the wrong expected version, and (below)
		// from the right head but claimed at a wrong expected version.
		evs, after := f.draws(st, 2)
		for i := range evs {
			evs[i].Version = expected + 1 + i
		}
		after.Version = expected + len(evs)
		_, err := s.Append(f.ctx, g.ID, expected, evs, app.AfterOf(after), nil)
		if !errors.Is(err, domain.ErrConflict) {
			t.Errorf("append at expected %d (head %d): %v, want ErrConflict", expected, st.Version, err)
		}
	}
	if got := f.events(g.ID); got != n {
		t.Fatalf("%d events after refused appends, want %d", got, n)
	}
	after, _, err := s.Load(f.ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("record changed by refused appends:\n%+v\n%+v", after, before)
	}
	f.checkLoad(g.ID, st)
	// The right expected version still works.
	evs, next := f.draws(st, 1)
	if _, err := s.Append(f.ctx, g.ID, st.Version, evs, app.AfterOf(next), nil); err != nil {
		t.Fatal(err)
	}
	f.checkLoad(g.ID, next)

	// An id that exists cannot be created again.
	rec, err := s.Game(f.ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	first := &domain.State{}
	deal := domain.DealtEvent(rec.Rules, domain.Deal(rec.Rules, 1), rec.Commitment, f.clock.Now())
	first.Apply(deal)
	rec.Project(first)
	if err := s.Create(f.ctx, rec, deal, first, nil); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("create with an existing id: %v, want ErrConflict", err)
	}
	if got := f.events(g.ID); got != next.Version {
		t.Errorf("%d events after the refused create, want %d", got, next.Version)
	}
}

func testUnknownGame(t *testing.T, s Store) {
	f := newFixture(t, s)
	g, st := f.create(app.NewGame{})
	evs, after := f.draws(st, 1)
	const id = "no-such-game"
	if _, err := s.Append(f.ctx, id, st.Version, evs, app.AfterOf(after), nil); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Append: %v, want ErrNotFound", err)
	}
	if _, _, err := s.Load(f.ctx, id); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Load: %v, want ErrNotFound", err)
	}
	if _, err := s.Game(f.ctx, id); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Game: %v, want ErrNotFound", err)
	}
	if _, err := s.Events(f.ctx, id, 0, 10); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("Events: %v, want ErrNotFound", err)
	}
	if _, err := f.verifyChain(id); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("VerifyChain: %v, want ErrNotFound", err)
	}
	if n := f.events(id); n != 0 {
		t.Errorf("%d events stored for an unknown game", n)
	}
	f.checkLoad(g.ID, st)
}

// testBadAppend: arguments that cannot be right are refused with an error
// that is neither ErrConflict nor ErrNotFound, and nothing is written.
func testBadAppend(t *testing.T, s Store) {
	f := newFixture(t, s)
	g, st := f.create(app.NewGame{})
	evs, after := f.draws(st, 3)
	gap := slices.Clone(evs)
	gap[2].Version++
	unknown := slices.Clone(evs)
	unknown[1].Type = "card_teleported"
	subMilli := slices.Clone(evs)
	subMilli[0].OccurredAt = subMilli[0].OccurredAt.Add(time.Microsecond)
	local := slices.Clone(evs)
	local[0].OccurredAt = local[0].OccurredAt.In(time.FixedZone("X", 3600))
	staleAfter := after.Clone()
	staleAfter.Version--
	cases := []struct {
		name  string
		evs   []domain.Event
		after *domain.State
	}{
		{"no events", nil, st},
		{"gap in versions", gap, after},
		{"after at another version", evs, staleAfter},
		{"nil after", evs, nil},
		{"unknown event type", unknown, after},
		{"time finer than milliseconds", subMilli, after},
		{"time not in UTC", local, after},
	}
	for _, c := range cases {
		a := app.After{State: c.after}
		if c.after != nil {
			a = app.AfterOf(c.after)
		}
		_, err := s.Append(f.ctx, g.ID, st.Version, c.evs, a, nil)
		if err == nil || errors.Is(err, domain.ErrConflict) || errors.Is(err, domain.ErrNotFound) {
			t.Errorf("%s: %v, want a plain error", c.name, err)
		}
	}
	f.checkLoad(g.ID, st)
}

func testSnapshots(t *testing.T, s *persistence.Store) {
	f := newFixture(t, s)
	rng := rand.New(rand.NewPCG(3, 3))
	g, st := f.create(app.NewGame{Variant: "relaxed"})
	// Cross several multiples of SnapshotEvery, in batches of 1..3, and
	// stay where snapshots are SnapshotEvery apart (below 8×SnapshotEvery,
	// with the SnapshotEvery events appended at the end).
	st = f.appendDraws(g.ID, st, 6*SnapshotEvery+3, rng)
	s.FlushSnapshots() // written after their appends
	f.checkLoad(g.ID, st)
	n := f.count(`SELECT COUNT(*) FROM snapshots WHERE game_id = ?`, g.ID)
	if n < 6 || n > st.Version/SnapshotEvery {
		t.Fatalf("%d snapshots for %d events every %d", n, st.Version, SnapshotEvery)
	}
	newest := f.count(`SELECT MAX(version) FROM snapshots WHERE game_id = ?`, g.ID)
	if newest > st.Version || st.Version-newest > SnapshotEvery+2 {
		t.Fatalf("newest snapshot at %d, head at %d", newest, st.Version)
	}

	// Load uses the snapshot: a planted, self-consistent but different
	// state at the newest snapshot shows through.
	var orig []byte
	if err := f.sql.DB().QueryRowContext(f.ctx, f.sql.Rebind(`SELECT state FROM snapshots WHERE game_id = ? AND version = ?`),
		g.ID, newest).Scan(&orig); err != nil {
		t.Fatal(err)
	}
	// The snapshot is a JSON object with the state's members (its undo
	// record packed): only the score's member changes.
	var planted map[string]json.RawMessage
	var score domain.ScoreState
	if err := json.Unmarshal(orig, &planted); err != nil {
		t.Fatalf("snapshot is not a JSON object: %v", err)
	}
	if err := json.Unmarshal(planted["score"], &score); err != nil {
		t.Fatalf("snapshot's score: %v", err)
	}
	score.Points += 1000
	planted["score"], _ = json.Marshal(score)
	pb, _ := json.Marshal(planted)
	f.exec(`UPDATE snapshots SET state = ? WHERE game_id = ? AND version = ?`, pb, g.ID, newest)
	if _, got, err := s.Load(f.ctx, g.ID); err != nil || got.Score.Points != st.Score.Points+1000 {
		t.Fatalf("Load with a planted snapshot: points %v, %v; want the snapshot's", got, err)
	}

	// A snapshot that does not decode, or is of another format, or whose
	// event is not the stored one, falls back to a full replay.
	for _, tamper := range []struct {
		name, q string
		args    []any
	}{
		{"garbage", `UPDATE snapshots SET state = ? WHERE game_id = ? AND version = ?`, []any{[]byte("{not json"), g.ID, newest}},
		{"wrong version inside", `UPDATE snapshots SET state = ? WHERE game_id = ? AND version = ?`, []any{[]byte(`{"version": 3}`), g.ID, newest}},
		{"other format", `UPDATE snapshots SET state = ?, format = 999 WHERE game_id = ? AND version = ?`, []any{pb, g.ID, newest}},
		{"other event", `UPDATE snapshots SET state = ?, event_hash = ? WHERE game_id = ? AND version = ?`, []any{pb, make([]byte, 32), g.ID, newest}},
	} {
		f.exec(tamper.q, tamper.args...)
		_, got, err := s.Load(f.ctx, g.ID)
		if err != nil {
			t.Fatalf("%s: Load: %v", tamper.name, err)
		}
		sameState(t, tamper.name, got, st)
	}
	f.exec(`UPDATE snapshots SET state = ?, format = 1, event_hash = (SELECT hash FROM events WHERE game_id = ? AND version = ?) WHERE game_id = ? AND version = ?`,
		orig, g.ID, newest, g.ID, newest)
	f.checkLoad(g.ID, st)

	// With snapshots gone, Load replays.
	f.exec(`DELETE FROM snapshots WHERE game_id = ?`, g.ID)
	f.checkLoad(g.ID, st)
	// And new ones are written as the game goes on.
	st = f.appendDraws(g.ID, st, SnapshotEvery, rng)
	s.FlushSnapshots()
	if n := f.count(`SELECT COUNT(*) FROM snapshots WHERE game_id = ?`, g.ID); n != 1 {
		t.Fatalf("%d snapshots after %d more events, want 1", n, SnapshotEvery)
	}
	f.checkLoad(g.ID, st)
}

// testRandomGames plays random legal games of every variant through
// domain.LegalMoves and domain.Decide, appending each command's events,
// and checks after every few commands that Load (snapshot + tail) equals a
// full replay and the state the player holds.
func testRandomGames(t *testing.T, s Store) {
	f := newFixture(t, s)
	rng := rand.New(rand.NewPCG(4, 4))
	variants := domain.Variants()
	games := 0
	for _, v := range variants {
		for i := range 2 {
			seed := rng.Uint64()
			g, st := f.create(app.NewGame{Variant: v.ID, Seed: &seed})
			st = f.playRandom(g.ID, st, 150+i*150, i == 1, rng)
			f.checkLoad(g.ID, st)
			if got, err := f.verifyChain(g.ID); err != nil || got != 0 {
				t.Fatalf("%s: VerifyChain = %d, %v", v.ID, got, err)
			}
			if fl, ok := s.(interface{ FlushSnapshots() }); ok {
				fl.FlushSnapshots() // snapshots are written after their appends
			}
			if f.sql != nil && st.Version >= SnapshotEvery && f.count(`SELECT COUNT(*) FROM snapshots WHERE game_id = ?`, g.ID) == 0 {
				t.Fatalf("%s: no snapshot after %d events", v.ID, st.Version)
			}
			games++
			t.Logf("%s seed %d: %d events, %d moves, %s", v.ID, seed, st.Version, st.Moves, st.Status)
		}
	}
	if games == 0 {
		t.Fatal("no variants")
	}
	// Won games too: a layout of four complete runs (R6.5) that greedy play
	// finishes, through autocomplete where the variant offers it.
	for _, variant := range []string{"klondike", "relaxed"} {
		g, st := f.create(app.NewGame{Variant: variant, Layout: runsLayout()})
		st = f.playRandom(g.ID, st, 400, true, rng)
		rec := f.checkLoad(g.ID, st)
		if st.Status != domain.StatusWon || rec.Status != domain.StatusWon || rec.FinishedAt == nil {
			t.Fatalf("%s: runs layout ended %s after %d events (record %s, finished %v), want won",
				variant, st.Status, st.Version, rec.Status, rec.FinishedAt)
		}
		if got, err := f.verifyChain(g.ID); err != nil || got != 0 {
			t.Fatalf("%s: VerifyChain = %d, %v", variant, got, err)
		}
	}
}

// runsLayout is a one-deck Klondike layout with every card face up in four
// runs from king to ace (spades and hearts alternating, clubs and diamonds
// alternating), three empty piles and an empty stock.
func runsLayout() *domain.Position {
	p := &domain.Position{Tableau: make([]domain.PileLayout, 7)}
	for i, suits := range [][2]domain.Suit{
		{domain.Spades, domain.Hearts}, {domain.Hearts, domain.Spades},
		{domain.Clubs, domain.Diamonds}, {domain.Diamonds, domain.Clubs},
	} {
		for rank := domain.King; rank >= domain.Ace; rank-- {
			p.Tableau[i].Up = append(p.Tableau[i].Up, domain.NewCard(rank, suits[(13-rank)%2]))
		}
	}
	return p
}

// playRandom plays up to moves random legal commands in game id (fewer if
// the game ends) and returns the final state.
func (f *fixture) playRandom(id string, st *domain.State, moves int, greedy bool, rng *rand.Rand) *domain.State {
	f.t.Helper()
	for i := 0; i < moves && st.Status == domain.StatusInProgress; i++ {
		now := f.clock.Advance(time.Duration(200+rng.IntN(3000)) * time.Millisecond)
		evs := domain.Expire(st, now)
		if evs == nil {
			legal := domain.LegalMoves(st)
			if len(legal) == 0 {
				f.t.Fatalf("domain.LegalMoves: no legal move at version %d of an unfinished game", st.Version)
			}
			// Resigning ends the game: only when nothing else is legal, or
			// rarely.
			others := slices.DeleteFunc(slices.Clone(legal), func(m domain.Move) bool { return m.Type == domain.MoveResign })
			m := domain.Move{Type: domain.MoveResign}
			if len(others) > 0 && rng.IntN(500) != 0 {
				m = others[rng.IntN(len(others))]
			}
			// Greedy players, so that some games are won: mostly take a
			// move that makes progress when there is one.
			if greedy && rng.IntN(5) != 0 {
				if good := slices.DeleteFunc(others, func(m domain.Move) bool { return !progress(m) }); len(good) > 0 {
					m = good[rng.IntN(len(good))]
				}
			}
			var err error
			evs, _, err = domain.Decide(st, m, now)
			if err != nil {
				f.t.Fatalf("domain.Decide refused legal move %v at version %d: %v", m, st.Version, err)
			}
		}
		after := st.Clone()
		for _, e := range evs {
			after.Apply(e)
		}
		if after.Fault != "" {
			f.t.Fatalf("decided events do not apply: %s", after.Fault)
		}
		if _, err := f.s.Append(f.ctx, id, st.Version, evs, app.AfterOf(after), nil); err != nil {
			f.t.Fatalf("append %d events at %d: %v", len(evs), st.Version, err)
		}
		st = after
		if i%9 == 0 {
			f.checkLoad(id, st)
		}
	}
	return st
}

// progress reports whether m brings a game nearer to its end: anything
// onto a foundation, an autocomplete, a flip.
func progress(m domain.Move) bool {
	return m.To.Kind == domain.Foundation || m.Type == domain.MoveAutocomplete || m.Type == domain.MoveFlip
}

// testTamper changes single stored bytes and fields of events with raw
// SQL and expects VerifyChain to name exactly the changed version.
func testTamper(t *testing.T, s *persistence.Store) {
	f := newFixture(t, s)
	rng := rand.New(rand.NewPCG(5, 5))
	g, st := f.create(app.NewGame{})
	st = f.appendDraws(g.ID, st, 30, rng)
	if v, err := s.VerifyChain(f.ctx, g.ID); err != nil || v != 0 {
		t.Fatalf("VerifyChain before tampering = %d, %v", v, err)
	}
	type row struct {
		typ                 string
		payload, prev, hash []byte
		at                  int64
	}
	read := func(version int) row {
		var r row
		err := s.DB().QueryRowContext(f.ctx, f.sql.Rebind(`SELECT type, payload, occurred_at, prev_hash, hash
			FROM events WHERE game_id = ? AND version = ?`), g.ID, version).Scan(&r.typ, &r.payload, &r.at, &r.prev, &r.hash)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	write := func(version int, r row) {
		if n := f.exec(`UPDATE events SET type = ?, payload = ?, occurred_at = ?, prev_hash = ?, hash = ?
			WHERE game_id = ? AND version = ?`, r.typ, r.payload, r.at, r.prev, r.hash, g.ID, version); n != 1 {
			t.Fatalf("tamper updated %d rows", n)
		}
	}
	flip := func(b []byte, rng *rand.Rand) []byte {
		b = slices.Clone(b)
		b[rng.IntN(len(b))] ^= 1 << rng.IntN(8)
		return b
	}
	tampers := []struct {
		name string
		fn   func(r row) row
	}{
		{"payload", func(r row) row { r.payload = flip(r.payload, rng); return r }},
		{"type", func(r row) row { r.typ = string(flip([]byte(r.typ), rng)); return r }},
		{"occurred_at", func(r row) row { r.at += int64(1 + rng.IntN(1000)); return r }},
		{"hash", func(r row) row { r.hash = flip(r.hash, rng); return r }},
		{"prev_hash", func(r row) row { r.prev = flip(r.prev, rng); return r }},
	}
	for _, tc := range tampers {
		for range 4 {
			version := 1 + rng.IntN(st.Version)
			orig := read(version)
			write(version, tc.fn(orig))
			got, err := s.VerifyChain(f.ctx, g.ID)
			if err != nil || got != version {
				t.Errorf("%s tampered at version %d: VerifyChain = %d, %v", tc.name, version, got, err)
			}
			write(version, orig)
		}
	}
	if v, err := s.VerifyChain(f.ctx, g.ID); err != nil || v != 0 {
		t.Fatalf("VerifyChain after restoring = %d, %v", v, err)
	}
	// A log cut short of the record's version is broken after its end.
	f.exec(`DELETE FROM events WHERE game_id = ? AND version = ?`, g.ID, st.Version)
	if v, err := s.VerifyChain(f.ctx, g.ID); err != nil || v != st.Version {
		t.Errorf("last event deleted: VerifyChain = %d, %v; want %d", v, err, st.Version)
	}
}

func testRace(t *testing.T, s Store) {
	f := newFixture(t, s)
	g, st := f.create(app.NewGame{})
	const writers = 32
	for round := range 3 {
		batches := make([][]domain.Event, writers)
		afters := make([]*domain.State, writers)
		for i := range writers {
			// Different writers append different numbers of events, so a
			// mix-up would show in the log.
			batches[i], afters[i] = f.draws(st, 1+i%3)
		}
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				<-start
				_, errs[i] = s.Append(f.ctx, g.ID, st.Version, batches[i], app.AfterOf(afters[i]), nil)
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: writers %d and %d both succeeded", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, domain.ErrConflict):
				t.Fatalf("round %d: writer %d: %v, want ErrConflict", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer succeeded", round)
		}
		recs, err := s.Events(f.ctx, g.ID, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		want := afters[winner].Version
		if len(recs) != want {
			t.Fatalf("round %d: %d events, want %d", round, len(recs), want)
		}
		for i, r := range recs {
			if r.Version != i+1 {
				t.Fatalf("round %d: gap or duplicate: position %d holds version %d", round, i, r.Version)
			}
		}
		for i, e := range batches[winner] {
			r := recs[st.Version+i]
			payload, _ := domain.EncodePayload(e)
			if r.Type != e.Type || !bytes.Equal(r.Payload, payload) {
				t.Fatalf("round %d: event %d is not the winner's", round, r.Version)
			}
		}
		if v, err := f.verifyChain(g.ID); err != nil || v != 0 {
			t.Fatalf("round %d: VerifyChain = %d, %v", round, v, err)
		}
		st = afters[winner]
		f.checkLoad(g.ID, st)
	}
}

func testIdempotency(t *testing.T, s *persistence.Store) {
	ctx := t.Context()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	r := app.IdempotencyRecord{Owner: "p1", Key: "k-1", Fingerprint: []byte{1, 2, 3},
		Status: 200, Body: []byte(`{"ok":true}`), CreatedAt: t0, ExpiresAt: t0.Add(48 * time.Hour)}
	if err := s.PutIdempotency(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetIdempotency(ctx, "p1", "k-1", t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*got, r) {
		t.Fatalf("got %+v, want %+v", *got, r)
	}
	if err := s.PutIdempotency(ctx, r); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("second put: %v, want ErrConflict", err)
	}
	for _, k := range []struct{ owner, key string }{{"p2", "k-1"}, {"p1", "k-2"}} {
		if _, err := s.GetIdempotency(ctx, k.owner, k.key, t0); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("get %v: %v, want ErrNotFound", k, err)
		}
	}
	// Same key, another owner: separate.
	other := r
	other.Owner, other.Body, other.Status, other.Fingerprint = "p2", nil, 201, nil
	if err := s.PutIdempotency(ctx, other); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetIdempotency(ctx, "p2", "k-1", t0); err != nil || got.Status != 201 || len(got.Body) != 0 {
		t.Fatalf("other owner's record: %+v, %v", got, err)
	}
	// Kept at least 24 hours, whatever ExpiresAt says.
	short := app.IdempotencyRecord{Owner: "p1", Key: "short", Status: 200, CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)}
	if err := s.PutIdempotency(ctx, short); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetIdempotency(ctx, "p1", "short", t0.Add(23*time.Hour)); err != nil ||
		!got.ExpiresAt.Equal(t0.Add(persistence.IdempotencyTTL)) {
		t.Fatalf("short-lived key after 23 h: %+v, %v", got, err)
	}
	// Expiry: not found at and after ExpiresAt.
	if _, err := s.GetIdempotency(ctx, "p1", "short", t0.Add(24*time.Hour)); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("expired key: %v, want ErrNotFound", err)
	}
	// An expired key may be reused before any purge.
	reuse := short
	reuse.CreatedAt, reuse.ExpiresAt, reuse.Status = t0.Add(25*time.Hour), time.Time{}, 409
	if err := s.PutIdempotency(ctx, reuse); err != nil {
		t.Fatalf("reusing an expired key: %v", err)
	}
	if got, err := s.GetIdempotency(ctx, "p1", "short", t0.Add(26*time.Hour)); err != nil || got.Status != 409 ||
		!got.ExpiresAt.Equal(reuse.CreatedAt.Add(persistence.IdempotencyTTL)) {
		t.Fatalf("reused key: %+v, %v", got, err)
	}
	// Purge deletes exactly the expired ones: at t0+48h, p1/k-1 and
	// p2/k-1 (expiring at t0+48h and t0+24h) but not the reused key.
	n, err := s.PurgeIdempotency(ctx, t0.Add(48*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("purge = %d, %v; want 2", n, err)
	}
	if n, err := s.PurgeIdempotency(ctx, t0.Add(48*time.Hour)); err != nil || n != 0 {
		t.Fatalf("second purge = %d, %v; want 0", n, err)
	}
	if _, err := s.GetIdempotency(ctx, "p1", "short", t0.Add(48*time.Hour)); err != nil {
		t.Fatalf("unexpired key purged: %v", err)
	}
	// Racing requests with one key: exactly one stores its response.
	const racers = 16
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			errs[i] = s.PutIdempotency(ctx, app.IdempotencyRecord{Owner: "p3", Key: "race",
				Fingerprint: []byte{byte(i)}, Status: 200 + i, CreatedAt: t0})
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		if err == nil {
			ok++
		} else if !errors.Is(err, domain.ErrConflict) {
			t.Fatalf("racer %d: %v", i, err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d racers stored the same key, want 1", ok)
	}
}

func testPlayers(t *testing.T, s Store) {
	ctx := t.Context()
	h := func(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }
	p := &app.Player{ID: "pl-1", Name: "Ada", TokenHash: h(1), CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)}
	if err := s.CreatePlayer(ctx, p); err != nil {
		t.Fatal(err)
	}
	got, err := s.PlayerByTokenHash(ctx, h(1))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, p) {
		t.Fatalf("got %+v, want %+v", got, p)
	}
	if _, err := s.PlayerByTokenHash(ctx, h(2)); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("unknown token: %v, want ErrNotFound", err)
	}
	if err := s.CreatePlayer(ctx, &app.Player{ID: "pl-1", Name: "Bob", TokenHash: h(3), CreatedAt: p.CreatedAt}); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("duplicate id: %v, want ErrConflict", err)
	}
	if err := s.CreatePlayer(ctx, &app.Player{ID: "pl-2", Name: "Bob", TokenHash: h(1), CreatedAt: p.CreatedAt}); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("duplicate token hash: %v, want ErrConflict", err)
	}
	if _, err := s.PlayerByTokenHash(ctx, h(3)); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("refused player was stored: %v", err)
	}
	if err := s.CreatePlayer(ctx, &app.Player{ID: "pl-2", Name: "Bob", TokenHash: h(2), CreatedAt: p.CreatedAt}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.PlayerByTokenHash(ctx, h(2)); err != nil || got.ID != "pl-2" {
		t.Fatalf("second player: %+v, %v", got, err)
	}
}

func testList(t *testing.T, s Store) {
	f := newFixture(t, s)
	var all []app.Game
	owners := []string{"p1", "p2", "p1", "p1", "p3", "p1", "p2", "p1", "p1", "p1", "p2", "p1", "p1", "p3"}
	for i, owner := range owners {
		// Pairs of games share a millisecond: the id breaks the tie.
		if i%2 == 0 {
			f.clock.Advance(time.Second)
		}
		variant := "klondike"
		if i%3 == 0 {
			variant = "relaxed"
		}
		seed := uint64(i)
		g, st := f.create(app.NewGame{Owner: owner, Variant: variant, Seed: &seed})
		if i%4 == 1 {
			_, st, _, err := f.games.Play(f.ctx, owner, g.ID, domain.Move{Type: domain.MoveResign}, st.Version, nil)
			if err != nil {
				t.Fatal(err)
			}
			g.Project(st)
		}
		all = append(all, *g)
	}
	slices.SortFunc(all, func(a, b app.Game) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	filters := []app.GameFilter{
		{},
		{Owner: "p1"},
		{Owner: "p2"},
		{Owner: "p1", Status: domain.StatusLost},
		{Owner: "p1", Status: domain.StatusInProgress, Variant: "klondike"},
		{Variant: "relaxed"},
		{Owner: "nobody"},
	}
	for _, flt := range filters {
		var want []app.Game
		for _, g := range all {
			if (flt.Owner == "" || g.Owner == flt.Owner) && (flt.Status == "" || g.Status == flt.Status) &&
				(flt.Variant == "" || g.Variant == flt.Variant) {
				want = append(want, g)
			}
		}
		for _, limit := range []int{1, 3, 4, 500} {
			flt.Limit, flt.Cursor = limit, ""
			var got []app.Game
			for pages := 0; ; pages++ {
				if pages > len(all)+1 {
					t.Fatalf("%+v: cursor does not end", flt)
				}
				page, next, err := s.List(f.ctx, flt)
				if err != nil {
					t.Fatalf("%+v: %v", flt, err)
				}
				if len(page) > limit || (next != "" && len(page) != limit) {
					t.Fatalf("%+v: page of %d, next %q", flt, len(page), next)
				}
				got = append(got, page...)
				if next == "" {
					break
				}
				flt.Cursor = next
			}
			if len(got) != len(want) {
				t.Fatalf("%+v: %d games, want %d", flt, len(got), len(want))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("%+v: game %d\n got %+v\nwant %+v", flt, i, got[i], want[i])
				}
			}
		}
	}
	// Limit outside 1..500 is clamped; a cursor List did not make is refused.
	if page, _, err := s.List(f.ctx, app.GameFilter{Limit: 0}); err != nil || len(page) != min(len(all), persistence.DefaultListLimit) {
		t.Errorf("limit 0: %d games, %v", len(page), err)
	}
	if page, _, err := s.List(f.ctx, app.GameFilter{Limit: 100000}); err != nil || len(page) != len(all) {
		t.Errorf("limit 100000: %d games, %v", len(page), err)
	}
	for _, bad := range []string{"x", "!!!", "e30", "bm90IGpzb24"} {
		if _, _, err := s.List(f.ctx, app.GameFilter{Cursor: bad}); !errors.Is(err, app.ErrBadCursor) {
			t.Errorf("cursor %q: %v, want ErrBadCursor", bad, err)
		}
	}
}

// testHintUnranks: R7.3, a hint makes the game unranked from then on. The
// store clears the record's ranked flag in the append that stores the
// hint_given event, so the record read afresh (Game, Load), and the one a
// command is decided on (LoadForCommand, where the store has it), say
// unranked, and the moves after the hint keep it so.
func testHintUnranks(t *testing.T, s Store) {
	f := newFixture(t, s)
	g, st, err := f.games.Create(f.ctx, app.NewGame{Owner: "p1", Variant: "relaxed"}) // a server seed
	if err != nil {
		t.Fatal(err)
	}
	if !g.Ranked {
		t.Fatal("a game dealt from a server seed with default options is ranked (R3)")
	}
	ev, _ := domain.HintEvent(st, domain.Hint{Verdict: domain.VerdictUnknown}, f.clock.Now())
	after := st.Clone()
	after.Apply(ev)
	if _, err := s.Append(f.ctx, g.ID, st.Version, []domain.Event{ev}, app.AfterOf(after), nil); err != nil {
		t.Fatal(err)
	}
	next := after.Clone()
	draw := drawEvent(next, next.Version+1, next.Moves+1, f.clock.Now())
	next.Apply(draw)
	if _, err := s.Append(f.ctx, g.ID, after.Version, []domain.Event{draw}, app.AfterOf(next), nil); err != nil {
		t.Fatal(err)
	}
	rec, err := s.Game(f.ctx, g.ID)
	if err != nil || rec.Ranked || rec.Version != next.Version {
		t.Errorf("Game after a hint and a move: ranked %v at version %d (%v), want unranked at %d", rec != nil && rec.Ranked,
			versionOf(rec), err, next.Version)
	}
	loaded, _, err := s.Load(f.ctx, g.ID)
	if err != nil || loaded.Ranked {
		t.Errorf("Load after a hint: ranked %v (%v), want unranked", loaded != nil && loaded.Ranked, err)
	}
	if cl, ok := s.(app.CommandLoader); ok {
		cmd, _, _, err := cl.LoadForCommand(f.ctx, g.ID)
		if err != nil || cmd.Ranked {
			t.Errorf("LoadForCommand after a hint: ranked %v (%v), want unranked", cmd != nil && cmd.Ranked, err)
		}
	}
}

// versionOf is g's version, 0 for none.
func versionOf(g *app.Game) int {
	if g == nil {
		return 0
	}
	return g.Version
}
