package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"

	"github.com/openpatience/solitaire/domain/supply"
)

// ---- the supply in tests ----

// gate is a random source that blocks until opened: a supply drawing its
// seeds from it proves nothing before open, so a test sees an empty
// supply, then a filling one.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) Read(p []byte) (int, error) {
	<-g.ch
	return rand.Read(p)
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// waitReady waits until the env's supply holds n proven deals of rules,
// for at most two minutes (the machine may be busy; the supply proves on
// one goroutine).
func (e *env) waitReady(rules domain.Rules, n int) {
	e.t.Helper()
	e.supply.Want(rules)
	deadline := time.Now().Add(2 * time.Minute)
	for e.supply.Ready(rules) < n {
		if time.Now().After(deadline) {
			proven, tried := e.supply.Counts()
			e.t.Fatalf("the supply has %d of %d %s deals after 2 minutes (%d proven of %d tried)",
				e.supply.Ready(rules), n, rules.Variant, proven, tried)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// record is the stored game record (its secret line included).
func (e *env) record(id string) *app.Game {
	e.t.Helper()
	g, err := e.store.Game(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return g
}

func (e *env) auditAs(id, token string) api.Audit {
	e.t.Helper()
	var a api.Audit
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id + "/audit", token: token}).decode(e.t, &a)
	return a
}

// lineSecrets are the forms in which a winning line could leak: its
// canonical encoding (the committed bytes) and its JSON as move requests.
func lineSecrets(t testing.TB, line []domain.Move) []string {
	t.Helper()
	reqs := make([]api.MoveRequest, len(line))
	for i, m := range line {
		reqs[i] = fromDomain(m)
	}
	b, err := json.Marshal(reqs)
	if err != nil {
		t.Fatal(err)
	}
	return []string{domain.EncodeLine(line), string(b), `"solution":[`}
}

// noLineIn fails if any body holds a form of the line.
func noLineIn(t testing.TB, what string, bodies [][]byte, line []domain.Move) {
	t.Helper()
	for _, s := range lineSecrets(t, line) {
		for i, b := range bodies {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s: response %d shows the winning line (%q) before the deal may be revealed: %s", what, i, truncate([]byte(s)), truncate(b))
			}
		}
	}
}

func (e *env) bodiesSince(n int) [][]byte {
	e.tr.mu.Lock()
	defer e.tr.mu.Unlock()
	return slices.Clone(e.tr.bodies[n:])
}

func (e *env) bodyCount() int {
	e.tr.mu.Lock()
	defer e.tr.mu.Unlock()
	return len(e.tr.bodies)
}

var bands = []string{"easy", "medium", "hard", "expert"}

// layoutOf is the deal of (rules, seed) as a layout request (R6.5).
func layoutOf(rules domain.Rules, seed uint64) *api.Layout {
	deal := domain.Deal(rules, seed)
	l := &api.Layout{Stock: layoutCodes(deal.Stock)}
	for _, p := range deal.Tableau {
		l.Tableau = append(l.Tableau, api.LayoutPile{FaceDown: layoutCodes(p.Down), FaceUp: layoutCodes(p.Up)})
	}
	return l
}

// layoutCodes are the codes of cs, [] when there are none.
func layoutCodes(cs []domain.Card) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

// TestR7_2_WinnableGame: POST /v1/games with winnable true deals a proven
// deal: ranked, with solution_commitment and a difficulty band; no route
// (game, legal moves, listing, events as JSON and NDJSON, states, audit,
// stream) shows the line while the game is in progress; once it has ended
// (won by playing the line, or resigned) the audit reveals it, solution_ok
// holds, the line matches the commitment under the revealed salt, and it
// wins a fresh layout game of the revealed deal. Statistics and the
// leaderboard keep winnable and random deals apart.
func TestR7_2_WinnableGame(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		rules := rulesOf(t, "relaxed")
		e.waitReady(rules, 2)
		n0 := e.bodyCount()
		g := e.createGame(map[string]any{"variant": "relaxed", "winnable": true})
		if !g.Winnable || !g.Ranked || g.SolutionCommitment == nil || !strings.HasPrefix(*g.SolutionCommitment, "sha256:") ||
			g.Difficulty == nil || !slices.Contains(bands, *g.Difficulty) {
			t.Fatalf("winnable game: winnable %v ranked %v solution_commitment %v difficulty %v", g.Winnable, g.Ranked,
				g.SolutionCommitment, g.Difficulty)
		}
		rec := e.record(g.ID)
		line := rec.Solution
		if !rec.Winnable || len(line) < 3 || rec.SolutionCommitment != *g.SolutionCommitment || string(rec.Difficulty) != *g.Difficulty {
			t.Fatalf("stored record: winnable %v, %d moves, %s %s", rec.Winnable, len(line), rec.SolutionCommitment, rec.Difficulty)
		}
		// The first event records it (R6.2): replay and audit know it.
		recs, err := e.store.Events(context.Background(), g.ID, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		first, err := domain.DecodeEvent(recs[0].Version, recs[0].Type, recs[0].OccurredAt, recs[0].Payload)
		if err != nil || !first.Data.Winnable || first.Data.SolutionCommitment != rec.SolutionCommitment || first.Data.Difficulty != rec.Difficulty {
			t.Fatalf("game_dealt: %v %+v", err, first.Data)
		}

		// In progress: every view, and no line anywhere.
		e.play(g.ID, fromDomain(line[0]))
		base := "/v1/games/" + g.ID
		for _, p := range []string{"", "/legal-moves", "/events", "/states/1", "/states/2", "/audit"} {
			e.must(http.StatusOK, req{method: "GET", path: base + p})
		}
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games?status=in_progress"})
		e.must(http.StatusOK, req{method: "GET", path: base + "/events", header: map[string]string{"Accept": "application/x-ndjson"}})
		a := e.auditAs(g.ID, "")
		if !a.Winnable || a.SolutionCommitment == nil || *a.SolutionCommitment != *g.SolutionCommitment || a.Solution != nil || a.SolutionOK != nil {
			t.Errorf("audit in progress: winnable %v commitment %v solution %v ok %v", a.Winnable, a.SolutionCommitment, a.Solution, a.SolutionOK)
		}
		var events api.EventPage
		e.must(http.StatusOK, req{method: "GET", path: base + "/events"}).decode(t, &events)
		if d := events.Events[0].Data; !d.Winnable || d.SolutionCommitment != *g.SolutionCommitment || string(d.Difficulty) != *g.Difficulty {
			t.Errorf("redacted game_dealt: %+v", d)
		}
		stream := readStream(t, e, base+"/stream", 300*time.Millisecond)
		noLineIn(t, "in progress", append(e.bodiesSince(n0), stream), line)

		// Won by playing the rest of the line.
		var won api.Game
		for _, m := range line[1:] {
			won = e.play(g.ID, fromDomain(m)).Game
		}
		if won.Status != "won" {
			t.Fatalf("the stored line leaves the game %s", won.Status)
		}
		a = e.auditAs(g.ID, "")
		if a.SolutionOK == nil || !*a.SolutionOK || a.Salt == nil || a.Seed == nil || len(a.Solution) != len(line) {
			t.Fatalf("audit after the win: solution_ok %v, %d moves, salt %v", a.SolutionOK, len(a.Solution), a.Salt)
		}
		for i, m := range line {
			if got, want := a.Solution[i], fromDomain(m); !equalMoves(got, want) {
				t.Fatalf("solution move %d: %+v, want %+v", i, got, want)
			}
		}
		salt, _ := hex.DecodeString(*a.Salt)
		if !domain.CheckSolutionCommitment(*g.SolutionCommitment, line, salt) {
			t.Error("the revealed line and salt do not match solution_commitment")
		}

		// A second game, resigned at once: revealed too.
		g2 := e.createGame(map[string]any{"variant": "relaxed", "winnable": true})
		if *g2.SolutionCommitment == *g.SolutionCommitment {
			t.Error("two winnable games share a deal")
		}
		e.play(g2.ID, resign())
		_, eveToken := e.newPlayer("Eve")
		a2 := e.auditAs(g2.ID, eveToken)
		if a2.SolutionOK == nil || !*a2.SolutionOK || len(a2.Solution) == 0 || a2.Seed == nil {
			t.Fatalf("audit after resigning, read by anyone: solution_ok %v, %d moves", a2.SolutionOK, len(a2.Solution))
		}
		// The revealed line wins a fresh layout game of the revealed deal.
		fresh := e.createGame(api.CreateGameRequest{Variant: "relaxed", Layout: layoutOf(rules, uint64(*a2.Seed))})
		var last api.Game
		for _, m := range a2.Solution {
			last = e.play(fresh.ID, m).Game
		}
		if last.Status != "won" {
			t.Errorf("the revealed line leaves a layout game of the deal %s", last.Status)
		}

		// Statistics and the leaderboard: winnable deals apart (R7.2).
		var st api.PlayerStats
		e.must(http.StatusOK, req{method: "GET", path: "/v1/players/me/stats?variant=relaxed&winnable=true"}).decode(t, &st)
		played, wonN := 0, 0
		for _, s := range st.Stats {
			if !s.Winnable {
				t.Errorf("winnable=true entry %+v", s)
			}
			played, wonN = played+s.Played, wonN+s.Won
		}
		if played != 2 || wonN != 1 {
			t.Errorf("winnable stats: played %d won %d, want 2 and 1", played, wonN)
		}
		e.must(http.StatusOK, req{method: "GET", path: "/v1/players/me/stats?variant=relaxed"}).decode(t, &st)
		for _, s := range st.Stats {
			if s.Played != 0 || s.Winnable {
				t.Errorf("random-deal stats count winnable games: %+v", s)
			}
		}
		draw := fmt.Sprint(rules.Draw)
		e.sequence() // boards rank logged games only
		var lb api.Leaderboard
		e.must(http.StatusOK, req{method: "GET", path: "/v1/leaderboards/relaxed?winnable=true&draw=" + draw, token: "-"}).decode(t, &lb)
		if !lb.Winnable || len(lb.Entries) != 1 || lb.Entries[0].GameID != g.ID {
			t.Errorf("winnable leaderboard: %+v", lb)
		}
		e.must(http.StatusOK, req{method: "GET", path: "/v1/leaderboards/relaxed?draw=" + draw, token: "-"}).decode(t, &lb)
		if lb.Winnable || len(lb.Entries) != 0 {
			t.Errorf("random-deal leaderboard shows winnable wins: %+v", lb)
		}
		for _, p := range []string{"/v1/players/me/stats?winnable=yes", "/v1/leaderboards/relaxed?winnable=maybe"} {
			if r := e.must(http.StatusBadRequest, req{method: "GET", path: p, invalid: true}); r.problem(t).Param != "winnable" {
				t.Errorf("%s: %s", p, r.body)
			}
		}
	})
}

func equalMoves(a, b api.MoveRequest) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestR7_2_WinnableRefused: winnable true is for a server deal: 422
// (param winnable) with a seed, a layout, a numbered deal or a duel id,
// and a malformed value is 400; nothing is written.
func TestR7_2_WinnableRefused(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		count := func() int {
			var n int
			if err := e.store.DB().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM games").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		n := count()
		for _, body := range []map[string]any{
			{"variant": "relaxed", "winnable": true, "seed": "42"},
			{"variant": "relaxed", "winnable": true, "layout": runs()},
			{"variant": "relaxed", "winnable": true, "deal": "pysolfc:12345"},
			{"variant": "relaxed", "winnable": true, "duel_id": "0123456789abcdef0123456789abcdef"},
		} {
			r := e.must(http.StatusUnprocessableEntity, req{method: "POST", path: "/v1/games", body: body})
			if p := r.problem(t); p.Code != api.CodeInvalidField || p.Param != "winnable" {
				t.Errorf("%v: %+v", body, p)
			}
		}
		r := e.must(http.StatusBadRequest, req{method: "POST", path: "/v1/games", invalid: true,
			body: map[string]any{"variant": "relaxed", "winnable": "yes"}})
		if p := r.problem(t); p.Code != api.CodeInvalidBody {
			t.Errorf("winnable \"yes\": %+v", p)
		}
		if got := count(); got != n {
			t.Errorf("refused requests wrote %d games", got-n)
		}
	})
}

// TestR7_2_MultiDeckWinnable: Harp and Tripleharp deal winnable games too
// (R7.2): a winnable game shows its commitment and a band; its line wins
// it move by move through the API, and the audit then checks it; a hint
// on a winnable Tripleharp deal is a move that keeps it winnable (R7.3);
// a resigned one reveals its line and its analysis finds the deal winnable
// with a line (R7.4; its losing version may be unknown within the
// analysis budget, and then null); the daily deal and a duel of each are winnable by
// default with a difficulty band (R7.5).
func TestR7_2_MultiDeckWinnable(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			// Seeds 21, 161 and 150 deal Harp and Tripleharp deals the
			// search wins within 300,000 positions (of the 2,000,000 the
			// supply may spend), so that proofs stay short under the race
			// detector; the test takes fewer than the 30 queued.
			quick := &seedReader{queue: slices.Repeat([]uint64{21, 161, 150}, 10)}
			e := newEnvWith(t, b, supply.Config{Random: quick, Wait: 2 * time.Minute, Buffer: 1})
			e.client.Timeout = 3 * time.Minute
			for _, variant := range []string{"harp", "tripleharp"} {
				g := e.createGame(map[string]any{"variant": variant, "winnable": true})
				if !g.Winnable || !g.Ranked || g.SolutionCommitment == nil || g.Difficulty == nil || !slices.Contains(bands, *g.Difficulty) {
					t.Fatalf("%s: winnable %v ranked %v solution_commitment %v difficulty %v", variant, g.Winnable, g.Ranked,
						g.SolutionCommitment, g.Difficulty)
				}
				line := e.record(g.ID).Solution
				if variant == "harp" {
					var last api.Game
					for _, m := range line {
						last = e.play(g.ID, fromDomain(m)).Game
					}
					a := e.auditAs(g.ID, "")
					if last.Status != "won" || a.SolutionOK == nil || !*a.SolutionOK || len(a.Solution) != len(line) {
						t.Errorf("harp: the line leaves the game %s; audit solution_ok %v, %d moves", last.Status, a.SolutionOK, len(a.Solution))
					}
				} else {
					var h api.HintResult
					r := e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + g.ID + "/hints", body: map[string]any{}})
					r.decode(t, &h)
					if h.Verdict != "winnable" || h.Move == nil {
						t.Fatalf("tripleharp hint: %s", r.body)
					}
					e.play(g.ID, *h.Move)
					// the position after the hinted move is winnable still
					var next api.HintResult
					e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + g.ID + "/hints", body: map[string]any{}}).decode(t, &next)
					if next.Verdict != "winnable" || next.Move == nil {
						t.Fatalf("tripleharp after the hinted move: %+v", next)
					}
					e.play(g.ID, resign())
					a := e.auditAs(g.ID, "")
					if a.SolutionOK == nil || !*a.SolutionOK || len(a.Solution) != len(line) {
						t.Errorf("tripleharp resigned: audit solution_ok %v, %d moves", a.SolutionOK, len(a.Solution))
					}
					var an api.Analysis
					e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/analysis"}).decode(t, &an)
					if an.Winnable != "winnable" || len(an.Line) == 0 {
						t.Errorf("tripleharp analysis: %s, %d moves", an.Winnable, len(an.Line))
					}
				}
				var daily api.Game
				e.must(http.StatusCreated, req{method: "POST", path: "/v1/daily/" + variant + "/games"}).decode(t, &daily)
				duel := api.Duel{}
				e.must(http.StatusCreated, req{method: "POST", path: "/v1/duels", body: map[string]any{"variant": variant}}).decode(t, &duel)
				if !daily.Winnable || daily.Difficulty == nil || daily.SolutionCommitment == nil ||
					!duel.Winnable || duel.Difficulty == nil || duel.SolutionCommitment == nil {
					t.Errorf("%s: daily winnable %v difficulty %v; duel winnable %v difficulty %v", variant,
						daily.Winnable, daily.Difficulty, duel.Winnable, duel.Difficulty)
				}
			}
			quick.mu.Lock()
			defer quick.mu.Unlock()
			if len(quick.queue) == 0 {
				t.Error("every queued seed was taken: some deals came from random seeds")
			}
		})
	}
}

// TestR7_2_DealNotReady: with an empty supply, a winnable game and the
// day's first daily game answer 503 deal_not_ready with Retry-After
// within the supply's short wait (never 500, never a hang past a client's
// 10 s timeout, never a random deal), and nothing is written; once the
// supply has proven deals they succeed, winnable.
func TestR7_2_DealNotReady(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			g := newGate()
			e := newEnvWith(t, b, supply.Config{Random: g, Wait: 200 * time.Millisecond})
			t.Cleanup(g.open) // before the supply closes: its worker waits on the gate
			e.client.Timeout = 10 * time.Second
			for _, q := range []req{
				{method: "POST", path: "/v1/games", body: map[string]any{"variant": "relaxed", "winnable": true}},
				{method: "POST", path: "/v1/daily/relaxed/games"},
				{method: "POST", path: "/v1/duels", body: map[string]any{"variant": "relaxed"}},
			} {
				r := e.must(http.StatusServiceUnavailable, q)
				if p := r.problem(t); p.Code != api.CodeDealNotReady || r.header.Get("Retry-After") == "" {
					t.Errorf("%s %s: %+v, Retry-After %q", q.method, q.path, p, r.header.Get("Retry-After"))
				}
			}
			for _, table := range []string{"games", "daily_deals", "duels"} {
				var n int
				if err := e.store.DB().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s: %d rows (%v) after refusals", table, n, err)
				}
			}
			g.open()
			e.waitReady(rulesOf(t, "relaxed"), 1)
			if game := e.createGame(map[string]any{"variant": "relaxed", "winnable": true}); !game.Winnable {
				t.Error("not winnable once proven")
			}
			// relaxed again: its proofs take milliseconds, the strict
			// variants' seconds (minutes under -race on a busy machine).
			e.waitReady(rulesOf(t, "relaxed"), 1)
			var daily api.Game
			e.must(http.StatusCreated, req{method: "POST", path: "/v1/daily/relaxed/games"}).decode(t, &daily)
			if !daily.Winnable || daily.Difficulty == nil {
				t.Errorf("daily game once proven: winnable %v difficulty %v", daily.Winnable, daily.Difficulty)
			}
		})
	}
}

// TestR7_2_SharedDealsWinnable: daily deals and duels are winnable by
// default (R7.2): their games show the deal's solution_commitment and
// difficulty, as do GET daily and the duel; they are sealed until the
// close (R6.6), so even an ended game's audit shows no line, to its owner
// too; after the close the line is revealed and checks. A duel created
// with winnable false is a random deal.
func TestR7_2_SharedDealsWinnable(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		rules := rulesOf(t, "relaxed")
		e.waitReady(rules, 2)
		_, bobToken := e.newPlayer("Bob")
		n0 := e.bodyCount()

		var daily api.Game
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/daily/relaxed/games"}).decode(t, &daily)
		var bobs api.Game
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/daily/relaxed/games", token: bobToken}).decode(t, &bobs)
		if !daily.Winnable || daily.SolutionCommitment == nil || daily.Difficulty == nil ||
			bobs.SolutionCommitment == nil || *bobs.SolutionCommitment != *daily.SolutionCommitment {
			t.Fatalf("daily games: %v %v %v / %v", daily.Winnable, daily.SolutionCommitment, daily.Difficulty, bobs.SolutionCommitment)
		}
		var d api.Daily
		e.must(http.StatusOK, req{method: "GET", path: "/v1/daily/relaxed", token: "-"}).decode(t, &d)
		if !d.Winnable || d.Difficulty == nil || *d.Difficulty != *daily.Difficulty || d.SolutionCommitment == nil ||
			*d.SolutionCommitment != *daily.SolutionCommitment {
			t.Errorf("GET daily: winnable %v difficulty %v solution_commitment %v", d.Winnable, d.Difficulty, d.SolutionCommitment)
		}
		line := e.record(daily.ID).Solution
		e.play(daily.ID, resign())
		if a := e.auditAs(daily.ID, ""); !a.Sealed || a.Solution != nil || a.SolutionOK != nil || a.SolutionCommitment == nil {
			t.Errorf("sealed daily audit: sealed %v solution %v ok %v", a.Sealed, a.Solution, a.SolutionOK)
		}
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + daily.ID + "/events", header: map[string]string{"Accept": "application/x-ndjson"}})

		duel := api.Duel{}
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/duels", body: map[string]any{"variant": "relaxed"}}).decode(t, &duel)
		if !duel.Winnable || duel.SolutionCommitment == nil || duel.Difficulty == nil {
			t.Fatalf("duel: %+v", duel)
		}
		var dg api.Game
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/duels/" + duel.ID + "/games"}).decode(t, &dg)
		if !dg.Winnable || *dg.SolutionCommitment != *duel.SolutionCommitment || *dg.Difficulty != *duel.Difficulty {
			t.Errorf("duel game: %v %v %v", dg.Winnable, dg.SolutionCommitment, dg.Difficulty)
		}
		duelLine := e.record(dg.ID).Solution
		e.play(dg.ID, resign())
		if a := e.auditAs(dg.ID, ""); !a.Sealed || a.Solution != nil || a.SolutionOK != nil {
			t.Errorf("sealed duel audit: sealed %v solution %v", a.Sealed, a.Solution)
		}
		noLineIn(t, "sealed daily", e.bodiesSince(n0), line)
		noLineIn(t, "sealed duel", e.bodiesSince(n0), duelLine)

		var random api.Duel
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/duels", body: map[string]any{"variant": "relaxed", "winnable": false}}).decode(t, &random)
		if random.Winnable || random.SolutionCommitment != nil || random.Difficulty != nil {
			t.Errorf("duel with winnable false: %+v", random)
		}

		// After the close: the day is over, the duel's deadline passed.
		e.clock.Advance(25 * time.Hour)
		for _, id := range []string{daily.ID, dg.ID} {
			a := e.auditAs(id, bobToken)
			if a.Sealed || a.SolutionOK == nil || !*a.SolutionOK || len(a.Solution) == 0 {
				t.Errorf("%s after the close: sealed %v solution_ok %v, %d moves", id, a.Sealed, a.SolutionOK, len(a.Solution))
			}
		}
	})
}

// TestR7_2_SolutionTampered: the audit's solution_ok is false when the
// stored line no longer wins, or no longer matches the commitment.
func TestR7_2_SolutionTampered(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		e.waitReady(rulesOf(t, "relaxed"), 1)
		g := e.createGame(map[string]any{"variant": "relaxed", "winnable": true})
		e.play(g.ID, resign())
		if a := e.auditAs(g.ID, ""); a.SolutionOK == nil || !*a.SolutionOK {
			t.Fatalf("untouched: solution_ok %v", a.SolutionOK)
		}
		rec := e.record(g.ID)
		exec := func(q string, args ...any) {
			if _, err := e.store.DB().Exec(e.store.Rebind(q), args...); err != nil {
				t.Fatal(err)
			}
		}
		short := domain.EncodeLine(rec.Solution[:len(rec.Solution)-1])
		swapped := slices.Clone(rec.Solution)
		swapped[0], swapped[len(swapped)-1] = swapped[len(swapped)-1], swapped[0]
		for what, q := range map[string][]any{
			"a line one move short": {`UPDATE games SET solution = ? WHERE id = ?`, short, g.ID},
			"a reordered line":      {`UPDATE games SET solution = ? WHERE id = ?`, domain.EncodeLine(swapped), g.ID},
			"another commitment":    {`UPDATE games SET solution_commitment = ? WHERE id = ?`, "sha256:" + strings.Repeat("0", 64), g.ID},
		} {
			exec(q[0].(string), q[1:]...)
			if a := e.auditAs(g.ID, ""); a.SolutionOK == nil || *a.SolutionOK {
				t.Errorf("%s: solution_ok %v", what, a.SolutionOK)
			}
			exec(`UPDATE games SET solution = ?, solution_commitment = ? WHERE id = ?`,
				domain.EncodeLine(rec.Solution), rec.SolutionCommitment, g.ID)
		}
		if a := e.auditAs(g.ID, ""); a.SolutionOK == nil || !*a.SolutionOK {
			t.Errorf("restored: solution_ok %v", a.SolutionOK)
		}
	})
}
