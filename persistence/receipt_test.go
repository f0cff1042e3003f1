package persistence_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// receiptStores are the stores the receipt tests run on: SQLite, and
// PostgreSQL with the state cache (appends are one statement, group
// commit: batch.go) and without (appends are transactions).
func receiptStores(t *testing.T) map[string]func(t *testing.T) *persistence.Store {
	open := func(cfg persistence.Config) func(t *testing.T) *persistence.Store {
		return func(t *testing.T) *persistence.Store {
			if cfg.DatabaseURL == "pg" {
				cfg.DatabaseURL = pgtest.DSN(t)
			} else {
				cfg.SQLitePath = filepath.Join(t.TempDir(), "solitaire.db")
			}
			s, err := persistence.Open(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		}
	}
	return map[string]func(t *testing.T) *persistence.Store{
		"sqlite":           open(persistence.Config{StateCacheBytes: 1 << 20}),
		"postgres":         open(persistence.Config{DatabaseURL: "pg", StateCacheBytes: 1 << 20}),
		"postgres-nocache": open(persistence.Config{DatabaseURL: "pg"}),
	}
}

// TestReceipts: an app.Receipt given to an append or a create is
// written in the same transaction as the events (RELIABILITY.md "Outages"): the
// record names the game and the versions appended; a second write with the
// same key writes nothing and fails with ErrReceiptTaken, also when it is
// one of several appends written in one statement; a key held by an
// expired record is taken over. Append returns the records as the log
// holds them (hashes and positions).
func TestReceipts(t *testing.T) {
	t.Parallel()
	for name, open := range receiptStores(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			games := app.NewGames(s)
			now := domain.Millis(time.Now())
			receipt := func(key string) *app.Receipt {
				return &app.Receipt{Owner: "ada", Key: key,
					Fingerprint: []byte(key), CreatedAt: now, ExpiresAt: now.Add(persistence.IdempotencyTTL)}
			}
			record := func(key string) *app.IdempotencyRecord {
				t.Helper()
				r, err := s.GetIdempotency(t.Context(), "ada", key, now)
				if err != nil {
					t.Fatalf("record %s: %v", key, err)
				}
				return r
			}
			version := func(id string) int {
				t.Helper()
				g, err := s.Game(t.Context(), id)
				if err != nil {
					t.Fatal(err)
				}
				return g.Version
			}

			g, _, err := games.Create(t.Context(), app.NewGame{Owner: "ada", Variant: "klondike", Receipt: receipt("create")})
			if err != nil {
				t.Fatal(err)
			}
			if r := record("create"); r.GameID != g.ID || r.FirstVersion != 1 || r.LastVersion != 1 ||
				!bytes.Equal(r.Fingerprint, []byte("create")) || r.Status != 0 || len(r.Body) != 0 {
				t.Fatalf("create's record: %+v", r)
			}
			if _, _, err := games.Create(t.Context(), app.NewGame{Owner: "ada", Variant: "klondike", Receipt: receipt("create")}); !errors.Is(err, app.ErrReceiptTaken) {
				t.Fatalf("second create with the key: %v, want ErrReceiptTaken", err)
			}
			if list, _, err := s.List(t.Context(), app.GameFilter{Owner: "ada", Limit: 10}); err != nil || len(list) != 1 {
				t.Fatalf("games after a refused create: %d, %v", len(list), err)
			}

			for i := range 3 {
				key := fmt.Sprintf("draw-%d", i)
				_, st, recs, err := games.Play(t.Context(), "ada", g.ID, domain.Move{Type: domain.MoveDraw}, -1, receipt(key))
				if err != nil {
					t.Fatal(err)
				}
				if r := record(key); r.GameID != g.ID || r.FirstVersion != st.Version || r.LastVersion != st.Version {
					t.Fatalf("move's record: %+v, state at %d", r, st.Version)
				}
				stored, err := s.Events(t.Context(), g.ID, st.Version-len(recs), 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(recs) != 1 || !reflect.DeepEqual(recs, stored) || recs[0].Position == 0 || len(recs[0].Hash) != 32 {
					t.Fatalf("Append returned %+v, the log holds %+v", recs, stored)
				}
			}
			v := version(g.ID)
			if _, _, _, err := games.Play(t.Context(), "ada", g.ID, domain.Move{Type: domain.MoveDraw}, -1, receipt("draw-0")); !errors.Is(err, app.ErrReceiptTaken) {
				t.Fatalf("a move with a used key: %v, want ErrReceiptTaken", err)
			}
			if got := version(g.ID); got != v {
				t.Fatalf("a move with a used key appended: version %d, want %d", got, v)
			}

			// A key whose record expired is taken over by a receipt.
			old := now.Add(-48 * time.Hour)
			if err := s.PutIdempotency(t.Context(), app.IdempotencyRecord{Owner: "ada", Key: "old",
				Status: 200, Body: []byte("{}"), CreatedAt: old, ExpiresAt: old.Add(persistence.IdempotencyTTL)}); err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := games.Play(t.Context(), "ada", g.ID, domain.Move{Type: domain.MoveDraw}, -1, receipt("old")); err != nil {
				t.Fatalf("a move with an expired key: %v", err)
			}
			if r := record("old"); r.GameID != g.ID || r.LastVersion != v+1 {
				t.Fatalf("the expired key's new record: %+v", r)
			}

			// Many games' appends at once (one statement on PostgreSQL with
			// the cache), one of them with a used key: it alone fails.
			const n = 12
			ids := make([]string, n)
			for i := range ids {
				gi, _, err := games.Create(t.Context(), app.NewGame{Owner: "ada", Variant: "klondike"})
				if err != nil {
					t.Fatal(err)
				}
				ids[i] = gi.ID
			}
			for round := range 3 {
				errs := make([]error, n)
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i, id := range ids {
					key := fmt.Sprintf("many-%d-%d", round, i)
					if i == 5 {
						key = "draw-1" // used above
					}
					wg.Go(func() {
						<-start
						_, _, _, errs[i] = games.Play(t.Context(), "ada", id, domain.Move{Type: domain.MoveDraw}, -1, receipt(key))
					})
				}
				close(start)
				wg.Wait()
				for i, err := range errs {
					want := 2 + round
					if i == 5 {
						want = 1
						if !errors.Is(err, app.ErrReceiptTaken) {
							t.Fatalf("round %d: the append with a used key: %v, want ErrReceiptTaken", round, err)
						}
					} else if err != nil {
						t.Fatalf("round %d, game %d: %v", round, i, err)
					} else if r := record(fmt.Sprintf("many-%d-%d", round, i)); r.GameID != ids[i] || r.LastVersion != want {
						t.Fatalf("round %d, game %d: record %+v, want version %d", round, i, r, want)
					}
					if got := version(ids[i]); got != want {
						t.Fatalf("round %d, game %d: version %d, want %d", round, i, got, want)
					}
				}
			}
			t.Logf("append stats %+v", s.AppendStats())
		})
	}
}

// TestIdempotencyCap: the purge keeps at most the cap of records per
// player, the newest, whatever their expiry; other players' are kept.
func TestIdempotencyCap(t *testing.T) {
	t.Parallel()
	for name, open := range receiptStores(t) {
		if name == "postgres-nocache" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := open(t)
			t0 := domain.Millis(time.Now())
			put := func(owner string, i int) {
				at := t0.Add(time.Duration(i) * time.Second)
				if err := s.PutIdempotency(t.Context(), app.IdempotencyRecord{Owner: owner, Key: fmt.Sprint("k", i),
					Status: 200, Body: []byte("{}"), CreatedAt: at}); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 5 {
				put("heavy", i)
			}
			put("light", 0)
			put("light", 1)
			n, err := s.PurgeIdempotencyBeyond(t.Context(), t0, 3)
			if err != nil || n != 2 {
				t.Fatalf("purge: %d, %v; want the 2 oldest of heavy's", n, err)
			}
			for i := range 5 {
				_, err := s.GetIdempotency(t.Context(), "heavy", fmt.Sprint("k", i), t0)
				if kept := err == nil; kept != (i >= 2) {
					t.Errorf("heavy's key %d kept %v (%v)", i, kept, err)
				}
			}
			for i := range 2 {
				if _, err := s.GetIdempotency(t.Context(), "light", fmt.Sprint("k", i), t0); err != nil {
					t.Errorf("light's key %d: %v", i, err)
				}
			}
		})
	}
}
