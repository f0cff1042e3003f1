package api_test

// The cost of one move through the real handler (BENCHMARKS.md "One move's
// cost per database"): POST /v1/games/{id}/moves with a draw to a relaxed game (always
// legal), on each database, with the server's default state cache and
// snapshot interval. Run with -benchmem: allocations per move are the
// figure to watch (GC work grows with them); time per move includes the
// database's commit.
//
//	go test -run XXX -bench 'Move$' -benchmem ./api

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

func BenchmarkMove(b *testing.B) { benchMove(b, "") }

// BenchmarkMoveLegalMoves is BenchmarkMove with the legal moves asked for
// in the answer (?include=legal_moves, what a frontend saves a request
// with): run beside BenchmarkMove, the difference is their cost.
func BenchmarkMoveLegalMoves(b *testing.B) { benchMove(b, "?include=legal_moves") }

// benchMove plays draws through the real handler with query q on the move
// route, on each database.
func benchMove(b *testing.B, q string) {
	for _, backend := range []string{"sqlite", "postgres"} {
		b.Run(backend, func(b *testing.B) {
			cfg := persistence.Config{SnapshotEvery: persistence.DefaultSnapshotEvery,
				StateCacheBytes: persistence.DefaultStateCacheBytes}
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
			// The server's own set-up: players from a cache (no query per
			// move), the real logger's level check.
			h, err := api.New(api.Config{Games: app.NewGames(store), Players: persistence.NewPlayerCache(store, 100, time.Minute),
				Idempotency: store, Spec: solitaire.OpenAPIYAML,
				Logger: slog.New(slog.DiscardHandler)})
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
			path := "/v1/games/" + game.ID + "/moves"
			if rec := post(h, e.token, path, `{"type":"draw"}`); rec.Code != http.StatusOK { // warms the caches
				b.Fatalf("draw: %d %s", rec.Code, rec.Body.Bytes())
			}
			b.ReportAllocs()
			for b.Loop() {
				if rec := post(h, e.token, path+q, `{"type":"draw"}`); rec.Code != http.StatusOK {
					b.Fatalf("draw: %d %s", rec.Code, rec.Body.Bytes())
				}
			}
		})
	}
}
