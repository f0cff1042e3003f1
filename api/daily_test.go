package api_test

import (
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

func (e *cenv) playDaily(token, variant string) api.Game {
	e.t.Helper()
	var g api.Game
	r := e.must(http.StatusCreated, req{method: "POST", path: "/v1/daily/" + variant + "/games", token: token})
	r.decode(e.t, &g)
	if loc := r.header.Get("Location"); loc != "/v1/games/"+g.ID {
		e.t.Errorf("Location %q, want /v1/games/%s", loc, g.ID)
	}
	return g
}

func (e *cenv) getDaily(variant, query string) api.Daily {
	e.t.Helper()
	var d api.Daily
	e.must(http.StatusOK, req{method: "GET", path: "/v1/daily/" + variant + query, token: "-"}).decode(e.t, &d)
	return d
}

// The daily deal: the same deal for every player on a UTC date, one game
// per player and day (409 daily_already_played naming the game, even
// under racing requests), its own standings; its games private and its
// seed secret until the day is over, when games still running are
// resigned and the seed matches the commitment.
func TestDailyDeal(t *testing.T) {
	t.Parallel()
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		bob, bobToken := e.newPlayer("Bob")
		cat, catToken := e.newPlayer("Cat")
		e.seeds.next(klondikeSeed)
		ga := e.playDaily(e.token, "klondike")
		gb := e.playDaily(bobToken, "klondike")
		if !ga.Ranked || ga.Commitment != gb.Commitment || ga.Options.Draw != 1 || ga.Options.Passes == nil {
			t.Fatalf("daily games: ranked %v, commitments %s %s", ga.Ranked, ga.Commitment, gb.Commitment)
		}
		if pa, pb := e.load(ga.ID).Position(), e.load(gb.ID).Position(); !reflect.DeepEqual(pa, pb) {
			t.Fatalf("different daily deals:\n%s\n%s", pa, pb)
		}
		games := e.rowCount("games")
		r := e.must(http.StatusConflict, req{method: "POST", path: "/v1/daily/klondike/games", body: map[string]any{}})
		p := r.problem(t)
		if p.Code != api.CodeDailyAlreadyPlayed || r.header.Get("Location") != "/v1/games/"+ga.ID || !strings.Contains(p.Detail, ga.ID) {
			t.Errorf("second daily game: %+v, Location %q", p, r.header.Get("Location"))
		}
		// Racing requests of one player: exactly one game.
		var wg sync.WaitGroup
		statuses := make([]int, 4)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = e.do(req{method: "POST", path: "/v1/daily/klondike/games", token: catToken}).status
			}()
		}
		wg.Wait()
		created := 0
		for _, s := range statuses {
			switch s {
			case http.StatusCreated:
				created++
			case http.StatusConflict:
			default:
				t.Errorf("racing daily request: %d", s)
			}
		}
		if created != 1 || e.rowCount("games") != games+1 {
			t.Fatalf("racing daily requests created %d games (%d rows, was %d)", created, e.rowCount("games"), games)
		}
		// A daily deal of another variant is another deal.
		if g := e.playDaily(e.token, "relaxed"); g.Commitment == ga.Commitment {
			t.Error("relaxed and klondike share a daily deal")
		}

		won := e.playLine(e.token, ga.ID, winLine(t, "klondike", klondikeSeed), time.Second)
		if won.Status != "won" {
			t.Fatalf("Ada's daily game %s", won.Status)
		}
		e.playAs(bobToken, gb.ID, draw())
		today := e.getDaily("klondike", "")
		if today.Date != "2026-11-29" || today.Status != "open" || today.Seed != nil || today.Salt != nil ||
			today.Commitment == nil || *today.Commitment != ga.Commitment || len(today.Standings) != 3 {
			t.Fatalf("today's daily: %+v", today)
		}
		if s := today.Standings[0]; s.PlayerID != e.player || s.Status != "won" || s.Rank != 1 {
			t.Errorf("leader %+v", s)
		}
		// Ada's game has ended, but it shows today's deal: private today.
		e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + ga.ID, token: bobToken})
		e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + ga.ID + "/events", token: catToken})
		before := e.bodiesSoFar()

		// After midnight UTC: yesterday's running games are resigned when
		// the day's standings are read, and its seed is revealed.
		e.clock.Advance(12*time.Hour + time.Second)
		past := e.getDaily("klondike", "?date=2026-11-29")
		if past.Status != "ended" || len(past.Standings) != 3 {
			t.Fatalf("yesterday's daily: %+v", past)
		}
		e.checkReveal(rulesOf(t, "klondike"), ga.Commitment, past.Seed, past.Salt, before)
		for _, s := range past.Standings {
			want := map[string]string{e.player: "won", bob: "lost", cat: "lost"}[s.PlayerID]
			if s.Status != want {
				t.Errorf("yesterday's standing %+v, want %s", s, want)
			}
		}
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + ga.ID, token: bobToken})
		if again := e.getDaily("klondike", "?date=2026-11-29"); !reflect.DeepEqual(again, past) {
			t.Errorf("yesterday's daily changed:\n%+v\n%+v", again, past)
		}
		fresh := e.getDaily("klondike", "")
		if fresh.Date != "2026-11-30" || fresh.Commitment != nil || fresh.Status != "open" || len(fresh.Standings) != 0 {
			t.Errorf("today's daily before anyone played: %+v", fresh)
		}
		if g := e.playDaily(e.token, "klondike"); g.Commitment == ga.Commitment {
			t.Error("two days share a deal")
		}
	})
}

// The sweeper expires a daily game past its own limit (R5.3) and resigns
// yesterday's running daily games (R2.7) without anyone reading them, so
// the day can be revealed.
func TestDailySweep(t *testing.T) {
	t.Parallel()
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		g := e.playDaily(e.token, "klassik")
		e.clock.Advance(12 * time.Hour)
		if expired, closed, err := e.games.Sweep(t.Context(), e.clock.Now()); err != nil || expired != 1 || closed != 0 {
			t.Fatalf("sweep: %d expired, %d closed, %v", expired, closed, err)
		}
		if st := e.load(g.ID); st.Status != domain.StatusExpired {
			t.Errorf("the klassik daily game past its limit: %s", st.Status)
		}
		h := e.playDaily(e.token, "klondike")
		e.clock.Advance(23 * time.Hour)
		if expired, closed, err := e.games.Sweep(t.Context(), e.clock.Now()); err != nil || expired+closed != 0 {
			t.Fatalf("sweep during the day: %d expired, %d closed, %v", expired, closed, err)
		}
		e.clock.Advance(time.Hour)
		if expired, closed, err := e.games.Sweep(t.Context(), e.clock.Now()); err != nil || expired != 0 || closed != 1 {
			t.Fatalf("sweep: %d expired, %d closed, %v", expired, closed, err)
		}
		if st := e.load(h.ID); st.Status != domain.StatusLost {
			t.Errorf("yesterday's klondike game: %s", st.Status)
		}
	})
}

// Bad input to the daily routes: a clear 4xx problem, nothing written.
func TestDailyBadInput(t *testing.T) {
	t.Parallel()
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		for _, c := range []struct {
			name   string
			q      req
			status int
			code   string
		}{
			{"unknown variant", req{method: "POST", path: "/v1/daily/spider/games"}, 422, api.CodeUnknownVariant},
			{"body with fields", req{method: "POST", path: "/v1/daily/klondike/games", body: map[string]any{"draw": 1}, invalid: true}, 400, api.CodeInvalidBody},
			{"malformed body", req{method: "POST", path: "/v1/daily/klondike/games", body: "{,}", invalid: true}, 400, api.CodeInvalidBody},
			{"no token", req{method: "POST", path: "/v1/daily/klondike/games", token: "-"}, 401, api.CodeUnauthorized},
			{"bad token", req{method: "POST", path: "/v1/daily/klondike/games", token: "x"}, 401, api.CodeUnauthorized},
			{"standings of an unknown variant", req{method: "GET", path: "/v1/daily/spider", token: "-"}, 422, api.CodeUnknownVariant},
			{"not a date", req{method: "GET", path: "/v1/daily/klondike?date=yesterday", token: "-", invalid: true}, 400, api.CodeInvalidParameter},
			{"no such date", req{method: "GET", path: "/v1/daily/klondike?date=2026-02-30", token: "-", invalid: true}, 400, api.CodeInvalidParameter},
			{"no such month", req{method: "GET", path: "/v1/daily/klondike?date=2026-13-01", token: "-", invalid: true}, 400, api.CodeInvalidParameter},
			{"short date", req{method: "GET", path: "/v1/daily/klondike?date=2026-1-5", token: "-", invalid: true}, 400, api.CodeInvalidParameter},
			{"future date", req{method: "GET", path: "/v1/daily/klondike?date=2026-11-30", token: "-"}, 422, api.CodeInvalidField},
			{"empty date", req{method: "GET", path: "/v1/daily/klondike?date=", token: "-", invalid: true}, 400, api.CodeInvalidParameter},
		} {
			r := e.do(c.q)
			if p := r.problem(t); r.status != c.status || p.Code != c.code {
				t.Errorf("%s: %d %s, want %d %s: %s", c.name, r.status, p.Code, c.status, c.code, p.Detail)
			}
		}
		if n, m := e.rowCount("games"), e.rowCount("daily_deals"); n != 0 || m != 0 {
			t.Errorf("bad requests wrote %d games, %d daily deals", n, m)
		}
		// An old date nobody played: ended, with no deal to reveal.
		if d := e.getDaily("klondike", "?date=2020-02-29"); d.Status != "ended" || d.Commitment != nil || d.Seed != nil {
			t.Errorf("an unplayed past day: %+v", d)
		}
	})
}

// TestSharedMinAccountAge: with Competitions.MinAccountAge (the lever
// against accounts made to explore a shared deal), an account younger
// than it when the daily deal's day began, or when the duel was created,
// plays unranked and is left out of the standings; an older account plays
// ranked and ranks. Both databases, over HTTP.
func TestSharedMinAccountAge(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			e := newCompEnv(t, b, func(c *app.Competitions) { c.MinAccountAge = time.Hour })
			e.clock.Advance(24 * time.Hour) // Ada's account is a day old, and 12 h older than today
			bob, bobToken := e.newPlayer("Bob")
			e.seeds.next(klondikeSeed)
			ada := e.playDaily(e.token, "klondike")
			young := e.playDaily(bobToken, "klondike")
			if !ada.Ranked || young.Ranked {
				t.Fatalf("daily games: Ada ranked %v, Bob (new account) ranked %v", ada.Ranked, young.Ranked)
			}
			if c := ada.Competition; c == nil || c.Kind != "daily" || c.Date == nil || *c.Date != "2026-11-30" || c.ID != "daily:klondike:2026-11-30" {
				t.Errorf("a daily game's competition: %+v", c)
			}
			d := e.getDaily("klondike", "")
			if len(d.Standings) != 1 || d.Standings[0].PlayerID != e.player {
				t.Fatalf("daily standings: %+v (Bob %s must not rank)", d.Standings, bob)
			}
			e.seeds.next(klondikeSeed)
			duel := e.createDuel(map[string]any{"variant": "klondike", "winnable": false, "max_players": 3})
			e.clock.Advance(time.Minute)
			_, catToken := e.newPlayer("Cat") // made after the duel: too young for it
			if g := e.join(bobToken, duel.ID); g.Ranked {
				t.Errorf("Bob, made less than an hour before the duel: ranked")
			}
			if g := e.join(catToken, duel.ID); g.Ranked {
				t.Errorf("Cat, made after the duel: ranked")
			}
			if g := e.join(e.token, duel.ID); !g.Ranked || g.Competition == nil || g.Competition.Kind != "duel" ||
				g.Competition.ID != duel.ID || g.Competition.Date != nil {
				t.Errorf("Ada's duel game: ranked %v, competition %+v", g.Ranked, g.Competition)
			}
			if st := e.getDuel(duel.ID).Standings; len(st) != 1 || st[0].PlayerID != e.player {
				t.Errorf("duel standings: %+v", st)
			}
		})
	}
}
