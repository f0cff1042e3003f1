package api_test

// Read cost against log length (BENCHMARKS.md): GET /v1/games/{id} of a game of
// 10,000 events must cost no more than 1.5 times that of a game of 10
// events. The benchmarks measure it through the real handler on
// PostgreSQL, with the server's default state cache and snapshot interval
// (the production configuration) and without the cache (every read decodes
// the newest snapshot and replays the events after it); the test checks,
// without timing anything, that the long game is served like the short
// one: from the cache, equal to a replay of its log.
//
//	go test -run XXX -bench ReadGame -benchmem ./api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// readCostEnv is a handler on a PostgreSQL store, one player and the id of
// a game with the number of events asked for.
type readCostEnv struct {
	store   *persistence.Store
	dsn     string
	handler http.Handler
	token   string
	gameID  string
}

// newReadCostEnv opens a store on a new PostgreSQL database with the
// given state cache (0: none) and makes a relaxed game of events events:
// created and played over HTTP up to 10 events, longer logs appended to
// the store directly in batches of the snapshot interval (the events of a
// random game without resign, undos included).
func newReadCostEnv(tb testing.TB, cacheBytes int64, events int) *readCostEnv {
	tb.Helper()
	dsn := pgtest.DSN(tb)
	store, err := persistence.Open(context.Background(), persistence.Config{DatabaseURL: dsn,
		SnapshotEvery: persistence.DefaultSnapshotEvery, StateCacheBytes: cacheBytes})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	games := app.NewGames(store)
	games.Now = readCostNow
	h, err := api.New(api.Config{Games: games, Players: store,
		Idempotency: store, Spec: solitaire.OpenAPIYAML,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	e := &readCostEnv{store: store, dsn: dsn, handler: h}
	var player struct {
		Token string `json:"token"`
	}
	e.call(tb, http.MethodPost, "/v1/players", `{"name":"bench"}`, http.StatusCreated, &player)
	e.token = player.Token
	var game struct {
		ID string `json:"id"`
	}
	e.call(tb, http.MethodPost, "/v1/games", `{"variant":"relaxed"}`, http.StatusCreated, &game)
	e.gameID = game.ID

	rng := rand.New(rand.NewPCG(uint64(events), 1))
	_, st, err := store.Load(context.Background(), game.ID)
	if err != nil {
		tb.Fatal(err)
	}
	if events <= 10 {
		for st.Version < events {
			m := readCostMove(tb, st, rng)
			var res struct {
				Game struct {
					Version int `json:"version"`
				} `json:"game"`
			}
			body, _ := json.Marshal(fromDomain(m))
			e.call(tb, http.MethodPost, "/v1/games/"+game.ID+"/moves", string(body), http.StatusOK, &res)
			if _, st, err = store.Load(context.Background(), game.ID); err != nil {
				tb.Fatal(err)
			}
		}
	} else {
		at := st.LastAt
		var batch []domain.Event
		for st.Version < events {
			at = at.Add(10 * time.Millisecond)
			evs := readCostNext(tb, st, rng, at)
			for _, ev := range evs {
				if st.Version >= events {
					break // a move's tail past the mark: the log ends mid-move, which Load does not mind
				}
				expected := st.Version
				st.Apply(ev)
				batch = append(batch, ev)
				if st.Version%persistence.DefaultSnapshotEvery == 0 || st.Version == events {
					if _, err := store.Append(context.Background(), game.ID, expected+1-len(batch), batch, app.AfterOf(st.Clone()), nil); err != nil {
						tb.Fatal(err)
					}
					batch = nil
				}
			}
			if st.Status.Ended() {
				tb.Fatalf("the random game ended at version %d; pick another seed", st.Version)
			}
		}
	}
	if st.Version != events {
		tb.Fatalf("game at version %d, want %d", st.Version, events)
	}
	return e
}

// readCostNow is the server clock of these tests: fixed, so that two
// reads of a game in progress answer the same elapsed_ms.
func readCostNow() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }

// readCostNext decides a random move at time at that does not end the
// game (a long random game keeps going).
func readCostNext(tb testing.TB, st *domain.State, rng *rand.Rand, at time.Time) []domain.Event {
	tb.Helper()
	for range 100 {
		m := readCostMove(tb, st, rng)
		evs, _, err := domain.Decide(st, m, at)
		if err != nil {
			tb.Fatal(err)
		}
		if m.To.Kind != domain.Foundation && len(st.Stock)+len(st.Waste) > 1 {
			return evs // stock or waste keep a card: no automatic finish (R2.6)
		}
		after := st.Clone()
		for _, ev := range evs {
			after.Apply(ev)
		}
		if !after.Status.Ended() {
			return evs
		}
	}
	tb.Fatalf("every move tried at version %d ends the game", st.Version)
	return nil
}

// readCostMove picks a random legal move other than resign, and moves to a
// foundation only rarely so that a long game does not end.
func readCostMove(tb testing.TB, st *domain.State, rng *rand.Rand) domain.Move {
	tb.Helper()
	var ms []domain.Move
	for _, m := range domain.LegalMoves(st) {
		if m.Type == domain.MoveResign || m.Type == domain.MoveAutocomplete {
			continue
		}
		if m.To.Kind == domain.Foundation && rng.IntN(4) != 0 {
			continue
		}
		ms = append(ms, m)
	}
	if len(ms) == 0 {
		tb.Fatalf("no move to make at version %d", st.Version)
	}
	return ms[rng.IntN(len(ms))]
}

// call sends a request through the handler and decodes the answer.
func (e *readCostEnv) call(tb testing.TB, method, path, body string, want int, out any) []byte {
	tb.Helper()
	var rd io.Reader
	if body != "" {
		rd = bytes.NewReader([]byte(body))
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	if rec.Code != want {
		tb.Fatalf("%s %s: %d %s, want %d", method, path, rec.Code, rec.Body.Bytes(), want)
	}
	if out != nil {
		if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
			tb.Fatal(err)
		}
	}
	return rec.Body.Bytes()
}

// benchmarkReadGame measures GET /v1/games/{id} of a game of events events.
func benchmarkReadGame(b *testing.B, events int) {
	for _, c := range []struct {
		name  string
		bytes int64
	}{{"cache", persistence.DefaultStateCacheBytes}, {"nocache", 0}} {
		b.Run(c.name, func(b *testing.B) {
			e := newReadCostEnv(b, c.bytes, events)
			req := httptest.NewRequest(http.MethodGet, "/v1/games/"+e.gameID, nil)
			req.Header.Set("Authorization", "Bearer "+e.token)
			e.call(b, http.MethodGet, "/v1/games/"+e.gameID, "", http.StatusOK, nil) // warm
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				rec := httptest.NewRecorder()
				e.handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("GET: %d %s", rec.Code, rec.Body.Bytes())
				}
			}
		})
	}
}

// BenchmarkReadGame10 reads a game of 10 events.
func BenchmarkReadGame10(b *testing.B) { benchmarkReadGame(b, 10) }

// BenchmarkReadGame10000 reads a game of 10,000 events.
func BenchmarkReadGame10000(b *testing.B) { benchmarkReadGame(b, 10_000) }

// TestReadCostFlat: a long game (2,000 events, twenty snapshots; the
// benchmark's 10,000 would make the test slow under the race detector) is
// read as a game of 10 is, from the state cache with one query (its games
// row), and what the handler answers equals what a store without a cache
// (snapshot and replay) gives. No timing: the speed is
// BenchmarkReadGame*'s.
func TestReadCostFlat(t *testing.T) {
	for _, events := range []int{10, 2_000} {
		t.Run(fmt.Sprint(events), func(t *testing.T) {
			e := newReadCostEnv(t, persistence.DefaultStateCacheBytes, events)
			path := "/v1/games/" + e.gameID
			cached := e.call(t, http.MethodGet, path, "", http.StatusOK, nil)
			before := e.store.CacheStats()
			for range 5 {
				if again := e.call(t, http.MethodGet, path, "", http.StatusOK, nil); !bytes.Equal(again, cached) {
					t.Fatalf("reads differ:\n%s\n%s", cached, again)
				}
			}
			after := e.store.CacheStats()
			if after.Hits-before.Hits != 5 || after.Misses != before.Misses {
				t.Errorf("5 reads: %d cache hits, %d misses; want 5 hits", after.Hits-before.Hits, after.Misses-before.Misses)
			}

			// The same game through a store without a cache on the same
			// database: snapshot and replay give the same answer.
			plain := &readCostEnv{token: e.token, gameID: e.gameID}
			store, err := persistence.Open(t.Context(), persistence.Config{DatabaseURL: e.dsn,
				SnapshotEvery: persistence.DefaultSnapshotEvery})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			for i, s := range []*persistence.Store{e.store, store} {
				g := app.NewGames(s)
				g.Now = readCostNow
				h, err := api.New(api.Config{Games: g, Players: s, Idempotency: s,
					Spec: solitaire.OpenAPIYAML, Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				plain.handler = h
				body := plain.call(t, http.MethodGet, path, "", http.StatusOK, nil)
				if i == 0 {
					cached = body
				} else if !bytes.Equal(body, cached) {
					t.Fatalf("cached and replayed reads differ:\n%s\n%s", cached, body)
				}
			}
		})
	}
}
