package api_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// restarted points e at a new server on e's database, as after a restart
// of the process: nothing of the first server's memory (its key locks,
// its caches) carries over.
func (e *env) restarted() {
	e.t.Helper()
	games := &app.Games{Store: e.store, Now: e.clock.Now, Random: e.games.Random, Retries: 3}
	h, err := api.New(api.Config{Games: games, Players: e.store, Idempotency: e.store,
		Ready: e.store.Ping, Spec: solitaire.OpenAPIYAML,
		Competitions: app.NewCompetitions(games, e.store), Stats: e.store, Log: e.tlog,
		Logger: slog.New(slog.NewTextHandler(testLog{e.t}, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		e.t.Fatal(err)
	}
	e.srv = httptest.NewServer(h)
	e.t.Cleanup(e.srv.Close)
	e.games = games
}

// TestIdempotencyKeyReplayFromLog: the key of a move or a create is written
// with its events, and a retry is answered from the log. Every keyed
// request of a game (its creation, moves, the resignation that ends it and
// reveals the deal) is sent again to a restarted server: each answer is
// byte for byte the first, marked Idempotent-Replayed, and nothing is
// appended.
func TestIdempotencyKeyReplayFromLog(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		type sent struct {
			q     req
			first resp
		}
		var all []sent
		keyed := func(want int, q req) resp {
			q.header = map[string]string{"Idempotency-Key": fmt.Sprintf("k-%d", len(all))}
			r := e.must(want, q)
			if r.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("a first answer marked replayed")
			}
			all = append(all, sent{q, r})
			return r
		}
		var g api.Game
		keyed(http.StatusCreated, req{method: "POST", path: "/v1/games", body: `{"variant":"klondike"}`}).decode(t, &g)
		path := "/v1/games/" + g.ID + "/moves"
		for range 12 {
			l := e.legal(g.ID)
			m := l.Moves[0]
			for _, x := range l.Moves {
				if x.Type == "move" || x.Type == "flip" {
					m = x
					break
				}
			}
			if m.Type == "resign" {
				break
			}
			body, _ := json.Marshal(m)
			keyed(http.StatusOK, req{method: "POST", path: path, body: body})
		}
		keyed(http.StatusOK, req{method: "POST", path: path, body: `{"type":"resign"}`})
		v := e.version(g.ID)

		e.restarted()
		for i, s := range all {
			r := e.do(s.q)
			if r.status != s.first.status || !bytes.Equal(r.body, s.first.body) || r.header.Get("Idempotent-Replayed") != "true" ||
				r.header.Get("ETag") != s.first.header.Get("ETag") || r.header.Get("Location") != s.first.header.Get("Location") {
				t.Fatalf("request %d (%s %s) replayed after a restart differs:\nfirst  %d %s\nreplay %d %s %v",
					i, s.q.method, s.q.path, s.first.status, s.first.body, r.status, r.body, r.header)
			}
		}
		if got := e.version(g.ID); got != v {
			t.Fatalf("replays appended: version %d, want %d", got, v)
		}
		if n := e.countGames(); n != 1 {
			t.Fatalf("%d games, want 1", n)
		}
	})
}

// TestIdempotencyKeyAfterLostAnswer: a move whose events committed but whose
// answer never reached the client (the server crashed, the connection
// dropped) is recognised when the client sends it again with its key: the
// retry is answered with the move's events from the log and appends
// nothing. (Before receipts were written with the events, the retry
// applied the move a second time.)
func TestIdempotencyKeyAfterLostAnswer(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(api.CreateGameRequest{Variant: "klondike"})
		path := "/v1/games/" + g.ID + "/moves"
		body := `{"type":"draw"}`
		fp := sha256.Sum256([]byte("POST\n" + path + "\n" + body))
		now := domain.Millis(e.clock.Now())
		receipt := &app.Receipt{Owner: e.player, Key: "lost",
			Fingerprint: fp[:], CreatedAt: now, ExpiresAt: now.Add(api.IdempotencyTTL)}
		// The move as the server makes it; its answer is lost.
		_, st, recs, err := e.games.Play(context.Background(), e.player, g.ID, domain.Move{Type: domain.MoveDraw}, -1, receipt)
		if err != nil {
			t.Fatal(err)
		}
		e.restarted()
		r := e.must(http.StatusOK, req{method: "POST", path: path, body: body, header: map[string]string{"Idempotency-Key": "lost"}})
		var res api.MoveResult
		r.decode(t, &res)
		if r.header.Get("Idempotent-Replayed") != "true" || res.Game.Version != st.Version || len(res.Events) != len(recs) ||
			res.Events[0].Hash != fmt.Sprintf("%x", recs[0].Hash) {
			t.Fatalf("retry after a lost answer: %v %s", r.header, r.body)
		}
		if v := e.version(g.ID); v != st.Version {
			t.Fatalf("the retry applied the move again: version %d, want %d", v, st.Version)
		}
		// The same key with another body is still a reuse.
		if r := e.do(req{method: "POST", path: path, body: `{"type":"resign"}`, header: map[string]string{"Idempotency-Key": "lost"}}); r.status != http.StatusUnprocessableEntity || r.problem(t).Code != api.CodeIdempotencyKeyReused {
			t.Fatalf("reused key: %d %s", r.status, r.body)
		}
	})
}
