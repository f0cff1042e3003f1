package persistence_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// TestOpenDefaultPath: without DATABASE_URL or a path, the embedded
// database is the file solitaire.db in the working directory.
func TestOpenDefaultPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	s, err := persistence.Open(t.Context(), persistence.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Dialect() != persistence.DialectSQLite {
		t.Errorf("dialect %q, want sqlite", s.Dialect())
	}
	if _, err := os.Stat(filepath.Join(dir, persistence.DefaultSQLitePath)); err != nil {
		t.Errorf("default database file: %v", err)
	}
	var mode string
	if err := s.DB().QueryRowContext(t.Context(), "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	// The rest of the connection settings (store.go, sqliteParams):
	// synchronous NORMAL is 1.
	for pragma, want := range map[string]int{"synchronous": 1, "foreign_keys": 1, "busy_timeout": 10000} {
		var got int
		if err := s.DB().QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", pragma, got, err, want)
		}
	}
	if err := s.Ping(t.Context()); err != nil {
		t.Errorf("ping: %v", err)
	}
}

// TestMigrate: Migrate applies the schema with goose (and only goose), is
// idempotent, and leaves a database Open accepts, on both dialects.
func TestMigrate(t *testing.T) {
	for _, cfg := range []persistence.Config{
		{DatabaseURL: pgtest.DSN(t)},
		{SQLitePath: filepath.Join(t.TempDir(), "m.db")},
	} {
		for range 2 {
			if err := persistence.Migrate(t.Context(), cfg); err != nil {
				t.Fatal(err)
			}
		}
		s, err := persistence.Open(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var version int64
		if err := s.DB().QueryRowContext(t.Context(),
			"SELECT MAX(version_id) FROM goose_db_version WHERE is_applied").Scan(&version); err != nil || version < 1 {
			t.Errorf("%s: goose version %d, %v", s.Dialect(), version, err)
		}
		for _, table := range []string{"games", "events", "snapshots", "idempotency_keys", "players"} {
			var n int
			if err := s.DB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil || n != 0 {
				t.Errorf("%s: table %s: %d rows, %v", s.Dialect(), table, n, err)
			}
		}
		s.Close()
	}
}

// TestOpenErrors: a database that cannot be opened gives a wrapped error.
func TestOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for _, cfg := range []persistence.Config{
		{DatabaseURL: "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"},
		{SQLitePath: filepath.Join(t.TempDir(), "no", "such", "dir", "x.db")},
		{SQLitePath: "odd?name.db"},
	} {
		s, err := persistence.Open(ctx, cfg)
		if err == nil {
			s.Close()
			t.Errorf("Open(%+v) succeeded", cfg)
			continue
		}
		if !strings.HasPrefix(err.Error(), "persistence: open") {
			t.Errorf("Open(%+v): %v, want a persistence: open error", cfg, err)
		}
	}
}

// TestConflictText: a race lost is ErrConflict with no driver text, on
// both dialects (no database error text reaches a client).
func TestConflictText(t *testing.T) {
	for name, open := range map[string]func(*testing.T) *persistence.Store{"postgres": openPostgres, "sqlite": openSQLite} {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			p := &app.Player{ID: "a", Name: "A", TokenHash: make([]byte, 32)}
			if err := s.CreatePlayer(t.Context(), p); err != nil {
				t.Fatal(err)
			}
			err := s.CreatePlayer(t.Context(), p)
			if !errors.Is(err, domain.ErrConflict) {
				t.Fatalf("duplicate player: %v", err)
			}
			if msg := err.Error(); msg != "persistence: create player: "+domain.ErrConflict.Error() {
				t.Errorf("error text %q carries more than the conflict", msg)
			}
		})
	}
}

// TestSnapshotSetting: 0 disables snapshots, a negative value means the
// default interval.
func TestSnapshotSetting(t *testing.T) {
	for _, tc := range []struct{ every, events, want int }{
		{0, 120, 0},
		{-1, 120, 1},
		{persistence.DefaultSnapshotEvery, 250, 2},
	} {
		s, err := persistence.Open(t.Context(), persistence.Config{
			SQLitePath: filepath.Join(t.TempDir(), "s.db"), SnapshotEvery: tc.every})
		if err != nil {
			t.Fatal(err)
		}
		id, _ := appendN(t, s, tc.events)
		s.FlushSnapshots() // written after their appends
		var n int
		if err := s.DB().QueryRowContext(t.Context(), "SELECT COUNT(*) FROM snapshots WHERE game_id = ?", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != tc.want {
			t.Errorf("SnapshotEvery %d, %d events: %d snapshots, want %d", tc.every, tc.events, n, tc.want)
		}
		s.Close()
	}
}

// TestSQLiteTwoStores: two stores (as two processes would) on one SQLite
// file, racing on one game: the busy timeout turns locks into waits, so
// every loser gets ErrConflict and never "database is locked".
func TestSQLiteTwoStores(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	var stores [2]*persistence.Store
	for i := range stores {
		s, err := persistence.Open(t.Context(), persistence.Config{SQLitePath: path, SnapshotEvery: 5})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[i] = s
	}
	id, st := appendN(t, stores[0], 1)
	for round := range 5 {
		const writers = 16
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				next := st.Clone()
				e := drawEvent(next, st.LastAt.Add(time.Duration(round*1000+i+1)*time.Millisecond))
				next.Apply(e)
				<-start
				_, errs[i] = stores[i%2].Append(t.Context(), id, st.Version, []domain.Event{e}, app.AfterOf(next), nil)
			})
		}
		close(start)
		wg.Wait()
		wins := 0
		for i, err := range errs {
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, domain.ErrConflict):
				t.Fatalf("round %d writer %d: %v", round, i, err)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d winners", round, wins)
		}
		_, loaded, err := stores[round%2].Load(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if loaded.Version != st.Version+1 {
			t.Fatalf("round %d: version %d after one winning append to %d", round, loaded.Version, st.Version)
		}
		st = loaded
	}
	if v, err := stores[1].VerifyChain(t.Context(), id); err != nil || v != 0 {
		t.Fatalf("VerifyChain = %d, %v", v, err)
	}
}

// appendN creates a relaxed game in s and appends n draw events one by
// one; it returns the game's id and state.
func appendN(t testing.TB, s *persistence.Store, n int) (string, *domain.State) {
	t.Helper()
	seed := uint64(99)
	g, st, err := app.NewGames(s).Create(context.Background(), app.NewGame{Owner: "p1", Variant: "relaxed", Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now()
	for range n {
		at = at.Add(time.Second)
		e := drawEvent(st, at)
		st.Apply(e)
		if _, err := s.Append(context.Background(), g.ID, st.Version-1, []domain.Event{e}, app.AfterOf(st.Clone()), nil); err != nil { // the store keeps the clone
			t.Fatal(err)
		}
	}
	return g.ID, st
}

// drawEvent is the next turn of a draw-and-recycle game (relaxed: passes
// unlimited): the top stock card drawn, or the waste turned over.
func drawEvent(st *domain.State, at time.Time) domain.Event {
	e := domain.Event{Version: st.Version + 1, OccurredAt: domain.Millis(at),
		Data: domain.EventData{V: domain.PayloadVersion, Move: st.Moves + 1}}
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
