package api_test

import (
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
)

func TestVariants(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		var l api.VariantList
		e.must(http.StatusOK, req{method: "GET", path: "/v1/variants", token: "-"}).decode(t, &l)
		var ids []string
		byID := map[string]api.Variant{}
		for _, v := range l.Variants {
			ids = append(ids, v.ID)
			byID[v.ID] = v
		}
		var want []string
		for _, v := range domain.Variants() {
			want = append(want, v.ID)
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("variants %v, want the R3 table %v", ids, want)
		}
		// R3: draw is a choice only in relaxed; scoring only for one deck.
		if d := byID["relaxed"].Choices.Draw; !slices.Equal(d, []int{1, 3}) {
			t.Errorf("relaxed draw choices %v", d)
		}
		if d := byID["klondike"].Choices.Draw; !slices.Equal(d, []int{1}) {
			t.Errorf("klondike draw choices %v", d)
		}
		if s := byID["harp"].Choices.Scoring; !slices.Equal(s, []string{"none"}) {
			t.Errorf("harp scoring choices %v", s)
		}
		if s := byID["klondike"].Choices.Scoring; len(s) != 4 {
			t.Errorf("klondike scoring choices %v", s)
		}
		k := byID["klassik"]
		if k.Defaults.TimeLimitS == nil || *k.Defaults.TimeLimitS != 300 || k.Defaults.Passes != nil || k.Defaults.Scoring != "klassik" {
			t.Errorf("klassik defaults %+v", k.Defaults)
		}
		if th := byID["tripleharp"]; th.Decks != 3 || th.Piles != 12 || th.Foundations != 12 || th.Sequences {
			t.Errorf("tripleharp %+v", th)
		}
	})
}

func TestCreateGameEachVariant(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		for _, v := range domain.Variants() {
			r := e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: v.ID}})
			var g api.Game
			r.decode(t, &g)
			d := v.Defaults
			if r.header.Get("ETag") != `"1"` || r.header.Get("Location") != "/v1/games/"+g.ID {
				t.Errorf("%s: ETag %q Location %q", v.ID, r.header.Get("ETag"), r.header.Get("Location"))
			}
			if g.Variant != v.ID || g.Status != "in_progress" || g.Version != 1 || g.Moves != 0 || !g.Ranked {
				t.Errorf("%s: %+v", v.ID, g)
			}
			if len(g.Tableau) != d.Piles || len(g.Foundations) != d.Foundations {
				t.Errorf("%s: %d piles, %d foundations", v.ID, len(g.Tableau), len(g.Foundations))
			}
			dealt := 0
			for i, p := range g.Tableau {
				if p.FaceDown != i || len(p.Cards) != 1 || p.FaceDownCards != nil {
					t.Errorf("%s: pile %d = %+v", v.ID, i, p)
				}
				dealt += i + 1
			}
			if g.Stock.Count != 52*d.Decks-dealt || g.Stock.Cards != nil {
				t.Errorf("%s: stock %+v", v.ID, g.Stock)
			}
			if g.Options.Draw != d.Draw || g.Passes.Used != 1 || (d.Passes == 0) != (g.Passes.Limit == nil) {
				t.Errorf("%s: options %+v passes %+v", v.ID, g.Options, g.Passes)
			}
			if (d.TimeLimitS > 0) != (g.Deadline != nil) || (d.Scoring == domain.ScoringNone) != (g.Score == nil) {
				t.Errorf("%s: deadline %v score %v", v.ID, g.Deadline, g.Score)
			}
		}
	})
}

func TestCreateGameOptionsAndSeed(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(map[string]any{"variant": "relaxed", "options": map[string]any{"draw": 3}})
		if g.Options.Draw != 3 || !g.Ranked {
			t.Errorf("relaxed draw 3: draw %d ranked %v (R3: the draw choice keeps a game ranked)", g.Options.Draw, g.Ranked)
		}
		g = e.createGame(map[string]any{"variant": "klondike", "options": map[string]any{"scoring": "vegas"}})
		if g.Ranked || g.Options.Scoring != "vegas" || g.Score == nil || *g.Score != -52 {
			t.Errorf("klondike vegas: %+v score %v (R4.4 starts at -52)", g.Options, g.Score)
		}
		g = e.createGame(map[string]any{"variant": "klondike", "options": map[string]any{"time_limit_s": 60, "undo": true, "flip": "player"}})
		if g.Ranked || g.Options.TimeLimitS == nil || *g.Options.TimeLimitS != 60 || !g.Options.Undo || g.Options.Flip != "player" {
			t.Errorf("klondike with options: %+v", g.Options)
		}

		// R6.1: a seed fixes the deal; it makes the game unranked.
		a := e.createGame(map[string]any{"variant": "klondike", "seed": 42})
		b := e.createGame(map[string]any{"variant": "klondike", "seed": 42})
		c := e.createGame(map[string]any{"variant": "klondike", "seed": "18446744073709551615"})
		if a.Ranked || !reflect.DeepEqual(a.Tableau, b.Tableau) || a.Commitment == b.Commitment {
			t.Errorf("seed 42 twice: ranked %v, same tableau %v, commitments %s %s", a.Ranked,
				reflect.DeepEqual(a.Tableau, b.Tableau), a.Commitment, b.Commitment)
		}
		if reflect.DeepEqual(a.Tableau, c.Tableau) {
			t.Errorf("seeds 42 and 2^64-1 deal the same tableau")
		}
		// Same deal as the domain's (R6.1).
		rules, _, _ := domain.Variants()[0].Resolve(domain.Options{})
		deal := domain.Deal(rules, 42)
		for i, p := range deal.Tableau {
			if a.Tableau[i].Cards[0].Code != p.Up[0].String() {
				t.Errorf("pile %d top %s, domain deals %s", i, a.Tableau[i].Cards[0].Code, p.Up[0])
			}
		}
	})
}

func TestCreateGameLayout(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(api.CreateGameRequest{Variant: "klondike", Layout: runs()})
		if g.Ranked || g.Stock.Count != 0 || len(g.Tableau[0].Cards) != 13 || g.Tableau[0].Cards[12].Code != "AS" {
			t.Errorf("layout game: %+v", g)
		}
		// A relaxed game (flip by player) may start with a face-down top.
		l := runs()
		l.Tableau[4] = api.LayoutPile{FaceDown: []string{"AS"}, FaceUp: []string{}}
		l.Tableau[0].FaceUp = l.Tableau[0].FaceUp[:12]
		g = e.createGame(api.CreateGameRequest{Variant: "relaxed", Layout: l})
		if g.Tableau[4].FaceDown != 1 || len(g.Tableau[4].Cards) != 0 || g.Tableau[4].FaceDownCards != nil {
			t.Errorf("face-down card shown: %+v", g.Tableau[4])
		}

		before := e.countGames()
		seed := api.Seed(7)
		for _, tc := range []struct {
			name   string
			mutate func(l *api.Layout)
			reason string
			seed   *api.Seed
		}{
			{"six piles", func(l *api.Layout) { l.Tableau = l.Tableau[:6] }, "pile_count", nil},
			{"no tableau", func(l *api.Layout) { l.Tableau = []api.LayoutPile{} }, "pile_count", nil},
			{"a card twice", func(l *api.Layout) { l.Stock = []string{"AS"} }, "card_count", nil},
			{"a card missing", func(l *api.Layout) { l.Tableau[3].FaceUp = l.Tableau[3].FaceUp[:12] }, "card_count", nil},
			{"a bad code", func(l *api.Layout) { l.Tableau[3].FaceUp[12] = "1X" }, "bad_card", nil},
			{"lower case", func(l *api.Layout) { l.Tableau[3].FaceUp[12] = "ad" }, "bad_card", nil},
			{"not a run", func(l *api.Layout) {
				l.Tableau[0].FaceUp[0], l.Tableau[0].FaceUp[1] = l.Tableau[0].FaceUp[1], l.Tableau[0].FaceUp[0]
			}, "not_a_run", nil},
			{"face-down top with auto flip", func(l *api.Layout) {
				l.Tableau[4] = api.LayoutPile{FaceDown: []string{"AD"}, FaceUp: []string{}}
				l.Tableau[3].FaceUp = l.Tableau[3].FaceUp[:12]
			}, "face_down_top", nil},
			{"seed and layout", func(*api.Layout) {}, "seed_and_layout", &seed},
		} {
			l := runs()
			tc.mutate(l)
			r := e.do(req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "klondike", Layout: l, Seed: tc.seed}})
			p := r.problem(t)
			if r.status != http.StatusUnprocessableEntity || p.Code != api.CodeInvalidLayout || p.Reason != tc.reason {
				t.Errorf("%s: %d %s/%s, want 422 invalid_layout/%s: %s", tc.name, r.status, p.Code, p.Reason, tc.reason, p.Detail)
			}
		}
		if n := e.countGames(); n != before {
			t.Errorf("invalid layouts created %d games", n-before)
		}
	})
}

// countGames counts the default player's games.
func (e *env) countGames() int {
	e.t.Helper()
	n, cursor := 0, ""
	for {
		path := "/v1/games?limit=500"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var l api.GameList
		e.must(http.StatusOK, req{method: "GET", path: path}).decode(e.t, &l)
		n += len(l.Games)
		if l.NextCursor == nil {
			return n
		}
		cursor = *l.NextCursor
	}
}

func TestGetGame(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(api.CreateGameRequest{Variant: "klondike"})
		r := e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID})
		if r.header.Get("ETag") != `"1"` {
			t.Errorf("ETag %q", r.header.Get("ETag"))
		}
		e.must(http.StatusNotModified, req{method: "GET", path: "/v1/games/" + g.ID, header: map[string]string{"If-None-Match": `"1"`}})
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID, header: map[string]string{"If-None-Match": `"7"`}})
		e.play(g.ID, draw())
		r = e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID, header: map[string]string{"If-None-Match": `"1"`}})
		if r.header.Get("ETag") != `"2"` {
			t.Errorf("ETag after a draw %q", r.header.Get("ETag"))
		}

		// Another player sees nothing of a game in progress, and everything
		// once it has ended (R6.4, app.Visible).
		_, other := e.newPlayer("Eve")
		for _, path := range []string{"", "/legal-moves", "/events", "/states/1"} {
			r := e.do(req{method: "GET", path: "/v1/games/" + g.ID + path, token: other})
			if r.status != http.StatusNotFound || r.problem(t).Code != api.CodeNotFound {
				t.Errorf("foreign game %s: %d", path, r.status)
			}
		}
		r = e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: draw(), token: other})
		if r.status != http.StatusNotFound {
			t.Errorf("foreign move: %d", r.status)
		}
		e.play(g.ID, resign())
		var seen api.Game
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID, token: other}).decode(t, &seen)
		if seen.Status != "lost" || seen.Stock.Cards == nil {
			t.Errorf("ended game seen by another player: %+v", seen)
		}
		r = e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: draw(), token: other})
		if r.status != http.StatusNotFound {
			t.Errorf("a move in another's ended game: %d, want 404", r.status)
		}
		e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/nope"})
	})
}

func TestListGames(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		ids := map[string]bool{}
		for _, v := range []string{"klondike", "relaxed", "harp", "klondike"} {
			ids[e.createGame(api.CreateGameRequest{Variant: v}).ID] = true
			e.clock.Advance(1000)
		}
		lost := e.createGame(api.CreateGameRequest{Variant: "klondike"})
		ids[lost.ID] = true
		e.play(lost.ID, resign())
		_, otherToken := e.newPlayer("Eve")
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "klondike"}, token: otherToken})

		var all []api.GameSummary
		cursor := ""
		for pages := 0; ; pages++ {
			path := "/v1/games?limit=2"
			if cursor != "" {
				path += "&cursor=" + url.QueryEscape(cursor)
			}
			var l api.GameList
			e.must(http.StatusOK, req{method: "GET", path: path}).decode(t, &l)
			all = append(all, l.Games...)
			if l.NextCursor == nil {
				break
			}
			if pages > 5 {
				t.Fatal("pagination does not end")
			}
			cursor = *l.NextCursor
		}
		if len(all) != len(ids) {
			t.Fatalf("listed %d games, want %d", len(all), len(ids))
		}
		for i, g := range all {
			if !ids[g.ID] {
				t.Errorf("listed a game not mine: %s", g.ID)
			}
			if i > 0 && g.CreatedAt > all[i-1].CreatedAt {
				t.Errorf("not newest first: %s after %s", g.CreatedAt, all[i-1].CreatedAt)
			}
		}

		var l api.GameList
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games?status=lost"}).decode(t, &l)
		if len(l.Games) != 1 || l.Games[0].ID != lost.ID || l.Games[0].FinishedAt == nil {
			t.Errorf("status=lost: %+v", l.Games)
		}
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games?variant=harp&status=in_progress"}).decode(t, &l)
		if len(l.Games) != 1 || l.Games[0].Variant != "harp" {
			t.Errorf("variant=harp: %+v", l.Games)
		}

		for _, tc := range []struct {
			query  string
			status int
			code   string
		}{
			{"status=bogus", 400, api.CodeInvalidParameter},
			{"limit=0", 400, api.CodeInvalidParameter},
			{"limit=501", 400, api.CodeInvalidParameter},
			{"limit=x", 400, api.CodeInvalidParameter},
			{"cursor=garbage", 400, api.CodeInvalidParameter},
			{"cursor=", 400, api.CodeInvalidParameter},
			{"variant=nope", 422, api.CodeUnknownVariant},
		} {
			r := e.do(req{method: "GET", path: "/v1/games?" + tc.query, invalid: true})
			if r.status != tc.status || r.problem(t).Code != tc.code {
				t.Errorf("%s: %d %s", tc.query, r.status, r.body)
			}
		}
	})
}
