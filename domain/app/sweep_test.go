package app

import (
	"context"
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// sweepStore is the memory store with the finders of a sweep: due games
// are found by loading every game, as the database's indexes would.
type sweepStore struct {
	*memGameStore
	closing map[string]bool // ids DueForClosing reports while in progress
	findErr error
}

func (m *sweepStore) ids() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for id := range m.games {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

func (m *sweepStore) DueForExpiry(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if m.findErr != nil {
		return nil, m.findErr
	}
	var out []string
	for _, id := range m.ids() {
		_, s, err := m.Load(ctx, id)
		if err != nil {
			return nil, err
		}
		if dl, ok := s.Deadline(); ok && s.Status == domain.StatusInProgress && !dl.After(now) && len(out) < limit {
			out = append(out, id)
		}
	}
	return out, nil
}

func (m *sweepStore) DueForClosing(ctx context.Context, now time.Time, limit int) ([]string, error) {
	var out []string
	for _, id := range m.ids() {
		_, s, err := m.Load(ctx, id)
		if err != nil {
			return nil, err
		}
		if m.closing[id] && s.Status == domain.StatusInProgress && len(out) < limit {
			out = append(out, id)
		}
	}
	return out, nil
}

// R5.3: the sweeper records the expiry of games nobody touches, once, with
// the score at the deadline; games without a limit or not yet due are left
// alone; a second sweep finds nothing.
func TestR5_3_ExpireDue(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	g, mem := testGames(&now)
	st := &sweepStore{memGameStore: mem}
	g.Store = st
	var timed []string
	for range SweepBatch + 3 { // more than one batch
		game, _, err := g.Create(ctx, NewGame{Owner: "ada", Variant: "klassik"})
		if err != nil {
			t.Fatal(err)
		}
		timed = append(timed, game.ID)
	}
	free, _, err := g.Create(ctx, NewGame{Owner: "ada", Variant: "klondike"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := g.Play(ctx, "ada", free.ID, domain.Move{Type: domain.MoveDraw}, -1, nil); err != nil {
		t.Fatal(err)
	}
	now = now.Add(299 * time.Second)
	if n, err := g.ExpireDue(ctx, now); err != nil || n != 0 {
		t.Fatalf("before the deadline: %d expired, %v", n, err)
	}
	now = now.Add(5 * time.Second)
	if n, err := g.ExpireDue(ctx, now); err != nil || n != len(timed) {
		t.Fatalf("after the deadline: %d expired, %v; want %d", n, err, len(timed))
	}
	for _, id := range timed {
		_, s, err := st.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		dl, _ := s.Deadline()
		if s.Status != domain.StatusExpired || !s.EndedAt.Equal(dl) || s.Version != 2 {
			t.Fatalf("game %s: %s at %s, version %d", id, s.Status, s.EndedAt, s.Version)
		}
	}
	if _, s, _ := st.Load(ctx, free.ID); s.Status != domain.StatusInProgress {
		t.Errorf("a game without a limit was ended: %s", s.Status)
	}
	if n, err := g.ExpireDue(ctx, now.Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("second sweep: %d expired, %v", n, err)
	}
	st.findErr = errors.New("database down")
	if _, err := g.ExpireDue(ctx, now); !errors.Is(err, st.findErr) {
		t.Errorf("finder error: %v", err)
	}
}

// CloseDue resigns (R2.7) the games whose competition closed, on their
// owners' behalf, or expires one already past its own limit (R5.3); games
// already ended are left alone.
func TestCloseDue(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	g, mem := testGames(&now)
	st := &sweepStore{memGameStore: mem, closing: map[string]bool{}}
	g.Store = st
	mk := func(variant string) string {
		game, _, err := g.Create(ctx, NewGame{Owner: "ada", Variant: variant, CompetitionID: "d"})
		if err != nil {
			t.Fatal(err)
		}
		st.closing[game.ID] = true
		return game.ID
	}
	running, timed, done := mk("klondike"), mk("klassik"), mk("klondike")
	if _, _, _, err := g.Play(ctx, "ada", done, domain.Move{Type: domain.MoveResign}, -1, nil); err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * time.Minute) // past klassik's 300 s
	closed, err := g.CloseDue(ctx, now)
	if err != nil || closed != 2 {
		t.Fatalf("CloseDue: %d closed, %v", closed, err)
	}
	want := map[string]domain.Status{running: domain.StatusLost, timed: domain.StatusExpired, done: domain.StatusLost}
	for id, s := range want {
		if _, got, _ := st.Load(ctx, id); got.Status != s || got.Version != 2 {
			t.Errorf("game %s: %s at version %d, want %s at 2", id, got.Status, got.Version, s)
		}
	}
	if ok, err := g.CloseGame(ctx, running); ok || err != nil {
		t.Errorf("closing an ended game: %v, %v", ok, err)
	}
	if _, err := g.CloseGame(ctx, "nope"); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("closing an unknown game: %v", err)
	}
	g.Store = mem // no finders
	if _, _, err := g.Sweep(ctx, now); !errors.Is(err, ErrNoFinder) {
		t.Errorf("sweep without finders: %v", err)
	}
}
