package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// ---- the environment of the competition tests ----

// seedReader is app.Games.Random in these tests: crypto/rand, except
// that an 8-byte read takes the next queued seed. A deal's seed is always
// read alone, 8 bytes after the salt (app.Games.Create; the api's duel
// and daily deals), so a test that queues a seed right before a request
// picks the deal of a server-dealt, ranked game: one it knows how to win.
type seedReader struct {
	mu    sync.Mutex
	queue []uint64
}

func (r *seedReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(p) == 8 && len(r.queue) > 0 {
		binary.BigEndian.PutUint64(p, r.queue[0])
		r.queue = r.queue[1:]
		return 8, nil
	}
	return rand.Read(p)
}

func (r *seedReader) next(seed uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.queue = append(r.queue, seed)
}

// cenv is an env whose server has the competition routes (which seal
// shared deals, R6.6) and a random source that lets a test pick seeds.
type cenv struct {
	*env
	seeds *seedReader
}

func newCompEnv(t *testing.T, backend string, opts ...func(*app.Competitions)) *cenv {
	store := openStore(t, backend)
	clk := &clock{t: start}
	seeds := &seedReader{}
	games := &app.Games{Store: store, Now: clk.Now, Random: seeds, Retries: 3}
	tlog := openTestLog(t, store, clk.Now)
	comps := app.NewCompetitions(games, store)
	for _, o := range opts {
		o(comps)
	}
	h, err := api.New(api.Config{Games: games, Players: store, Idempotency: store,
		Ready: store.Ping, Spec: solitaire.OpenAPIYAML,
		Competitions: comps, Stats: store, SolverMaxBudget: testSolverBudget,
		Logger: slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn})), Log: tlog})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := &validating{t: t, base: http.DefaultTransport}
	e := &env{t: t, store: store, games: games, clock: clk, srv: srv, tr: tr, client: &http.Client{Transport: tr}, tlog: tlog}
	e.player, e.token = e.newPlayer("Ada")
	return &cenv{env: e, seeds: seeds}
}

// forEachCompStore runs f as a subtest on each real database, the two in
// parallel.
func forEachCompStore(t *testing.T, f func(t *testing.T, e *cenv)) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			f(t, newCompEnv(t, b))
		})
	}
}

// Seeds whose deal winLine wins with the variant's default rules (found
// once with winLine; deals are fixed forever by R6.1).
const (
	klondikeSeed = 822 // klondike: 80 moves
	klassikSeed  = 232 // klassik: 90 moves
)

// winLine plays the deal of (variant, seed) with a small greedy policy on
// the engine itself and returns its moves; the test fails unless they win.
// Policy: autocomplete, flip, to a foundation, a whole face-up run off
// face-down cards, waste to tableau, draw; it gives up after a trip through
// the stock without another move.
func winLine(t testing.TB, variant string, seed uint64) []domain.Move {
	t.Helper()
	v, err := domain.LookupVariant(variant)
	if err != nil {
		t.Fatal(err)
	}
	rules := v.Defaults
	deal := domain.Deal(rules, seed)
	s := &domain.State{}
	s.Apply(domain.DealtEvent(rules, deal, "", start))
	var line []domain.Move
	idle := 0
	for len(line) < 1000 && s.Status == domain.StatusInProgress {
		m, ok := greedyMove(s)
		if !ok {
			break
		}
		if m.Type == domain.MoveDraw {
			if idle++; idle > (len(s.Stock)+len(s.Waste))/rules.Draw+3 {
				break
			}
		} else {
			idle = 0
		}
		evs, _, err := domain.Decide(s, m, start)
		if err != nil {
			t.Fatalf("%s seed %d: %v", variant, seed, err)
		}
		for _, e := range evs {
			s.Apply(e)
		}
		line = append(line, m)
	}
	if s.Status != domain.StatusWon {
		t.Fatalf("%s seed %d: the greedy line does not win (%d moves, %s)", variant, seed, len(line), s.Status)
	}
	return line
}

func greedyMove(s *domain.State) (domain.Move, bool) {
	score := func(m domain.Move) int {
		switch m.Type {
		case domain.MoveAutocomplete:
			return 100
		case domain.MoveFlip:
			return 90
		case domain.MoveCards:
			switch {
			case m.To.Kind == domain.Foundation:
				return 80
			case m.From.Kind == domain.Tableau:
				p := s.Tableau[m.From.Index]
				if m.Count == len(p.Cards)-p.Down && p.Down > 0 {
					return 70 + p.Down
				}
			case m.From.Kind == domain.Waste:
				return 50
			}
		case domain.MoveDraw:
			return 10
		}
		return -1
	}
	best, bs := domain.Move{}, -1
	for _, m := range domain.LegalMoves(s) {
		if sc := score(m); sc > bs {
			best, bs = m, sc
		}
	}
	return best, bs >= 0
}

// playAs posts a move as the player with token and fails unless accepted.
func (e *cenv) playAs(token, id string, m api.MoveRequest) api.MoveResult {
	e.t.Helper()
	var r api.MoveResult
	e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + id + "/moves", body: m, token: token}).decode(e.t, &r)
	return r
}

// playLine plays line in game id as token's player, advancing the clock by
// step before each move, and returns the game at the end.
func (e *cenv) playLine(token, id string, line []domain.Move, step time.Duration) api.Game {
	e.t.Helper()
	var g api.Game
	for _, m := range line {
		e.clock.Advance(step)
		g = e.playAs(token, id, fromDomain(m)).Game
	}
	return g
}

// createDuel posts a duel and returns it.
func (e *cenv) createDuel(body any) api.Duel {
	e.t.Helper()
	var d api.Duel
	r := e.must(http.StatusCreated, req{method: "POST", path: "/v1/duels", body: body})
	r.decode(e.t, &d)
	if loc := r.header.Get("Location"); loc != "/v1/duels/"+d.ID {
		e.t.Errorf("Location %q, want /v1/duels/%s", loc, d.ID)
	}
	return d
}

// join joins duel id as token's player.
func (e *cenv) join(token, id string) api.Game {
	e.t.Helper()
	var g api.Game
	r := e.must(http.StatusCreated, req{method: "POST", path: "/v1/duels/" + id + "/games", token: token})
	r.decode(e.t, &g)
	if loc := r.header.Get("Location"); loc != "/v1/games/"+g.ID {
		e.t.Errorf("Location %q, want /v1/games/%s", loc, g.ID)
	}
	return g
}

func (e *cenv) getDuel(id string) api.Duel {
	e.t.Helper()
	var d api.Duel
	e.must(http.StatusOK, req{method: "GET", path: "/v1/duels/" + id, token: "-"}).decode(e.t, &d)
	return d
}

// checkReveal checks that a revealed seed and salt match the commitment
// (R6.4) and that no response before the reveal (the first n bodies)
// contained the salt.
func (e *cenv) checkReveal(rules domain.Rules, commitment string, seed *api.Seed, salt *string, n int) {
	e.t.Helper()
	if seed == nil || salt == nil {
		e.t.Fatalf("seed %v, salt %v: not revealed", seed, salt)
	}
	raw, err := hex.DecodeString(*salt)
	if err != nil || len(raw) != 32 {
		e.t.Fatalf("salt %q is not 32 bytes in hex", *salt)
	}
	if got := domain.Commitment(domain.Deal(rules, uint64(*seed)), raw); got != commitment {
		e.t.Errorf("commitment of the revealed seed and salt %s, published %s", got, commitment)
	}
	e.tr.mu.Lock()
	defer e.tr.mu.Unlock()
	for i, b := range e.tr.bodies[:n] {
		if bytes.Contains(b, []byte(*salt)) {
			e.t.Errorf("response %d before the end contains the salt: %s", i, truncate(b))
		}
	}
}

func (e *cenv) bodiesSoFar() int {
	e.tr.mu.Lock()
	defer e.tr.mu.Unlock()
	return len(e.tr.bodies)
}

func rulesOf(t testing.TB, variant string) domain.Rules {
	t.Helper()
	v, err := domain.LookupVariant(variant)
	if err != nil {
		t.Fatal(err)
	}
	return v.Defaults
}

// rowCount counts the rows of a table, to check nothing was written.
func (e *cenv) rowCount(table string) int {
	e.t.Helper()
	var n int
	if err := e.store.DB().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// ---- duels ----

// R6.3, R6.6: players of one duel get identical deals, draw identical
// cards and share the duel's commitment; joining closes once max_players
// have joined; a rival cannot read a duel game while the duel runs, even
// once that game has ended, and can after the end; the duel ends when
// every seat holds a game that has ended, its seed and salt then revealed
// and matching the commitment; standings by RankStandings.
func TestR6_3_DuelSameDeal(t *testing.T) {
	t.Parallel()
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		bob, bobToken := e.newPlayer("Bob")
		_, eveToken := e.newPlayer("Eve")
		_, malToken := e.newPlayer("Mallory") // never joins
		e.seeds.next(klassikSeed)
		d := e.createDuel(map[string]any{"max_players": 3})
		if d.Variant != "klassik" || d.Status != "open" || d.Seed != nil || d.Salt != nil || !d.Ranked || d.MaxPlayers != 3 ||
			len(d.Standings) != 0 || d.CreatedBy != e.player || d.Options.TimeLimitS == nil || *d.Options.TimeLimitS != 300 {
			t.Fatalf("new duel %+v", d)
		}
		if got, want := d.Deadline, domain.FormatTime(start.Add(24*time.Hour)); got != want {
			t.Errorf("default deadline %s, want %s", got, want)
		}
		ga := e.join(e.token, d.ID)
		gb := e.join(bobToken, d.ID)
		ge := e.join(eveToken, d.ID)
		// Every seat is taken: nobody else may join, and the refusal seats nobody.
		seats := e.rowCount("duel_seats")
		r := e.must(http.StatusConflict, req{method: "POST", path: "/v1/duels/" + d.ID + "/games", token: malToken})
		if p := r.problem(t); p.Code != api.CodeDuelFull || e.rowCount("duel_seats") != seats {
			t.Errorf("join of a full duel: %+v, seats %d -> %d", p, seats, e.rowCount("duel_seats"))
		}
		if full := e.getDuel(d.ID); full.Status != "full" || full.SeatsTaken != 3 {
			t.Errorf("a full duel reads %q with %d seats taken, want full with 3", full.Status, full.SeatsTaken)
		}
		for _, g := range []api.Game{ga, gb, ge} {
			if g.Commitment != d.Commitment || !g.Ranked || g.Variant != "klassik" {
				t.Fatalf("game %s: commitment %s (duel %s), ranked %v", g.ID, g.Commitment, d.Commitment, g.Ranked)
			}
		}
		pa := e.load(ga.ID).Position()
		for _, g := range []api.Game{gb, ge} {
			if p := e.load(g.ID).Position(); !reflect.DeepEqual(pa, p) {
				t.Fatalf("different deals:\n%s\n%s", pa, p)
			}
			if !reflect.DeepEqual(ga.Tableau, g.Tableau) {
				t.Fatal("the games show different tableaus")
			}
		}
		db := e.playAs(bobToken, gb.ID, draw()).Game
		de := e.playAs(eveToken, ge.ID, draw()).Game
		if len(db.Waste.Cards) != 3 || !reflect.DeepEqual(db.Waste.Cards, de.Waste.Cards) {
			t.Fatalf("draws differ: %v and %v", db.Waste.Cards, de.Waste.Cards)
		}

		// A second join is refused and names the game.
		r = e.must(http.StatusConflict, req{method: "POST", path: "/v1/duels/" + d.ID + "/games", body: map[string]any{}})
		if p := r.problem(t); p.Code != api.CodeDuelAlreadyJoined || r.header.Get("Location") != "/v1/games/"+ga.ID {
			t.Errorf("second join: %+v, Location %q", p, r.header.Get("Location"))
		}

		won := e.playLine(e.token, ga.ID, winLine(t, "klassik", klassikSeed), time.Second)
		if won.Status != "won" || won.Score == nil {
			t.Fatalf("Ada's game %s, score %v", won.Status, won.Score)
		}
		// Her game has ended, but the others run: nobody else may read it.
		for _, tok := range []string{bobToken, malToken} {
			e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + ga.ID, token: tok})
			e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + ga.ID + "/events", token: tok})
			e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + ga.ID + "/states/1", token: tok})
		}
		e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + gb.ID}) // Ada cannot read Bob's
		if mid := e.getDuel(d.ID); mid.Status != "full" || mid.Seed != nil || len(mid.Standings) != 3 ||
			mid.Standings[0].GameID != ga.ID || mid.Standings[0].Rank != 1 || mid.Standings[1].Status != "in_progress" {
			t.Fatalf("duel while Bob and Eve play: %+v", mid)
		}
		// Bob resigns; Eve still plays.
		e.playAs(bobToken, gb.ID, resign())
		e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + ga.ID, token: malToken})
		before := e.bodiesSoFar()

		// Eve resigns: every joined game has ended, so the duel has.
		e.playAs(eveToken, ge.ID, resign())
		end := e.getDuel(d.ID)
		if end.Status != "ended" || end.EndedAt == nil || len(end.Standings) != 3 {
			t.Fatalf("duel after every game ended: %+v", end)
		}
		e.checkReveal(rulesOf(t, "klassik"), d.Commitment, end.Seed, end.Salt, before)
		if *end.Seed != klassikSeed {
			t.Errorf("revealed seed %d, want %d", *end.Seed, klassikSeed)
		}
		if s := end.Standings[0]; s.PlayerID != e.player || s.PlayerName != "Ada" || s.GameID != ga.ID ||
			s.Status != "won" || s.Rank != 1 || s.Score == nil || *s.Score != *won.Score {
			t.Errorf("first: %+v", s)
		}
		for _, s := range end.Standings[1:] {
			if s.Status != "lost" || s.Rank != 2 && s.Rank != 3 {
				t.Errorf("standing %+v", s)
			}
		}
		if end.Standings[1].PlayerID != bob && end.Standings[2].PlayerID != bob {
			t.Errorf("Bob is not in the standings: %+v", end.Standings)
		}
		// Now the games are public.
		for _, tok := range []string{bobToken, malToken} {
			g := api.Game{}
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + ga.ID, token: tok}).decode(t, &g)
			if g.Status != "won" || g.Stock.Cards == nil {
				t.Errorf("Ada's game read by a rival after the end: %s, stock revealed %v", g.Status, g.Stock.Cards != nil)
			}
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + ga.ID + "/events", token: tok})
		}
		// Nobody joins an ended duel.
		r = e.must(http.StatusConflict, req{method: "POST", path: "/v1/duels/" + d.ID + "/games", token: malToken})
		if p := r.problem(t); p.Code != api.CodeDuelEnded {
			t.Errorf("join after the end: %+v", p)
		}
		if again := e.getDuel(d.ID); !reflect.DeepEqual(again, end) {
			t.Errorf("an ended duel changed:\n%+v\n%+v", again, end)
		}
	})
}

// A duel ends at its deadline: nobody joins after it, the sweeper resigns
// the games still running (R2.7), the end is recorded and the seed
// revealed; a rival can read the games then. A duel nobody joined ends at
// its deadline too, and GET closes a running game itself if the sweeper
// has not.
func TestDuelDeadline(t *testing.T) {
	t.Parallel()
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		_, bobToken := e.newPlayer("Bob")
		d := e.createDuel(map[string]any{"variant": "klondike", "duration_s": 60})
		if d.Options.TimeLimitS != nil || d.Deadline != domain.FormatTime(start.Add(time.Minute)) {
			t.Fatalf("duel %+v", d)
		}
		lazy := e.createDuel(map[string]any{"variant": "relaxed", "options": map[string]any{"draw": 3},
			"deadline": domain.FormatTime(start.Add(90 * time.Second))})
		if !lazy.Ranked || lazy.Options.Draw != 3 {
			t.Errorf("relaxed draw-3 duel: ranked %v, draw %d", lazy.Ranked, lazy.Options.Draw)
		}
		empty := e.createDuel(map[string]any{"variant": "harp", "duration_s": 60})
		g := e.join(e.token, d.ID)
		e.play(g.ID, draw())
		gl := e.join(bobToken, lazy.ID)
		before := e.bodiesSoFar()

		e.clock.Advance(61 * time.Second)
		r := e.must(http.StatusConflict, req{method: "POST", path: "/v1/duels/" + d.ID + "/games", token: bobToken})
		if p := r.problem(t); p.Code != api.CodeDuelEnded {
			t.Errorf("join after the deadline: %+v", p)
		}
		if st := e.load(g.ID); st.Status != domain.StatusInProgress {
			t.Fatalf("the game ended before the sweep: %s", st.Status)
		}
		// Bob cannot read Ada's running game, nor a finished one before the sweep.
		e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + g.ID, token: bobToken})
		expired, closed, err := e.games.Sweep(context.Background(), e.clock.Now())
		if err != nil || expired != 0 || closed != 1 {
			t.Fatalf("sweep: %d expired, %d closed, %v", expired, closed, err)
		}
		if st := e.load(g.ID); st.Status != domain.StatusLost {
			t.Fatalf("after the sweep the game is %s, want lost (resigned)", st.Status)
		}
		// The end is recorded on the first look (here a rival's read).
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID, token: bobToken})
		end := e.getDuel(d.ID)
		if end.Status != "ended" || len(end.Standings) != 1 || end.Standings[0].Status != "lost" {
			t.Fatalf("duel after the deadline: %+v", end)
		}
		e.checkReveal(rulesOf(t, "klondike"), d.Commitment, end.Seed, end.Salt, before)

		gone := e.getDuel(empty.ID)
		if gone.Status != "ended" || gone.EndedAt == nil || *gone.EndedAt != empty.Deadline || len(gone.Standings) != 0 {
			t.Fatalf("unjoined duel after its deadline: %+v", gone)
		}
		e.checkReveal(rulesOf(t, "harp"), empty.Commitment, gone.Seed, gone.Salt, before)

		// No sweep: GET of the duel closes Bob's running game itself.
		e.clock.Advance(30 * time.Second)
		late := e.getDuel(lazy.ID)
		if late.Status != "ended" || len(late.Standings) != 1 || late.Standings[0].GameID != gl.ID ||
			late.Standings[0].Status != "lost" {
			t.Fatalf("relaxed duel after its deadline: %+v", late)
		}
		v, _ := domain.LookupVariant("relaxed")
		three := 3
		rules, _, _ := v.Resolve(domain.Options{Draw: &three})
		e.checkReveal(rules, lazy.Commitment, late.Seed, late.Salt, before)
	})
}

// R5.3 in a duel: a game past its own time limit is expired by the sweeper
// even if nobody touches it, with the score it had at the deadline, and
// the duel then ends because every joined game has.
func TestR5_3_DuelGameExpires(t *testing.T) {
	t.Parallel()
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		_, bobToken := e.newPlayer("Bob")
		d := e.createDuel(map[string]any{"variant": "klassik", "duration_s": 3600})
		ga := e.join(e.token, d.ID)
		gb := e.join(bobToken, d.ID)
		e.playAs(bobToken, gb.ID, draw())
		e.playAs(e.token, ga.ID, resign())
		e.clock.Advance(301 * time.Second)
		if n, err := e.games.ExpireDue(context.Background(), e.clock.Now()); err != nil || n != 1 {
			t.Fatalf("ExpireDue: %d, %v", n, err)
		}
		st := e.load(gb.ID)
		if dl, _ := st.Deadline(); st.Status != domain.StatusExpired || !st.EndedAt.Equal(dl) {
			t.Fatalf("Bob's game after the sweep: %s at %s", st.Status, st.EndedAt)
		}
		if n, err := e.games.ExpireDue(context.Background(), e.clock.Now()); err != nil || n != 0 {
			t.Errorf("second sweep: %d, %v", n, err)
		}
		end := e.getDuel(d.ID)
		if end.Status != "ended" || end.Seed == nil || len(end.Standings) != 2 {
			t.Fatalf("duel: %+v", end)
		}
		for _, s := range end.Standings {
			if want := map[string]string{ga.ID: "lost", gb.ID: "expired"}[s.GameID]; s.Status != want ||
				s.Score == nil || s.ElapsedMS > 300_000 {
				t.Errorf("standing %+v, want status %s, a score and at most 300 s", s, want)
			}
		}
		// Bob reads his own game: expired, nothing appended again.
		var g api.Game
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + gb.ID, token: bobToken}).decode(t, &g)
		if g.Status != "expired" || g.Version != st.Version {
			t.Errorf("Bob's game %s at version %d, want expired at %d", g.Status, g.Version, st.Version)
		}
	})
}

// Bad input to the duel routes gets a clear 4xx problem and writes
// nothing; unknown duels are 404; the POSTs need a valid token.
func TestDuelBadInput(t *testing.T) {
	t.Parallel()
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		_, bobToken := e.newPlayer("Bob")
		d := e.createDuel(map[string]any{"variant": "klondike"})
		beforeDuels, beforeGames := e.rowCount("duels"), e.rowCount("games")
		ahead := func(d time.Duration) string { return domain.FormatTime(start.Add(d)) }
		for _, c := range []struct {
			name   string
			body   any
			status int
			code   string
			param  string
		}{
			{"malformed JSON", `{"variant": "klondike"`, 400, api.CodeInvalidBody, ""},
			{"not an object", `[]`, 400, api.CodeInvalidBody, ""},
			{"empty body", ``, 400, api.CodeInvalidBody, ""},
			{"unknown field", map[string]any{"seed": 1}, 400, api.CodeInvalidBody, "seed"},
			{"wrong type", map[string]any{"duration_s": "long"}, 400, api.CodeInvalidBody, "duration_s"},
			{"unknown variant", map[string]any{"variant": "spider"}, 422, api.CodeUnknownVariant, "variant"},
			{"bad option", map[string]any{"variant": "klondike", "options": map[string]any{"draw": 3}}, 422, api.CodeInvalidOption, "options.draw"},
			{"duration too short", map[string]any{"duration_s": 59}, 422, api.CodeInvalidField, "duration_s"},
			{"duration too long", map[string]any{"duration_s": 604801}, 422, api.CodeInvalidField, "duration_s"},
			{"deadline not a time", map[string]any{"deadline": "tomorrow"}, 422, api.CodeInvalidField, "deadline"},
			{"deadline past", map[string]any{"deadline": ahead(-time.Hour)}, 422, api.CodeInvalidField, "deadline"},
			{"deadline too soon", map[string]any{"deadline": ahead(59 * time.Second)}, 422, api.CodeInvalidField, "deadline"},
			{"deadline too late", map[string]any{"deadline": ahead(8 * 24 * time.Hour)}, 422, api.CodeInvalidField, "deadline"},
			{"both", map[string]any{"duration_s": 600, "deadline": ahead(time.Hour)}, 422, api.CodeInvalidField, "deadline"},
			{"one player", map[string]any{"max_players": 1}, 422, api.CodeInvalidField, "max_players"},
			{"no players", map[string]any{"max_players": 0}, 422, api.CodeInvalidField, "max_players"},
			{"too many players", map[string]any{"max_players": 101}, 422, api.CodeInvalidField, "max_players"},
			{"players not a number", map[string]any{"max_players": "2"}, 400, api.CodeInvalidBody, "max_players"},
		} {
			r := e.do(req{method: "POST", path: "/v1/duels", body: c.body, invalid: true})
			p := r.problem(t)
			if r.status != c.status || p.Code != c.code || p.Param != c.param {
				t.Errorf("%s: %d %s (param %q), want %d %s (param %q): %s", c.name, r.status, p.Code, p.Param,
					c.status, c.code, c.param, p.Detail)
			}
		}
		for _, c := range []struct {
			name   string
			q      req
			status int
			code   string
		}{
			{"no token", req{method: "POST", path: "/v1/duels", body: map[string]any{}, token: "-"}, 401, api.CodeUnauthorized},
			{"bad token", req{method: "POST", path: "/v1/duels", body: map[string]any{}, token: "forged"}, 401, api.CodeUnauthorized},
			{"join without token", req{method: "POST", path: "/v1/duels/" + d.ID + "/games", token: "-"}, 401, api.CodeUnauthorized},
			{"join unknown", req{method: "POST", path: "/v1/duels/0123456789abcdef/games", token: bobToken}, 404, api.CodeNotFound},
			{"join with a body", req{method: "POST", path: "/v1/duels/" + d.ID + "/games", body: map[string]any{"variant": "klondike"}, token: bobToken, invalid: true}, 400, api.CodeInvalidBody},
			{"join with bad JSON", req{method: "POST", path: "/v1/duels/" + d.ID + "/games", body: "{", token: bobToken, invalid: true}, 400, api.CodeInvalidBody},
			{"get unknown", req{method: "GET", path: "/v1/duels/0123456789abcdef", token: "-"}, 404, api.CodeNotFound},
			{"get long id", req{method: "GET", path: "/v1/duels/" + strings.Repeat("a", 65), token: "-"}, 404, api.CodeNotFound},
		} {
			r := e.do(c.q)
			if p := r.problem(t); r.status != c.status || p.Code != c.code {
				t.Errorf("%s: %d %s, want %d %s", c.name, r.status, p.Code, c.status, c.code)
			}
		}
		// POST /v1/games with duel_id joins like POST /v1/duels/{id}/games.
		for _, c := range []struct {
			name, body, param string
		}{
			{"unknown duel", `{"variant":"klondike","duel_id":"0123456789abcdef"}`, "duel_id"},
			{"another variant", `{"variant":"klassik","duel_id":"` + d.ID + `"}`, "variant"},
			{"with a seed", `{"variant":"klondike","seed":1,"duel_id":"` + d.ID + `"}`, "duel_id"},
			{"with options", `{"variant":"klondike","options":{"draw":1},"duel_id":"` + d.ID + `"}`, "options"},
		} {
			r := e.do(req{method: "POST", path: "/v1/games", body: c.body, token: bobToken})
			if p := r.problem(t); r.status != 422 || p.Code != api.CodeInvalidField || p.Param != c.param {
				t.Errorf("create with duel_id, %s: %d %s (param %q), want 422 invalid_field (%q)", c.name, r.status, p.Code, p.Param, c.param)
			}
		}
		if a, b := e.rowCount("duels"), e.rowCount("games"); a != beforeDuels || b != beforeGames {
			t.Errorf("bad requests wrote: duels %d -> %d, games %d -> %d", beforeDuels, a, beforeGames, b)
		}
		if n := e.rowCount("duel_seats"); n != 0 {
			t.Errorf("%d seats after bad joins", n)
		}
		var g api.Game
		r := e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", token: bobToken,
			body: map[string]any{"variant": "klondike", "duel_id": d.ID}})
		r.decode(t, &g)
		if g.Commitment != d.Commitment || !g.Ranked || r.header.Get("Location") != "/v1/games/"+g.ID {
			t.Errorf("joined with duel_id: %+v", g)
		}
		r = e.must(http.StatusConflict, req{method: "POST", path: "/v1/games", token: bobToken,
			body: map[string]any{"variant": "klondike", "duel_id": d.ID}})
		if p := r.problem(t); p.Code != api.CodeDuelAlreadyJoined || r.header.Get("Location") != "/v1/games/"+g.ID {
			t.Errorf("second join with duel_id: %+v", p)
		}
	})
}
