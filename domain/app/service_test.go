package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

func TestR5_3_ServiceExpiresOnReadAndOnCommand(t *testing.T) {
	ctx := context.Background()
	t.Run("read", func(t *testing.T) {
		now := t0
		g, st := testGames(&now)
		game, _, err := g.Create(ctx, NewGame{Owner: "p", Variant: "klassik"})
		if err != nil {
			t.Fatal(err)
		}
		now = sec(299)
		if _, s, err := g.Get(ctx, "p", game.ID); err != nil || s.Status != domain.StatusInProgress {
			t.Fatalf("before the deadline: %v", err)
		}
		now = sec(301)
		for i := 0; i < 2; i++ {
			_, s, err := g.Get(ctx, "p", game.ID)
			if err != nil {
				t.Fatalf("read %d past the deadline: %v (%d events in the log)", i+1, err, st.logLen(game.ID))
			}
			if s.Status != domain.StatusExpired || !s.EndedAt.Equal(sec(300)) || st.logLen(game.ID) != 2 {
				t.Fatalf("read %d past the deadline: status %s, %d events", i+1, s.Status, st.logLen(game.ID))
			}
		}
		if _, _, _, err := g.Play(ctx, "p", game.ID, mvDraw, -1, nil); !errors.Is(err, domain.ErrGameOver) {
			t.Fatalf("command after the expiry: %v", err)
		}
	})
	t.Run("command", func(t *testing.T) {
		now := t0
		g, st := testGames(&now)
		game, _, err := g.Create(ctx, NewGame{Owner: "p", Variant: "klassik"})
		if err != nil {
			t.Fatal(err)
		}
		now = sec(300)
		_, s, evs, err := g.Play(ctx, "p", game.ID, mvDraw, -1, nil)
		var me *domain.MoveError
		if !errors.As(err, &me) || me.Reason != domain.ReasonTimeExpired || !errors.Is(err, domain.ErrTimeExpired) {
			t.Fatalf("command at the deadline: %v, want time_expired (%d events in the log)", err, st.logLen(game.ID))
		}
		if len(evs) != 0 || s.Status != domain.StatusExpired || st.logLen(game.ID) != 2 {
			t.Fatalf("command at the deadline: status %s, %d events", s.Status, st.logLen(game.ID))
		}
	})
}

// After a misfit at version N, an event at version N that fits is applied
// fully or not at all, never half (a restore keyed on the version must not
// roll back Version, Moves and Turns and keep the pile change and its undo
// Op).
// ---- The service's part of R3, R5.3, R6.1, R6.4, R6.5 -----------------------

// memGameStore is a minimal in-memory Store for the service tests: the log
// per game, the state rebuilt by Replay on Load.
type memGameStore struct {
	mu        sync.Mutex
	games     map[string]Game
	logs      map[string][]domain.Event
	conflicts int
}

func newMemGameStore() *memGameStore {
	return &memGameStore{games: map[string]Game{}, logs: map[string][]domain.Event{}}
}

func (m *memGameStore) Create(_ context.Context, g *Game, first domain.Event, _ *domain.State, _ *Receipt) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.games[g.ID]; ok {
		return domain.ErrConflict
	}
	m.games[g.ID] = *g
	m.logs[g.ID] = []domain.Event{first}
	return nil
}

func (m *memGameStore) Append(_ context.Context, id string, expected int, evs []domain.Event, after After, _ *Receipt) ([]domain.RecordedEvent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.games[id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	if len(m.logs[id]) != expected {
		// A caller that retries forever on a conflict it causes itself
		// would recurse until the stack overflows; stop it with an error.
		if m.conflicts++; m.conflicts > 20 {
			return nil, fmt.Errorf("test store: %d conflicting appends (expected %d, stream at %d)", m.conflicts, expected, len(m.logs[id]))
		}
		return nil, domain.ErrConflict
	}
	log := append(m.logs[id], evs...)
	recs, err := domain.Record(id, domain.GenesisHash, log)
	if err != nil {
		return nil, err
	}
	m.logs[id] = log
	g.Project(after.State)
	m.games[id] = g
	return recs[expected:], nil
}

func (m *memGameStore) Load(_ context.Context, id string) (*Game, *domain.State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.games[id]
	if !ok {
		return nil, nil, domain.ErrNotFound
	}
	s, bad := domain.Replay(m.logs[id])
	if bad != 0 {
		return nil, nil, errors.New(s.Fault)
	}
	return &g, s, nil
}

func (m *memGameStore) Events(_ context.Context, id string, after, limit int) ([]domain.RecordedEvent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	log, ok := m.logs[id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	recs, err := domain.Record(id, domain.GenesisHash, log)
	if err != nil {
		return nil, err
	}
	return recs[min(after, len(recs)):min(after+limit, len(recs))], nil
}

func (m *memGameStore) List(context.Context, GameFilter) ([]Game, string, error) { return nil, "", nil }

func (m *memGameStore) Game(_ context.Context, id string) (*Game, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.games[id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return &g, nil
}

func (m *memGameStore) logLen(id string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.logs[id])
}

// testGames is the service on a memory store with a settable clock.
func testGames(now *time.Time) (*Games, *memGameStore) {
	st := newMemGameStore()
	return &Games{Store: st, Now: func() time.Time { return *now }, Random: rand.Reader, Retries: 3}, st
}

// R6.1, R6.4, R3: the service deals from a fresh secret seed each time (no
// hard-coded seed), publishes the commitment of the deal it recorded, and
// ranks only default games dealt from its own seed.
func TestR6_1_ServiceSeedsAndCommitment(t *testing.T) {
	ctx := context.Background()
	now := t0
	g, st := testGames(&now)
	a, _, err := g.Create(ctx, NewGame{Owner: "p", Variant: "klondike"})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := g.Create(ctx, NewGame{Owner: "p", Variant: "klondike"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Seed == b.Seed || a.Commitment == b.Commitment || a.ID == b.ID {
		t.Fatal("two games got the same seed, commitment or id")
	}
	if !a.Ranked || !a.HasSeed {
		t.Fatalf("a default game: ranked %v has seed %v", a.Ranked, a.HasSeed)
	}
	first := st.logs[a.ID][0]
	deal := domain.Deal(a.Rules, a.Seed)
	if first.Data.Deal.String() != deal.String() || first.Data.Commitment != a.Commitment ||
		!domain.CheckCommitment(a.Commitment, deal, a.Salt) || len(a.Salt) != 32 {
		t.Fatal("R6.4: the commitment does not check against the recorded deal and salt")
	}
	seed := uint64(2026)
	c, _, err := g.Create(ctx, NewGame{Owner: "p", Variant: "klondike", Seed: &seed})
	if err != nil || c.Ranked || c.Seed != seed || st.logs[c.ID][0].Data.Deal.String() != domain.Deal(c.Rules, seed).String() {
		t.Fatalf("seeded game: %+v %v", c, err)
	}
	d, _, err := g.Create(ctx, NewGame{Owner: "p", Variant: "relaxed", Options: domain.Options{Draw: ptr(3)}})
	if err != nil || !d.Ranked {
		t.Fatalf("relaxed draw 3 must stay ranked: %v", err)
	}
	e, _, err := g.Create(ctx, NewGame{Owner: "p", Variant: "klondike", Options: domain.Options{Undo: ptr(true)}})
	if err != nil || e.Ranked {
		t.Fatalf("klondike with undo must be unranked: %v", err)
	}
	_, _, err = g.Create(ctx, NewGame{Owner: "p", Variant: "klondike", Options: domain.Options{Draw: ptr(3)}})
	var oe *domain.OptionError
	if !errors.As(err, &oe) || oe.Option != "draw" {
		t.Fatalf("klondike draw 3: %v", err)
	}
	_, _, err = g.Create(ctx, NewGame{Owner: "p", Variant: "spider"})
	var ue *domain.UnknownVariantError
	if !errors.As(err, &ue) {
		t.Fatalf("unknown variant: %v", err)
	}
}

// R6.5: a game from an explicit layout is unranked and has no seed; the
// layout gives tableau and stock only and is validated.
func TestR6_5_ServiceCreateFromLayout(t *testing.T) {
	ctx := context.Background()
	now := t0
	g, st := testGames(&now)
	v, _ := domain.LookupVariant("relaxed")
	d := domain.Deal(v.Defaults, 12)
	p := domain.Position{Tableau: d.Tableau, Stock: d.Stock} // tableau and stock only (Layout in openapi.yaml)
	game, s, err := g.Create(ctx, NewGame{Owner: "p", Variant: "relaxed", Layout: &p})
	if err != nil {
		t.Fatal(err)
	}
	if game.Ranked || game.HasSeed || s.Position().String() != d.String() || st.logs[game.ID][0].Data.Deal.String() != d.String() {
		t.Fatalf("layout game: ranked %v has seed %v", game.Ranked, game.HasSeed)
	}
	// Pile sizes are free: everything in the stock.
	all := domain.Position{Tableau: make([]domain.PileLayout, 7), Stock: domain.ShuffledPack(1, 1)}
	if _, _, err := g.Create(ctx, NewGame{Owner: "p", Variant: "klondike", Layout: &all}); err != nil {
		t.Fatalf("empty piles: %v", err)
	}
	seed := uint64(1)
	withWaste, _ := domain.ParsePosition(":KS/" + emptyPiles(6) + " - QS " + "AC2C3C4C5C6C7C8C9CTCJCQCKC/AD2D3D4D5D6D7D8D9DTDJDQDKD/AH2H3H4H5H6H7H8H9HTHJHQHKH/AS2S3S4S5S6S7S8S9STSJS" + " 0")
	for name, req := range map[string]NewGame{
		"waste and foundations": {Owner: "p", Variant: "relaxed", Layout: &withWaste},
		"seed and layout":       {Owner: "p", Variant: "relaxed", Layout: &p, Seed: &seed},
		"card missing":          {Owner: "p", Variant: "klondike", Layout: &domain.Position{Tableau: make([]domain.PileLayout, 7), Stock: domain.ShuffledPack(1, 1)[1:]}},
		"wrong pile count":      {Owner: "p", Variant: "tripleharp", Layout: &p},
	} {
		_, _, err := g.Create(ctx, req)
		var le *domain.LayoutError
		if !errors.As(err, &le) {
			t.Errorf("%s: %v, want *LayoutError", name, err)
		}
	}
}
