package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/domain/domaintest"
	"github.com/openpatience/solitaire/domain/solver"
	"github.com/openpatience/solitaire/persistence"
)

// apiLayout is the deal of a solver line as a layout request.
func (l solvedLine) apiLayout() *api.Layout {
	out := &api.Layout{Stock: l.Stock}
	for k, pile := range l.Tableau {
		n := len(pile) - l.FaceUp[k]
		out.Tableau = append(out.Tableau, api.LayoutPile{FaceDown: append([]string{}, pile[:n]...),
			FaceUp: append([]string{}, pile[n:]...)})
	}
	return out
}

// relaxedDraw is the options of the testdata files' rules: the lines
// recycle and take back (testdata/README.md), which relaxed allows, with
// the file's draw count.
func relaxedDraw(draw int) *api.CreateOptions { return &api.CreateOptions{Draw: &draw} }

// solveLayout posts a layout to POST /v1/solve with the tests' largest
// budget (testSolverBudget: the node budget decides) and returns the answer.
func (e *env) solveLayout(variant string, opts *api.CreateOptions, l *api.Layout) api.SolveResult {
	e.t.Helper()
	var out api.SolveResult
	e.must(http.StatusOK, req{method: "POST", path: "/v1/solve", body: api.SolveRequest{Variant: variant, Options: opts,
		Layout: l, BudgetMS: num(int(testSolverBudget.Milliseconds()))}}).decode(e.t, &out)
	return out
}

// playLineOverHTTP creates a game from the layout and plays the line; it
// returns the game after the last move.
func (e *env) playLineOverHTTP(variant string, opts *api.CreateOptions, l *api.Layout, line []api.MoveRequest) api.Game {
	e.t.Helper()
	g := e.createGame(api.CreateGameRequest{Variant: variant, Options: opts, Layout: l})
	for i, m := range line {
		if g.Status != "in_progress" {
			e.t.Fatalf("the game ended (%s) before move %d of %d", g.Status, i, len(line))
		}
		g = e.play(g.ID, m).Game
	}
	return g
}

// TestR7_1_SolveTestdataDeals: every deal an independent solver won
// (testdata/klondike-solved-draw*.jsonl) comes out winnable from POST
// /v1/solve, and its line wins a game created from the same layout, played
// over HTTP, on both databases.
func TestR7_1_SolveTestdataDeals(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		won := 0
		for _, file := range []string{"klondike-solved-draw1.jsonl", "klondike-solved-draw3.jsonl"} {
			for _, l := range fewerUnderRace(loadSolvedLines(t, file), 3) {
				opts := relaxedDraw(l.Draw)
				res := e.solveLayout("relaxed", opts, l.apiLayout())
				if res.Verdict != "winnable" || len(res.Line) == 0 {
					t.Fatalf("%s %s: verdict %s with %d moves, %d nodes, %d ms", file, l.ID, res.Verdict,
						len(res.Line), res.Nodes, res.ElapsedMS)
				}
				if g := e.playLineOverHTTP("relaxed", opts, l.apiLayout(), res.Line); g.Status != "won" {
					t.Fatalf("%s %s: the line of %d moves ends %s", file, l.ID, len(res.Line), g.Status)
				}
				won++
			}
		}
		t.Logf("%d testdata deals solved and won over HTTP", won)
	})
}

// TestR7_1_SolveBadInput: a bad request gets the same 4xx problem as POST
// /v1/games would, and budget_ms is refused (not clamped) beyond the
// maximum.
func TestR7_1_SolveBadInput(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		good := runs()
		short := runs()
		short.Tableau = short.Tableau[:6]
		dup := runs()
		dup.Tableau[4].FaceUp = []string{"AS"}
		for _, c := range []struct {
			name   string
			body   any
			status int
			code   string
		}{
			{"not JSON", "{", http.StatusBadRequest, api.CodeInvalidBody},
			{"unknown field", `{"variant":"relaxed","layout":{"tableau":[],"stock":[]},"x":1}`, http.StatusBadRequest, api.CodeInvalidBody},
			{"no layout", map[string]any{"variant": "relaxed"}, http.StatusBadRequest, api.CodeInvalidBody},
			{"no variant", map[string]any{"layout": good}, http.StatusBadRequest, api.CodeInvalidBody},
			{"unknown variant", api.SolveRequest{Variant: "spider", Layout: good}, http.StatusUnprocessableEntity, api.CodeUnknownVariant},
			{"bad option", map[string]any{"variant": "klondike", "options": map[string]any{"draw": 3}, "layout": good}, http.StatusUnprocessableEntity, api.CodeInvalidOption},
			{"pile count", api.SolveRequest{Variant: "relaxed", Layout: short}, http.StatusUnprocessableEntity, api.CodeInvalidLayout},
			{"card count", api.SolveRequest{Variant: "relaxed", Layout: dup}, http.StatusUnprocessableEntity, api.CodeInvalidLayout},
			{"bad card", api.SolveRequest{Variant: "relaxed", Layout: &api.Layout{Tableau: []api.LayoutPile{{FaceDown: []string{}, FaceUp: []string{"ZZ"}}}, Stock: []string{}}}, http.StatusUnprocessableEntity, api.CodeInvalidLayout},
			{"budget 0", api.SolveRequest{Variant: "relaxed", Layout: good, BudgetMS: num(0)}, http.StatusUnprocessableEntity, api.CodeInvalidField},
			{"budget above the maximum", api.SolveRequest{Variant: "relaxed", Layout: good, BudgetMS: num(int(testSolverBudget.Milliseconds()) + 1)}, http.StatusUnprocessableEntity, api.CodeInvalidField},
		} {
			r := e.do(req{method: "POST", path: "/v1/solve", body: c.body, invalid: true})
			if p := r.problem(t); r.status != c.status || p.Code != c.code {
				t.Errorf("%s: %d %s, want %d %s: %s", c.name, r.status, p.Code, c.status, c.code, r.body)
			}
			// The same layout errors as POST /v1/games with that layout.
			if b, ok := c.body.(api.SolveRequest); ok && c.code != api.CodeInvalidField {
				g := e.do(req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: b.Variant, Layout: b.Layout}, invalid: true})
				if gp, p := g.problem(t), r.problem(t); g.status != r.status || gp.Code != p.Code || gp.Reason != p.Reason {
					t.Errorf("%s: POST /v1/games answers %d %s/%s, POST /v1/solve %d %s/%s", c.name, g.status, gp.Code,
						gp.Reason, r.status, p.Code, p.Reason)
				}
			}
		}
		e.must(http.StatusUnauthorized, req{method: "POST", path: "/v1/solve", token: "-",
			body: api.SolveRequest{Variant: "relaxed", Layout: good}})
		// At the maximum the budget is taken; the nearly won layout is winnable.
		var res api.SolveResult
		e.must(http.StatusOK, req{method: "POST", path: "/v1/solve",
			body: api.SolveRequest{Variant: "relaxed", Layout: good, BudgetMS: num(int(testSolverBudget.Milliseconds()))}}).decode(t, &res)
		if res.Verdict != "winnable" || len(res.Line) == 0 {
			t.Errorf("the runs layout: %+v", res)
		}
		var games api.GameList
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games"}).decode(t, &games)
		if len(games.Games) != 0 {
			t.Errorf("POST /v1/solve created %d games", len(games.Games))
		}
	})
}

// fewerUnderRace is ls, or only its first n under -race (raceBuild),
// where every search takes ten times as long.
func fewerUnderRace(ls []solvedLine, n int) []solvedLine {
	if raceBuild {
		return ls[:min(n, len(ls))]
	}
	return ls
}

// dealState is the state after the deal of variant from seed.
func dealState(t testing.TB, variant string, seed uint64) *domain.State {
	t.Helper()
	rules := rulesOf(t, variant)
	st := &domain.State{}
	st.Apply(domain.DealtEvent(rules, domain.Deal(rules, seed), "", start))
	if st.Fault != "" {
		t.Fatal(st.Fault)
	}
	return st
}

// winnableSeeds are the first n seeds from 1 whose deal of variant the
// solver wins within 100,000 nodes each, with the solver's line for each.
func winnableSeeds(t testing.TB, variant string, n int) (seeds []uint64, lines [][]domain.Move) {
	t.Helper()
	for seed := uint64(1); len(seeds) < n && seed < 200; seed++ {
		res := solver.Solve(context.Background(), dealState(t, variant, seed), solver.Budget{Nodes: 100_000, Time: time.Hour})
		if res.Verdict == solver.Winnable {
			seeds, lines = append(seeds, seed), append(lines, res.Line)
		}
	}
	if len(seeds) < n {
		t.Fatalf("found %d winnable %s seeds, want %d", len(seeds), variant, n)
	}
	return seeds, lines
}

// hintEvents counts the hint_given events of a game's log.
func (e *env) hintEvents(id string) int {
	e.t.Helper()
	n := 0
	for _, ev := range e.allEvents(id, 500) {
		if ev.Type == "hint_given" {
			n++
		}
	}
	return n
}

// followHints asks for a hint and plays it until the game ends; every
// hint must be winnable and append one hint_given event, and the game is
// unranked from the first on. It returns the final game and the hints.
func (e *env) followHints(g api.Game) (api.Game, int) {
	e.t.Helper()
	hints := 0
	for g.Status == "in_progress" {
		if hints > 1000 {
			e.t.Fatalf("game %s: still in progress after %d hints", g.ID, hints)
		}
		before := e.version(g.ID)
		var h api.HintResult
		r := e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + g.ID + "/hints", body: map[string]any{}})
		r.decode(e.t, &h)
		hints++
		if h.Verdict != "winnable" || h.Move == nil {
			e.t.Fatalf("game %s, hint %d: %s", g.ID, hints, r.body)
		}
		if v := e.version(g.ID); v != before+1 || r.header.Get("ETag") != quoted(v) {
			e.t.Fatalf("game %s: a hint took the log from %d to %d events (ETag %s)", g.ID, before, v, r.header.Get("ETag"))
		}
		if n := e.hintEvents(g.ID); n != hints {
			e.t.Fatalf("game %s: %d hint_given events after %d hints", g.ID, n, hints)
		}
		mid := e.getGame(g.ID)
		if mid.Ranked || mid.Moves != g.Moves {
			e.t.Fatalf("game %s after a hint: ranked %v, moves %d (were %d)", g.ID, mid.Ranked, mid.Moves, g.Moves)
		}
		g = e.play(g.ID, *h.Move).Game
	}
	return g, hints
}

// TestR7_3_FollowingHintsWins: hints followed from the deal win every
// winnable game: ranked relaxed games dealt from server seeds, and the
// testdata deals as layouts (relaxed, draw 1 and 3). Each hint appends
// hint_given, is no move (the move counter is unchanged) and unranks the
// game, which statistics and leaderboards then leave out, while the same
// deal won without hints counts.
func TestR7_3_FollowingHintsWins(t *testing.T) {
	t.Parallel()
	seeds, lines := winnableSeeds(t, "relaxed", 2)
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		for i, seed := range seeds {
			e.seeds.next(seed)
			g := e.createGame(api.CreateGameRequest{Variant: "relaxed"})
			if !g.Ranked {
				t.Fatalf("a server-seeded relaxed game is unranked")
			}
			g, hints := e.followHints(g)
			if g.Status != "won" || g.Ranked {
				t.Fatalf("seed %d: after %d hints the game is %s, ranked %v", seed, hints, g.Status, g.Ranked)
			}
			var list api.GameList
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games?status=won"}).decode(t, &list)
			for _, s := range list.Games {
				if s.ID == g.ID && s.Ranked {
					t.Errorf("the listing shows the hinted game %s ranked", g.ID)
				}
			}
			// The control: the same deal won without hints is ranked.
			e.seeds.next(seed)
			c := e.createGame(api.CreateGameRequest{Variant: "relaxed"})
			c = e.playLine(e.token, c.ID, lines[i], time.Second)
			if c.Status != "won" || !c.Ranked {
				t.Fatalf("seed %d without hints: %s, ranked %v", seed, c.Status, c.Ranked)
			}
		}
		var stats api.PlayerStats
		e.must(http.StatusOK, req{method: "GET", path: "/v1/players/me/stats"}).decode(t, &stats)
		for _, s := range stats.Stats {
			if s.Variant == "relaxed" && s.Draw == 1 && (s.Played != len(seeds) || s.Won != len(seeds)) {
				t.Errorf("relaxed statistics count the hinted games: %+v", s)
			}
		}
		e.sequence() // boards rank logged games only
		var lb api.Leaderboard
		e.must(http.StatusOK, req{method: "GET", path: "/v1/leaderboards/relaxed?draw=1", token: "-"}).decode(t, &lb)
		if len(lb.Entries) != 1 || lb.Entries[0].PlayerID != e.player {
			t.Errorf("leaderboard: %+v", lb.Entries)
		}
		for _, file := range []string{"klondike-solved-draw1.jsonl", "klondike-solved-draw3.jsonl"} {
			ls := loadSolvedLines(t, file)
			for _, l := range fewerUnderRace(ls[:min(3, len(ls))], 1) {
				g := e.createGame(api.CreateGameRequest{Variant: "relaxed", Options: relaxedDraw(l.Draw), Layout: l.apiLayout()})
				if g, hints := e.followHints(g); g.Status != "won" {
					t.Fatalf("%s %s: after %d hints the game is %s", file, l.ID, hints, g.Status)
				}
			}
		}
	})
}

// TestR7_3_HintsRefused: no hints on shared deals (403 hints_not_allowed,
// nothing appended, R7.3, R6.6), and bad requests get a 4xx problem with
// nothing changed: an unknown game, another player's game, a body that is
// not the empty object, an ended game. After a deviation from a hinted
// move the next hint is still a legal, winnable one.
func TestR7_3_HintsRefused(t *testing.T) {
	t.Parallel()
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		_, bobToken := e.newPlayer("Bob")
		daily := e.playDaily(e.token, "klondike")
		d := e.createDuel(map[string]any{"variant": "klondike", "duration_s": 3600})
		duel := e.join(e.token, d.ID)
		offered := &api.CreateOptions{Autocomplete: str("offered")} // the runs layout would finish at once
		g := e.createGame(api.CreateGameRequest{Variant: "relaxed", Options: offered, Layout: runs()})
		hint := func(id, token string, body any, status int, code string) {
			t.Helper()
			before := e.version(id)
			r := e.do(req{method: "POST", path: "/v1/games/" + id + "/hints", body: body, token: token, invalid: true})
			if p := r.problem(t); r.status != status || p.Code != code {
				t.Errorf("hint on %s: %d %s, want %d %s", id, r.status, p.Code, status, code)
			}
			if after := e.version(id); after != before {
				t.Errorf("a refused hint took %s from %d to %d events", id, before, after)
			}
		}
		hint(daily.ID, "", map[string]any{}, http.StatusForbidden, api.CodeHintsNotAllowed)
		hint(duel.ID, "", map[string]any{}, http.StatusForbidden, api.CodeHintsNotAllowed)
		hint(g.ID, bobToken, map[string]any{}, http.StatusNotFound, api.CodeNotFound)
		hint(g.ID, "", `{"x":1}`, http.StatusBadRequest, api.CodeInvalidBody)
		hint(g.ID, "", `[]`, http.StatusBadRequest, api.CodeInvalidBody)
		hint(g.ID, "", `{`, http.StatusBadRequest, api.CodeInvalidBody)
		r := e.do(req{method: "POST", path: "/v1/games/0123456789abcdef0123456789abcdef/hints", body: map[string]any{}})
		if r.status != http.StatusNotFound {
			t.Errorf("hint on an unknown game: %d", r.status)
		}
		// A hint without a body is a hint; after another move than the
		// hinted one the next hint is searched again, and is legal.
		var h api.HintResult
		e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + g.ID + "/hints"}).decode(t, &h)
		if h.Verdict != "winnable" || h.Move == nil {
			t.Fatalf("hint: %+v", h)
		}
		other := move("tableau/2", "foundation", 1)
		if *h.Move.From == "tableau/2" {
			other = move("tableau/0", "foundation", 1)
		}
		e.play(g.ID, other)
		e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + g.ID + "/hints", body: map[string]any{}}).decode(t, &h)
		if h.Verdict != "winnable" || h.Move == nil {
			t.Fatalf("hint after a deviation: %+v", h)
		}
		e.play(g.ID, *h.Move)
		e.play(g.ID, resign())
		hint(g.ID, "", map[string]any{}, http.StatusConflict, api.CodeIllegalMove)
		// Undo and hints: a hint is no move, so an undo after it takes back
		// the move before it.
		u := e.createGame(api.CreateGameRequest{Variant: "relaxed", Options: offered, Layout: runs()})
		e.play(u.ID, move("tableau/0", "foundation", 1))
		e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + u.ID + "/hints", body: map[string]any{}})
		back := e.play(u.ID, undo()).Game
		if len(back.Tableau[0].Cards) != 13 || back.Moves != 2 {
			t.Errorf("undo after a hint: tableau/0 has %d cards, moves %d", len(back.Tableau[0].Cards), back.Moves)
		}
		var a api.Audit
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + u.ID + "/audit"}).decode(t, &a)
		if !a.ChainOK || !a.ReplayOK || !a.ProjectionOK {
			t.Errorf("the audit of a game with a hint: %+v", a)
		}
	})
}

// TestR7_4_Analysis: the analysis of a won game (no losing version), of a
// winnable deal resigned at once (the resignation loses), of one played
// into a dead end (strict rules, limited passes: every pass drawn through
// without playing; the losing version checked by the solver on both sides),
// and of a shared deal's game, refused (403 game_sealed) until its
// competition closes and served after, to its owner and to others. A game
// in progress gets 409.
func TestR7_4_Analysis(t *testing.T) {
	t.Parallel()
	// A testdata deal and a strict variant (passes limited, no take-back)
	// in which the solver wins it within 50,000 nodes: the one of fewest.
	var (
		strict  solvedLine
		variant string
		nodes   int64
	)
	for _, file := range []string{"klondike-solved-draw1.jsonl", "klondike-solved-draw3.jsonl"} {
		for _, l := range loadSolvedLines(t, file) {
			for _, v := range []string{"klondike", "klondike-draw3"} {
				p, err := l.Position()
				if err != nil {
					t.Fatal(err)
				}
				p.Foundations = nil
				st, err := domain.LayoutState(v, domain.Options{}, &p, start)
				if err != nil {
					t.Fatal(err)
				}
				r := solver.Solve(context.Background(), st, solver.Budget{Nodes: 50_000})
				if r.Verdict == solver.Winnable && (variant == "" || r.Nodes < nodes) {
					strict, variant, nodes = l, v, r.Nodes
				}
			}
		}
	}
	if variant == "" {
		t.Fatal("the solver wins no testdata deal under strict rules")
	}
	t.Logf("deal %s in %s (%d nodes)", strict.ID, variant, nodes)
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		_, bobToken := e.newPlayer("Bob")
		analysis := func(id, token string) api.Analysis {
			t.Helper()
			var a api.Analysis
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id + "/analysis", token: token}).decode(t, &a)
			return a
		}
		// Won.
		w := e.createGame(api.CreateGameRequest{Variant: "relaxed", Layout: runs()})
		e.must(http.StatusConflict, req{method: "GET", path: "/v1/games/" + w.ID + "/analysis"})
		for _, m := range winningLine()[:len(winningLine())-3] {
			if g := e.play(w.ID, fromDomain(m)).Game; g.Status != "in_progress" {
				break
			}
		}
		if g := e.getGame(w.ID); g.Status != "won" {
			t.Fatalf("the runs game is %s", g.Status)
		}
		a := analysis(w.ID, "")
		if a.Winnable != "winnable" || a.LosingVersion != nil || len(a.Line) == 0 {
			t.Errorf("won game: %+v", a)
		}
		if b := analysis(w.ID, bobToken); b.Winnable != a.Winnable || len(b.Line) != len(a.Line) {
			t.Errorf("another player's analysis of an ended game: %+v", b)
		}
		// The line wins a game created from the same deal.
		if g := e.playLineOverHTTP("relaxed", nil, runs(), a.Line); g.Status != "won" {
			t.Errorf("the analysis line ends %s", g.Status)
		}
		// Resigned at once: the resignation is the losing move.
		r := e.createGame(api.CreateGameRequest{Variant: variant, Layout: strict.apiLayout()})
		e.play(r.ID, resign())
		if a := analysis(r.ID, ""); a.Winnable != "winnable" || a.LosingVersion == nil || *a.LosingVersion != 2 || len(a.Line) == 0 {
			t.Errorf("resigned at once: %+v", a)
		}
		// A dead end: draw through every pass without playing a card.
		dead := e.createGame(api.CreateGameRequest{Variant: variant, Layout: strict.apiLayout()})
		for i := 0; slices.ContainsFunc(e.legal(dead.ID).Moves, func(m api.MoveRequest) bool { return m.Type == "draw" }); i++ {
			if i > 100 {
				t.Fatal("draw is still legal after 100 draws")
			}
			e.play(dead.ID, draw())
		}
		end := e.play(dead.ID, resign()).Game
		a = analysis(dead.ID, "")
		if a.Winnable != "winnable" || a.LosingVersion == nil || *a.LosingVersion < 2 || *a.LosingVersion > end.Version {
			t.Fatalf("dead end: %+v (the game has %d events)", a, end.Version)
		}
		lv := *a.LosingVersion
		solveAt := func(v int) solver.Verdict {
			_, st, err := e.games.StateAt(context.Background(), e.player, dead.ID, v)
			if err != nil {
				t.Fatal(err)
			}
			return solver.Solve(context.Background(), st, solver.Budget{Time: testSolverBudget}).Verdict
		}
		if before, at := solveAt(lv-1), solveAt(lv); before != solver.Winnable || at != solver.Unwinnable {
			t.Errorf("losing version %d: winnable before %s, at it %s", lv, before, at)
		}
		t.Logf("dead end: losing version %d of %d", lv, end.Version)
		if again := analysis(dead.ID, ""); again.LosingVersion == nil || *again.LosingVersion != lv {
			t.Errorf("the kept analysis differs: %+v", again)
		}
		// Sealed: a daily game resigned stays unanalysed until the day ends.
		daily := e.playDaily(e.token, "klondike")
		e.must(http.StatusConflict, req{method: "GET", path: "/v1/games/" + daily.ID + "/analysis"})
		e.play(daily.ID, resign())
		if p := e.must(http.StatusForbidden, req{method: "GET", path: "/v1/games/" + daily.ID + "/analysis"}).problem(t); p.Code != api.CodeGameSealed {
			t.Errorf("sealed analysis: %s", p.Code)
		}
		e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + daily.ID + "/analysis", token: bobToken})
		closes := time.Date(start.Year(), start.Month(), start.Day()+1, 0, 0, 0, 0, time.UTC)
		e.clock.Advance(closes.Sub(e.clock.Now()))
		if a := analysis(daily.ID, ""); a.Winnable == "" || (a.Winnable == "winnable" && (a.LosingVersion == nil || *a.LosingVersion != 2)) {
			t.Errorf("daily analysis after the close: %+v", a)
		}
		analysis(daily.ID, bobToken)
		e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/0123456789abcdef0123456789abcdef/analysis"})
	})
}

// metricValue reads one sample of the server's /metrics ("" if absent).
func (e *env) metricValue(name string) string {
	e.t.Helper()
	return metricAt(e.t, e.srv.URL, name)
}

// metricAt reads one sample of /metrics of the server at url ("" if
// absent).
func metricAt(tb testing.TB, url, name string) string {
	tb.Helper()
	res, err := http.Get(url + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// TestSolverPoolBusy: with one worker and no queue, a solve sent while
// another runs gets 503 solver_busy with Retry-After at once, and /metrics
// counts the busy refusal and the verdicts by route; a move is answered
// while the solver is busy.
func TestSolverPoolBusy(t *testing.T) {
	t.Parallel()
	forEachStore(t, solverPoolBusy, func(c *api.Config) { c.Solver = api.NewSolverPool(1, 0, api.DefaultSolverShare()) })
}

func solverPoolBusy(t *testing.T, e *env) {
	long := hardLayout(t)
	g := e.createGame(api.CreateGameRequest{Variant: "relaxed", Layout: runs()})
	var wg sync.WaitGroup
	wg.Add(1)
	var first resp
	go func() {
		defer wg.Done()
		first = e.do(req{method: "POST", path: "/v1/solve",
			body: api.SolveRequest{Variant: "tripleharp", Layout: long, BudgetMS: num(3000)}})
	}()
	deadline := time.Now().Add(5 * time.Second)
	for e.metricValue("solitaire_solver_running") != "1" {
		if time.Now().After(deadline) {
			t.Fatal("the first search never ran")
		}
		time.Sleep(5 * time.Millisecond)
	}
	r := e.do(req{method: "POST", path: "/v1/solve", body: api.SolveRequest{Variant: "relaxed", Layout: runs()}})
	if p := r.problem(t); r.status != http.StatusServiceUnavailable || p.Code != api.CodeSolverBusy || r.header.Get("Retry-After") != "1" {
		t.Errorf("a second solve: %d %s, Retry-After %q", r.status, p.Code, r.header.Get("Retry-After"))
	}
	h := e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/hints", body: map[string]any{}})
	if h.status != http.StatusServiceUnavailable || e.version(g.ID) != 1 {
		t.Errorf("a hint while busy: %d, log of %d events", h.status, e.version(g.ID))
	}
	e.play(g.ID, move("tableau/0", "foundation", 1)) // moves never wait for the solver
	wg.Wait()
	if first.status != http.StatusOK {
		t.Fatalf("the first solve: %d %s", first.status, first.body)
	}
	var res api.SolveResult
	first.decode(t, &res)
	for name, want := range map[string]string{
		`solitaire_solver_busy_total{route="/v1/solve"}`:                                            "1",
		`solitaire_solver_busy_total{route="/v1/games/:id/hints"}`:                                  "1",
		fmt.Sprintf(`solitaire_solver_verdicts_total{route="/v1/solve",verdict="%s"}`, res.Verdict): "1",
		`solitaire_solver_duration_seconds_count{route="/v1/solve"}`:                                "1",
		"solitaire_solver_running":                                                                  "0",
	} {
		if got := e.metricValue(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	t.Logf("the long search: %s after %d nodes, %d ms", res.Verdict, res.Nodes, res.ElapsedMS)
}

// cardCodes are the codes of cards.
func cardCodes(cs []domain.Card) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

// anyCard matches a card code in JSON.
var anyCard = regexp.MustCompile(`"[A2-9TJQK][CDHS]"`)

// TestNoLeaksSolverRoutes: the three solver routes show no hidden card,
// seed or salt, and never more than one move of a line, while a game is in
// progress or sealed: hints (their answers and the hint_given events, read
// as every view of the game after each hint), the analysis refusals, and
// POST /v1/solve, whose answer names piles only (the client sent the cards).
func TestNoLeaksSolverRoutes(t *testing.T) {
	t.Parallel()
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		_, mallory := e.newPlayer("Mallory")
		rnd := rand.New(rand.NewPCG(14, 14))
		l := loadSolvedLines(t, "klondike-solved-draw1.jsonl")[0]
		g := e.createGame(api.CreateGameRequest{Variant: "relaxed", Options: relaxedDraw(1), Layout: l.apiLayout()})
		lg := &leakGame{id: g.ID, secrets: map[string]string{}, revealed: map[string]bool{}}
		stored, err := e.store.Game(context.Background(), g.ID)
		if err != nil {
			t.Fatal(err)
		}
		lg.secrets[fmt.Sprintf("%x", stored.Salt)] = "the salt"
		leaks := 0
		for i := 0; i < 8; i++ {
			lg.see(e.load(g.ID))
			r := e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + g.ID + "/hints", body: map[string]any{}})
			leaks += lg.scan(t, e.env, "POST hints", r.body)
			if s := string(r.body); strings.Count(s, `"type"`) > 1 || anyCard.MatchString(s) {
				t.Errorf("a hint says more than one move: %s", s)
			}
			var h api.HintResult
			r.decode(t, &h)
			lg.see(e.load(g.ID))
			lg.readAll(t, e.env, rnd, true, false)
			leaks += lg.foreign(t, e.env, mallory)
			e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/hints", body: map[string]any{}, token: mallory})
			ar := e.must(http.StatusConflict, req{method: "GET", path: "/v1/games/" + g.ID + "/analysis"})
			if anyCard.Match(ar.body) {
				t.Errorf("the analysis refusal names a card: %s", ar.body)
			}
			if h.Move == nil {
				t.Fatalf("hint %d: %+v", i, h)
			}
			mr := e.play(g.ID, *h.Move)
			if mr.Game.Status != "in_progress" {
				break
			}
		}
		lg.selfCheck(t, e.env)
		// A sealed game: the refusals name no card at all.
		daily := e.playDaily(e.token, "klondike")
		e.play(daily.ID, resign())
		for _, token := range []string{"", mallory} {
			r := e.do(req{method: "GET", path: "/v1/games/" + daily.ID + "/analysis", token: token})
			if r.status != http.StatusForbidden && r.status != http.StatusNotFound || anyCard.Match(r.body) {
				t.Errorf("sealed analysis: %d %s", r.status, r.body)
			}
		}
		r := e.must(http.StatusForbidden, req{method: "POST", path: "/v1/games/" + daily.ID + "/hints", body: map[string]any{}})
		if anyCard.Match(r.body) {
			t.Errorf("hints_not_allowed names a card: %s", r.body)
		}
		s := e.must(http.StatusOK, req{method: "POST", path: "/v1/solve",
			body: api.SolveRequest{Variant: "relaxed", Options: relaxedDraw(1), Layout: l.apiLayout()}})
		if anyCard.Match(s.body) {
			t.Errorf("the solve answer names a card: %s", truncate(s.body))
		}
		if leaks > 0 {
			t.Errorf("%d leaks", leaks)
		}
	})
}

// BenchmarkHintHTTP measures a hint over HTTP on a mid-game position: each
// iteration creates a game from a testdata deal (relaxed, draw 1, on the
// embedded database), plays the first ten moves of the solver's line, then
// times one POST /v1/games/{id}/hints, which searches (a new game has no
// cached line). It reports the median as p50-ms.
func BenchmarkHintHTTP(b *testing.B) {
	e := newBenchEnv(b)
	starts := e.hintStarts()
	b.ResetTimer()
	times := e.timeHints(starts)
	b.ReportMetric(float64(percentile(times, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(times, 90).Microseconds())/1000, "p90-ms")
}

// hintStart is a mid-game position to ask a hint from: a testdata deal
// and the first ten moves of the solver's line from it.
type hintStart struct {
	layout *api.Layout
	line   []api.MoveRequest
}

// hintStarts are the hintStarts of the testdata deals whose line is longer
// than 12 moves.
func (e *benchEnv) hintStarts() []hintStart {
	deals, err := domaintest.LoadSolved("../testdata/klondike-solved-draw1.jsonl")
	if err != nil {
		e.b.Fatal(err)
	}
	var starts []hintStart
	for _, d := range deals {
		l := solvedLine{d}
		res := e.solve(l.apiLayout())
		if res.Verdict == "winnable" && len(res.Line) > 12 {
			starts = append(starts, hintStart{l.apiLayout(), res.Line[:10]})
		}
	}
	if len(starts) == 0 {
		e.b.Fatal("no deal to start from")
	}
	return starts
}

// timeHints asks b.N hints, each on a new game at the next of starts (made
// with the timer stopped), and returns the time of each.
func (e *benchEnv) timeHints(starts []hintStart) []time.Duration {
	var times []time.Duration
	for i := 0; i < e.b.N; i++ {
		e.b.StopTimer()
		s := starts[i%len(starts)]
		id := e.create(s.layout)
		for _, m := range s.line {
			e.post("/v1/games/"+id+"/moves", m, http.StatusOK)
		}
		e.b.StartTimer()
		t0 := time.Now()
		e.post("/v1/games/"+id+"/hints", map[string]any{}, http.StatusOK)
		times = append(times, time.Since(t0))
	}
	e.b.StopTimer()
	return times
}

// percentile is the p-th percentile of ds (nearest rank); ds is sorted.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sortDurations(ds)
	i := (len(ds)*p + 99) / 100
	return ds[max(0, min(len(ds)-1, i-1))]
}

func sortDurations(ds []time.Duration) { slices.Sort(ds) }

// benchEnv is a server on the embedded database for a benchmark, with
// one player.
type benchEnv struct {
	b     *testing.B
	url   string
	token string
}

// newBenchEnv starts the server; opts change its configuration.
func newBenchEnv(b *testing.B, opts ...func(*api.Config)) *benchEnv {
	store, err := persistence.Open(context.Background(), persistence.Config{
		SQLitePath: filepath.Join(b.TempDir(), "solitaire.db"), SnapshotEvery: persistence.DefaultSnapshotEvery,
		StateCacheBytes: persistence.DefaultStateCacheBytes})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	cfg := api.Config{Games: app.NewGames(store), Players: store, Idempotency: store,
		Spec: solitaire.OpenAPIYAML}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := api.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	e := &benchEnv{b: b, url: srv.URL}
	var p api.PlayerCreated
	e.decode(e.post("/v1/players", api.NewPlayer{Name: "Bench"}, http.StatusCreated), &p)
	e.token = p.Token
	return e
}

// post sends body as JSON as the player and returns the response body; it
// fails unless the status is want.
func (e *benchEnv) post(path string, body any, want int) []byte {
	status, out, err := e.send(e.token, path, body)
	if err != nil || status != want {
		e.b.Fatalf("POST %s: %d %s, want %d (%v)", path, status, out, want, err)
	}
	return out
}

// send POSTs body as JSON with token ("" for none) and returns the
// response's status and body. Safe for concurrent use.
func (e *benchEnv) send(token, path string, body any) (int, []byte, error) {
	j, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	hr, err := http.NewRequest("POST", e.url+path, bytes.NewReader(j))
	if err != nil {
		return 0, nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	if token != "" {
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, out, err
}

func (e *benchEnv) decode(b []byte, v any) {
	if err := json.Unmarshal(b, v); err != nil {
		e.b.Fatal(err)
	}
}

// solve posts a relaxed draw-1 layout to POST /v1/solve.
func (e *benchEnv) solve(l *api.Layout) api.SolveResult {
	var out api.SolveResult
	e.decode(e.post("/v1/solve", api.SolveRequest{Variant: "relaxed", Options: relaxedDraw(1), Layout: l}, http.StatusOK), &out)
	return out
}

// create makes a relaxed draw-1 game of the layout and returns its id.
func (e *benchEnv) create(l *api.Layout) string {
	var g api.Game
	e.decode(e.post("/v1/games", api.CreateGameRequest{Variant: "relaxed", Options: relaxedDraw(1), Layout: l}, http.StatusCreated), &g)
	return g.ID
}
