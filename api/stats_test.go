package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
)

// playQuick plays line in game id like playLine, but through the service
// (app.Games.Play as the game's owner) rather than over HTTP: a fast
// setup for tests whose checks are the statistics read over HTTP (the
// duel and daily tests play their wins over HTTP). It returns the game as
// token's player reads it.
func (e *cenv) playQuick(token, id string, line []domain.Move, step time.Duration) api.Game {
	e.t.Helper()
	game, _, err := e.store.Load(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, m := range line {
		e.clock.Advance(step)
		if _, _, _, err := e.games.Play(context.Background(), game.Owner, id, m, -1, nil); err != nil {
			e.t.Fatalf("game %s: %v: %v", id, m, err)
		}
	}
	var g api.Game
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id, token: token}).decode(e.t, &g)
	return g
}

// rankedWin creates a server-dealt klondike game on klondikeSeed as
// token's player and wins it, step per move; it returns the game.
func (e *cenv) rankedWin(token string, step time.Duration) api.Game {
	e.t.Helper()
	e.seeds.next(klondikeSeed)
	var g api.Game
	e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "klondike"}, token: token}).decode(e.t, &g)
	if !g.Ranked {
		e.t.Fatal("a server-dealt klondike game is not ranked")
	}
	won := e.playQuick(token, g.ID, winLine(e.t, "klondike", klondikeSeed), step)
	if won.Status != "won" {
		e.t.Fatalf("game %s: %s", g.ID, won.Status)
	}
	return won
}

// rankedLoss creates a server-dealt game of variant and resigns it after
// one draw (R2.7: a resigned game is lost).
func (e *cenv) rankedLoss(token, variant string) api.Game {
	e.t.Helper()
	var g api.Game
	e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: variant}, token: token}).decode(e.t, &g)
	e.clock.Advance(time.Second)
	e.playAs(token, g.ID, draw())
	e.clock.Advance(time.Second)
	return e.playAs(token, g.ID, resign()).Game
}

func (e *cenv) stats(query string) api.PlayerStats {
	e.t.Helper()
	var s api.PlayerStats
	e.must(http.StatusOK, req{method: "GET", path: "/v1/players/me/stats" + query}).decode(e.t, &s)
	return s
}

func statsLine(s api.VariantStats) string {
	opt := func(p any) string {
		switch v := p.(type) {
		case *int64:
			if v != nil {
				return fmt.Sprint(*v)
			}
		case *int:
			if v != nil {
				return fmt.Sprint(*v)
			}
		}
		return "-"
	}
	return fmt.Sprintf("%s/%d played %d won %d rate %d streak %d/%d time %s moves %s score %s vegas %s",
		s.Variant, s.Draw, s.Played, s.Won, s.WinRatePct, s.CurrentStreak, s.LongestStreak,
		opt(s.BestTimeMS), opt(s.FewestMoves), opt(s.BestScore), opt(s.VegasBalance))
}

// Statistics per variant and draw: a game counts once its first move is
// made; a won game counts once however often it is read or replayed; a
// resigned or expired game is a loss; streaks run across win, loss, win;
// unranked games (a client's seed or layout) count nowhere.
func TestPlayerStats(t *testing.T) {
	t.Parallel()
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		line := len(winLine(t, "klondike", klondikeSeed))
		if s := e.stats(""); s.PlayerID != e.player || len(s.Stats) != 0 {
			t.Fatalf("stats before any game: %+v", s)
		}
		w1 := e.rankedWin(e.token, time.Second)
		// Read and replay the won game many times: it still counts once.
		for v := 1; v <= w1.Version; v += 7 {
			e.must(http.StatusOK, req{method: "GET", path: fmt.Sprintf("/v1/games/%s/states/%d", w1.ID, v)})
			e.getGame(w1.ID)
		}
		e.allEvents(w1.ID, 50)
		e.rankedLoss(e.token, "klondike")
		e.rankedWin(e.token, 2*time.Second)

		// Uncounted: a game without a move, a client's seed, a layout.
		e.createGame(api.CreateGameRequest{Variant: "klondike"})
		seed := api.Seed(klondikeSeed)
		sg := e.createGame(api.CreateGameRequest{Variant: "klondike", Seed: &seed})
		if sg.Ranked {
			t.Fatal("a seeded game is ranked")
		}
		e.play(sg.ID, draw())
		e.play(sg.ID, resign())
		lg := e.createGame(api.CreateGameRequest{Variant: "klondike", Layout: runs()})
		if g := e.playQuick(e.token, lg.ID, winningLine(), time.Millisecond); g.Status != "won" || g.Ranked {
			t.Fatalf("layout game %s, ranked %v", g.Status, g.Ranked)
		}

		wantKlondike := fmt.Sprintf("klondike/1 played 3 won 2 rate 67 streak 1/1 time %d moves %d score - vegas -",
			(line-1)*1000, line)
		got := e.stats("")
		if len(got.Stats) != 1 || statsLine(got.Stats[0]) != wantKlondike {
			t.Fatalf("stats:\n%+v\nwant\n%s", got.Stats, wantKlondike)
		}
		e.rankedWin(e.token, time.Second)
		want2 := fmt.Sprintf("klondike/1 played 4 won 3 rate 75 streak 2/2 time %d moves %d score - vegas -",
			(line-1)*1000, line)
		if got := e.stats("?variant=klondike&draw=1"); len(got.Stats) != 1 || statsLine(got.Stats[0]) != want2 {
			t.Fatalf("stats after win, loss, win, win: %+v\nwant %s", got.Stats, want2)
		}

		// R5.3: a klassik game with a move that nobody touches after its
		// limit is expired by the sweeper, and is a loss.
		var kg api.Game
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "klassik"}}).decode(t, &kg)
		e.play(kg.ID, draw())
		e.clock.Advance(301 * time.Second)
		if n, err := e.games.ExpireDue(t.Context(), e.clock.Now()); err != nil || n != 1 {
			t.Fatalf("ExpireDue: %d, %v", n, err)
		}
		got = e.stats("")
		wantKlassik := "klassik/3 played 1 won 0 rate 0 streak 0/0 time - moves - score 0 vegas -"
		if len(got.Stats) != 2 || statsLine(got.Stats[0]) != want2 || statsLine(got.Stats[1]) != wantKlassik {
			t.Fatalf("stats of two variants:\n%+v\nwant\n%s\n%s", got.Stats, want2, wantKlassik)
		}
		// A variant with a draw choice lists both draws.
		rel := e.stats("?variant=relaxed")
		if len(rel.Stats) != 2 || rel.Stats[0].Draw != 1 || rel.Stats[1].Draw != 3 || rel.Stats[0].Played != 0 ||
			rel.Stats[0].BestTimeMS != nil {
			t.Errorf("relaxed stats: %+v", rel.Stats)
		}
		if d3 := e.stats("?draw=3"); len(d3.Stats) != 1 || d3.Stats[0].Variant != "klassik" {
			t.Errorf("draw-3 stats: %+v", d3.Stats)
		}
		// Another player's statistics are their own.
		_, bobToken := e.newPlayer("Bob")
		var bob api.PlayerStats
		e.must(http.StatusOK, req{method: "GET", path: "/v1/players/me/stats", token: bobToken}).decode(t, &bob)
		if len(bob.Stats) != 0 {
			t.Errorf("Bob's stats: %+v", bob.Stats)
		}

		for _, c := range []struct {
			name   string
			q      req
			status int
			code   string
		}{
			{"unknown variant", req{method: "GET", path: "/v1/players/me/stats?variant=spider"}, 422, api.CodeUnknownVariant},
			{"draw 2", req{method: "GET", path: "/v1/players/me/stats?draw=2", invalid: true}, 400, api.CodeInvalidParameter},
			{"draw not a number", req{method: "GET", path: "/v1/players/me/stats?draw=one", invalid: true}, 400, api.CodeInvalidParameter},
			{"draw the variant does not deal", req{method: "GET", path: "/v1/players/me/stats?variant=klondike&draw=3"}, 422, api.CodeInvalidField},
			{"no token", req{method: "GET", path: "/v1/players/me/stats", token: "-"}, 401, api.CodeUnauthorized},
			{"bad token", req{method: "GET", path: "/v1/players/me/stats", token: "not-a-token"}, 401, api.CodeUnauthorized},
		} {
			r := e.do(c.q)
			if p := r.problem(t); r.status != c.status || p.Code != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, r.status, p.Code, c.status, c.code)
			}
		}
	})
}

func (e *cenv) board(variant, query string) api.Leaderboard {
	e.t.Helper()
	e.sequence() // boards rank logged games only
	var b api.Leaderboard
	e.must(http.StatusOK, req{method: "GET", path: "/v1/leaderboards/" + variant + query, token: "-"}).decode(e.t, &b)
	return b
}

func entries(b api.Leaderboard) string {
	s := ""
	for _, x := range b.Entries {
		s += fmt.Sprintf("%d %s %ds; ", x.Rank, x.PlayerName, x.ElapsedMS/1000)
	}
	return s
}

// Leaderboards: each player's best ranked win, by time then moves where
// the variant does not score (equal results share a rank), by score where
// it does; unranked wins and losses are absent; period=day counts the
// games won today (UTC).
func TestLeaderboards(t *testing.T) {
	t.Parallel()
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		_, bobToken := e.newPlayer("Bob")
		_, catToken := e.newPlayer("Cat")
		_, danToken := e.newPlayer("Dan")
		n := len(winLine(t, "klondike", klondikeSeed)) - 1 // the clock starts at the first move
		e.rankedWin(e.token, 2*time.Second)
		e.rankedWin(bobToken, time.Second)
		if got, want := entries(e.board("klondike", "")), fmt.Sprintf("1 Bob %ds; 2 Ada %ds; ", n, 2*n); got != want {
			t.Fatalf("board: %s, want %s", got, want)
		}
		e.rankedWin(e.token, time.Second/2) // Ada's better win replaces her entry
		e.rankedWin(catToken, time.Second)  // Cat ties with Bob
		e.rankedLoss(danToken, "klondike")
		var dg api.Game
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", token: danToken,
			body: api.CreateGameRequest{Variant: "klondike", Layout: runs()}}).decode(t, &dg)
		if g := e.playQuick(danToken, dg.ID, winningLine(), time.Millisecond); g.Status != "won" { // unranked
			t.Fatalf("Dan's layout game: %s", g.Status)
		}
		all := e.board("klondike", "?period=all&draw=1&limit=10")
		want := fmt.Sprintf("1 Ada %ds; 2 Bob %ds; 2 Cat %ds; ", n/2, n, n)
		alt := fmt.Sprintf("1 Ada %ds; 2 Cat %ds; 2 Bob %ds; ", n/2, n, n) // ties go by game id
		if got := entries(all); got != want && got != alt {
			t.Fatalf("board: %s, want %s", got, want)
		}
		want = entries(all)
		if all.Variant != "klondike" || all.Draw != 1 || all.Period != "all" || all.Date != nil || all.OrderBy != "time" {
			t.Errorf("board header: %+v", all)
		}
		if x := all.Entries[0]; x.PlayerID != e.player || x.Moves != n+1 || x.Score != nil || x.FinishedAt == "" {
			t.Errorf("first entry: %+v", x)
		}
		if got := entries(e.board("klondike", "?limit=1")); got != fmt.Sprintf("1 Ada %ds; ", n/2) {
			t.Errorf("limit 1: %s", got)
		}
		if day := e.board("klondike", "?period=day"); entries(day) != want || day.Date == nil || *day.Date != "2026-11-29" {
			t.Errorf("today's board: %s (%v)", entries(day), day.Date)
		}

		// A scoring variant ranks by score.
		e.seeds.next(klassikSeed)
		var kg api.Game
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", token: bobToken,
			body: api.CreateGameRequest{Variant: "klassik"}}).decode(t, &kg)
		kw := e.playQuick(bobToken, kg.ID, winLine(t, "klassik", klassikSeed), time.Second)
		kb := e.board("klassik", "")
		if kb.OrderBy != "score" || kb.Draw != 3 || len(kb.Entries) != 1 || kb.Entries[0].Score == nil ||
			*kb.Entries[0].Score != *kw.Score {
			t.Errorf("klassik board: %+v", kb)
		}
		if rb := e.board("relaxed", "?draw=3"); len(rb.Entries) != 0 || rb.Draw != 3 {
			t.Errorf("relaxed draw-3 board: %+v", rb)
		}

		e.clock.Advance(24 * time.Hour)
		if day := e.board("klondike", "?period=day"); len(day.Entries) != 0 || *day.Date != "2026-11-30" {
			t.Errorf("tomorrow's board: %s", entries(day))
		}
		if got := entries(e.board("klondike", "")); got != want {
			t.Errorf("all-time board tomorrow: %s", got)
		}

		for _, c := range []struct {
			name   string
			q      req
			status int
			code   string
		}{
			{"unknown variant", req{method: "GET", path: "/v1/leaderboards/spider", token: "-"}, 422, api.CodeUnknownVariant},
			{"bad period", req{method: "GET", path: "/v1/leaderboards/klondike?period=week", token: "-", invalid: true}, 400, api.CodeInvalidParameter},
			{"limit 0", req{method: "GET", path: "/v1/leaderboards/klondike?limit=0", token: "-", invalid: true}, 400, api.CodeInvalidParameter},
			{"limit 501", req{method: "GET", path: "/v1/leaderboards/klondike?limit=501", token: "-", invalid: true}, 400, api.CodeInvalidParameter},
			{"draw the variant does not deal", req{method: "GET", path: "/v1/leaderboards/klondike?draw=3", token: "-"}, 422, api.CodeInvalidField},
		} {
			r := e.do(c.q)
			if p := r.problem(t); r.status != c.status || p.Code != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, r.status, p.Code, c.status, c.code)
			}
		}
	})
}
