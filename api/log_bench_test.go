package api_test

// The move path with and without the transparency log's sequencer
// (BENCHMARKS.md "Transparency log"): POST /v1/games/{id}/moves through
// the real handler on each database, while a background client ends a
// game every 5 ms in both cases (the same write load; "-real": every
// 100 ms, about one game per 100 moves as in real play), and in "on" the
// sequencer appends their leaves and signs a checkpoint every 200 ms, the
// shortest interval the server allows, in "on-1s" every second, the
// server's default (its rounds are timed: how long a
// round holds the lock, on SQLite the database's write lock).
//
//	go test -run XXX -bench MoveWithSequencer -benchtime 2000x ./api

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

func BenchmarkMoveWithSequencer(b *testing.B) {
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, c := range []struct {
			name  string
			every time.Duration // 0: no sequencer
			end   time.Duration // the background client ends a game this often
		}{
			{"off", 0, 5 * time.Millisecond}, {"on", 200 * time.Millisecond, 5 * time.Millisecond},
			{"on-1s", time.Second, 5 * time.Millisecond},
			// About one game ended per 100 moves, as in real play (a won
			// Klondike game is 100-150 moves): the sequencer's share at
			// the rate it would meet.
			{"off-real", 0, 100 * time.Millisecond}, {"on-1s-real", time.Second, 100 * time.Millisecond},
		} {
			b.Run(backend+"/"+c.name, func(b *testing.B) { benchmarkMove(b, backend, c.every, c.end) })
		}
	}
}

func benchmarkMove(b *testing.B, backend string, every, end time.Duration) {
	sequencer := every > 0
	cfg := persistence.Config{SnapshotEvery: persistence.DefaultSnapshotEvery, StateCacheBytes: persistence.DefaultStateCacheBytes}
	if backend == "postgres" {
		cfg.DatabaseURL = pgtest.DSN(b)
	} else {
		cfg.SQLitePath = filepath.Join(b.TempDir(), "solitaire.db")
	}
	store, err := persistence.Open(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	skey, _, _ := note.GenerateKey(rand.Reader, "bench.example/log")
	tl, err := store.OpenLog(context.Background(), persistence.LogConfig{Key: skey})
	if err != nil {
		b.Fatal(err)
	}
	h, err := api.New(api.Config{Games: app.NewGames(store), Players: store, Idempotency: store,
		Spec: solitaire.OpenAPIYAML, Logger: slog.New(slog.DiscardHandler), Log: tl})
	if err != nil {
		b.Fatal(err)
	}
	e := &readCostEnv{store: store, handler: h}
	var player struct {
		Token string `json:"token"`
	}
	e.call(b, http.MethodPost, "/v1/players", `{"name":"bench"}`, http.StatusCreated, &player)
	e.token = player.Token
	var game struct {
		ID string `json:"id"`
	}
	e.call(b, http.MethodPost, "/v1/games", `{"variant":"relaxed"}`, http.StatusCreated, &game)

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	ended := 0
	wg.Go(func() { // the background client: a game ended every end
		t := time.NewTicker(end)
		defer t.Stop()
		for ctx.Err() == nil {
			rec := post(h, e.token, "/v1/games", `{"variant":"klondike"}`)
			id, _, _ := strings.Cut(strings.TrimPrefix(rec.Body.String(), `{"id":"`), `"`)
			if rec.Code != http.StatusCreated || post(h, e.token, "/v1/games/"+id+"/moves", `{"type":"resign"}`).Code != http.StatusOK {
				b.Errorf("background game: %d %s", rec.Code, rec.Body.Bytes())
				return
			}
			ended++
			select {
			case <-ctx.Done():
			case <-t.C:
			}
		}
	})
	var rounds []time.Duration // the sequencer's rounds that appended leaves
	if sequencer {
		wg.Go(func() { // tl.Run's loop, timed
			t := time.NewTicker(every)
			defer t.Stop()
			for ctx.Err() == nil {
				t0 := time.Now()
				if n, err := tl.Sequence(ctx); err != nil && ctx.Err() == nil {
					b.Errorf("sequence: %v", err)
					return
				} else if n > 0 {
					rounds = append(rounds, time.Since(t0))
				}
				select {
				case <-ctx.Done():
				case <-t.C:
				}
			}
		})
	}
	path := "/v1/games/" + game.ID + "/moves"
	lat := make([]time.Duration, 0, 4096)
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		rec := post(h, e.token, path, `{"type":"draw"}`)
		lat = append(lat, time.Since(t0))
		if rec.Code != http.StatusOK {
			b.Fatalf("draw: %d %s", rec.Code, rec.Body.Bytes())
		}
	}
	b.StopTimer()
	cancel()
	wg.Wait()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	if sequencer {
		c, err := tl.Checkpoint(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		slices.Sort(rounds)
		if len(rounds) > 0 {
			b.Logf("%d games ended; checkpoint of %s leaves; %d rounds, median %v, max %v", ended,
				strings.Split(string(c), "\n")[1], len(rounds), rounds[len(rounds)/2], rounds[len(rounds)-1])
		}
	} else {
		b.Logf("%d games ended", ended)
	}
}

// post sends a JSON POST through the handler.
func post(h http.Handler, token, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	req = req.WithContext(ctx)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
