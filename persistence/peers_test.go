package persistence_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// TestNotifyOnlyWithPeers: a store that listens alone on its database
// wakes its own subscribers without sending notifications (each would be
// a transaction); once another store starts listening, it hears that
// store's hello and notifies through PostgreSQL again, so the other
// store's subscribers hear of its appends.
func TestNotifyOnlyWithPeers(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	open := func() *persistence.Store {
		s, err := persistence.Open(t.Context(), persistence.Config{DatabaseURL: dsn})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	listen := func(s *persistence.Store) {
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.Listen(ctx) }()
		t.Cleanup(func() { stop(); <-done })
	}
	// A listener that is no store (and does not name itself as one): it
	// hears whatever is sent, and no store counts it as a peer.
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	probe, err := pgx.ConnectConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close(context.Background())
	if _, err := probe.Exec(t.Context(), "LISTEN "+persistence.NotifyChannel); err != nil {
		t.Fatal(err)
	}
	heard := func(d time.Duration) []string {
		var out []string
		ctx, cancel := context.WithTimeout(t.Context(), d)
		defer cancel()
		for {
			n, err := probe.WaitForNotification(ctx)
			if err != nil {
				return out
			}
			out = append(out, n.Payload)
		}
	}

	a := open()
	ga, id := notifyGame(t, a)
	ch, cancel := a.Subscribe(id)
	defer cancel()
	listen(a)
	if !woken(ch, 10*time.Second) {
		t.Fatal("no wake-up when the listener connected")
	}
	time.Sleep(500 * time.Millisecond) // past the hello's grace
	heard(10 * time.Millisecond)       // a's hello
	draw(t, ga, id)
	if !woken(ch, time.Second) {
		t.Fatal("an append did not wake its own store's subscriber")
	}
	if got := heard(500 * time.Millisecond); len(got) != 0 {
		t.Fatalf("a store alone sent notifications: %v", got)
	}

	b := open()
	chb, cancelb := b.Subscribe(id)
	defer cancelb()
	listen(b)
	if !woken(chb, 10*time.Second) {
		t.Fatal("no wake-up when the second listener connected")
	}
	time.Sleep(500 * time.Millisecond)
	heard(10 * time.Millisecond) // the hellos
	for i := range 3 {
		draw(t, ga, id)
		if !woken(chb, 2*time.Second) {
			t.Fatalf("append %d through the first store did not reach the second's subscriber", i+1)
		}
	}
	if got := heard(500 * time.Millisecond); len(got) == 0 {
		t.Fatal("with a peer listening, no notification was sent")
	}
}
