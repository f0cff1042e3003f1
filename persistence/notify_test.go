package persistence_test

import (
	"context"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// notifyGame creates a seeded klondike game through the service (app.Games) on
// s and returns the service and the game's id.
func notifyGame(t *testing.T, s *persistence.Store) (*app.Games, string) {
	t.Helper()
	g := app.NewGames(s)
	seed := uint64(7)
	game, _, err := g.Create(t.Context(), app.NewGame{Owner: "p1", Variant: "klondike", Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	return g, game.ID
}

// draw plays one draw in game id.
func draw(t *testing.T, g *app.Games, id string) {
	t.Helper()
	if _, _, _, err := g.Play(t.Context(), "p1", id, domain.Move{Type: domain.MoveDraw}, -1, nil); err != nil {
		t.Fatal(err)
	}
}

// woken waits up to d for a wake-up on ch.
func woken(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// TestSubscribeSQLite: on the embedded database an append wakes the
// subscribers of its game, once per pending wake-up, and no one else's;
// a cancelled subscription hears nothing more.
func TestSubscribeSQLite(t *testing.T) {
	s := openSQLite(t)
	g, id := notifyGame(t, s)
	_, other := notifyGame(t, s)
	ch, cancel := s.Subscribe(id)
	defer cancel()
	ch2, cancel2 := s.Subscribe(id)
	chOther, cancelOther := s.Subscribe(other)
	defer cancelOther()
	if woken(ch, 50*time.Millisecond) {
		t.Fatal("woken before any append")
	}
	draw(t, g, id)
	draw(t, g, id)
	if !woken(ch, time.Second) || !woken(ch2, time.Second) {
		t.Fatal("an append did not wake its subscribers")
	}
	if woken(ch, 50*time.Millisecond) {
		t.Error("two appends before a read woke the subscriber twice (wake-ups coalesce)")
	}
	if woken(chOther, 50*time.Millisecond) {
		t.Error("an append woke another game's subscriber")
	}
	cancel2()
	cancel2() // idempotent
	draw(t, g, id)
	if !woken(ch, time.Second) {
		t.Fatal("no wake-up")
	}
	if woken(ch2, 50*time.Millisecond) {
		t.Error("a cancelled subscription was woken")
	}
	if err := s.Listen(t.Context()); err != nil {
		t.Errorf("Listen on SQLite: %v", err)
	}
}

// TestListenPostgres: an append made through another Store (another
// process, as far as the database is concerned) reaches this Store's
// subscribers through LISTEN/NOTIFY; a notification sent in a transaction
// that rolls back is never delivered; after the LISTEN connection is
// killed, the listener reconnects, wakes every subscriber, and relays
// appends again.
func TestListenPostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	open := func() *persistence.Store {
		s, err := persistence.Open(t.Context(), persistence.Config{DatabaseURL: dsn, SnapshotEvery: 5})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
	// Subscribe before the listener starts: the wake-up it sends when it
	// has connected goes to the subscribers present then.
	gb, id := notifyGame(t, b)
	ch, cancel := a.Subscribe(id)
	defer cancel()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Listen(ctx) }()
	defer func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Listen: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Listen did not return after its context ended")
		}
	}()

	// Until the LISTEN is in place a notification would be lost: wait for
	// the wake-up every (re)connect sends.
	if !woken(ch, 10*time.Second) {
		t.Fatal("no wake-up when the listener connected")
	}
	for i := 0; i < 3; i++ {
		start := time.Now()
		draw(t, gb, id)
		if !woken(ch, time.Second) {
			t.Fatalf("append %d through the other store not relayed within a second", i+1)
		}
		t.Logf("relayed in %v", time.Since(start))
	}

	// pg_notify fires on commit only.
	tx, err := b.DB().BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(`SELECT pg_notify($1, $2)`, persistence.NotifyChannel, `{"game_id":"`+id+`","version":99}`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if woken(ch, 300*time.Millisecond) {
		t.Error("a rolled-back notification was delivered")
	}

	// Kill the LISTEN connection: the listener comes back.
	var killed int
	if err := b.DB().QueryRowContext(t.Context(), `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, persistence.ListenerApplicationName).
		Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d listener connections, want 1", killed)
	}
	if !woken(ch, 10*time.Second) {
		t.Fatal("no wake-up after the listener reconnected")
	}
	draw(t, gb, id)
	if !woken(ch, time.Second) {
		t.Fatal("append after the reconnect not relayed")
	}
}
