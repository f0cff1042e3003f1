package api_test

import (
	"bytes"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
)

func eventTypes(evs []api.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func TestMoveTypes(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		// R2.1 draw.
		g := e.createGame(map[string]any{"variant": "klondike", "seed": 1})
		r := e.play(g.ID, draw())
		if r.Game.Version != 2 || r.Game.Moves != 1 || r.Game.Stock.Count != g.Stock.Count-1 || len(r.Game.Waste.Cards) != 1 {
			t.Errorf("draw: %+v", r.Game)
		}
		if got := eventTypes(r.Events); !reflect.DeepEqual(got, []string{"stock_drawn"}) ||
			r.Events[0].Data.Cards[0].String() != r.Game.Waste.Cards[0].Code || r.Events[0].Version != 2 {
			t.Errorf("draw events %+v", r.Events)
		}
		if r.Game.StartedAt == nil {
			t.Errorf("R5.2: the clock starts at the first move")
		}
		// R2.5: klondike is played without undo.
		res := e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: undo()})
		if p := res.problem(t); res.status != 422 || p.Code != api.CodeIllegalMove || p.Reason != "undo_not_allowed" {
			t.Errorf("undo in klondike: %d %+v", res.status, p)
		}
		// R2.7 resign; R2.8 an ended game takes no command (409).
		r = e.play(g.ID, resign())
		if r.Game.Status != "lost" || !reflect.DeepEqual(eventTypes(r.Events), []string{"game_resigned"}) {
			t.Errorf("resign: %s %v", r.Game.Status, eventTypes(r.Events))
		}
		res = e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: draw()})
		if p := res.problem(t); res.status != http.StatusConflict || p.Code != api.CodeIllegalMove || p.Reason != "game_over" {
			t.Errorf("move after the end: %d %+v", res.status, p)
		}

		// R2.2 move, with "foundation" for any foundation and a run of 12.
		g = e.createGame(api.CreateGameRequest{Variant: "klondike", Layout: runs()})
		r = e.play(g.ID, move("tableau/0", "foundation", 0))
		if len(r.Game.Foundations[0].Cards) != 1 || r.Game.Foundations[0].Cards[0].Code != "AS" ||
			r.Events[0].Data.To.String() != "foundation/0" || r.Events[0].Data.Count != 1 {
			t.Errorf("move to foundation: %+v %+v", r.Game.Foundations, r.Events)
		}
		r = e.play(g.ID, move("tableau/0", "tableau/4", 12))
		if len(r.Game.Tableau[0].Cards) != 0 || len(r.Game.Tableau[4].Cards) != 12 || r.Game.Tableau[4].Cards[0].Code != "KS" {
			t.Errorf("run to an empty pile: %+v", r.Game.Tableau)
		}
		// R2.6 autocomplete wins; R2.8 the win is logged.
		r = e.play(g.ID, api.MoveRequest{Type: "autocomplete"})
		if r.Game.Status != "won" || r.Events[len(r.Events)-1].Type != "game_won" || len(r.Events) != 52 {
			t.Errorf("autocomplete: %s, %d events", r.Game.Status, len(r.Events))
		}
		if l := e.legal(g.ID); len(l.Moves) != 0 {
			t.Errorf("legal moves of a won game: %+v", l.Moves)
		}

		// R2.4 flip, R2.3 take-back and R2.5 undo in relaxed (autocomplete
		// offered, so the game does not finish itself).
		l := runs()
		l.Tableau[4] = api.LayoutPile{FaceDown: []string{"AS"}, FaceUp: []string{}}
		l.Tableau[0].FaceUp = l.Tableau[0].FaceUp[:12]
		g = e.createGame(map[string]any{"variant": "relaxed", "layout": l, "options": map[string]any{"autocomplete": "offered"}})
		r = e.play(g.ID, flip("tableau/4"))
		if r.Game.Tableau[4].FaceDown != 0 || r.Game.Tableau[4].Cards[0].Code != "AS" ||
			r.Events[0].Type != "card_flipped" || r.Events[0].Data.Card == nil || r.Events[0].Data.Card.String() != "AS" || r.Events[0].Data.Pile.String() != "tableau/4" {
			t.Errorf("flip: %+v %+v", r.Game.Tableau[4], r.Events)
		}
		r = e.play(g.ID, undo())
		if r.Game.Tableau[4].FaceDown != 1 || len(r.Game.Tableau[4].Cards) != 0 || r.Game.Moves != 2 ||
			r.Events[0].Type != "move_undone" || r.Events[0].Data.Undone != 2 || r.Game.CanUndo {
			t.Errorf("undo: %+v moves %d %+v", r.Game.Tableau[4], r.Game.Moves, r.Events)
		}
		res = e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: undo()})
		if p := res.problem(t); res.status != 422 || p.Reason != "nothing_to_undo" {
			t.Errorf("second undo: %d %+v", res.status, p)
		}
		e.play(g.ID, flip("tableau/4"))
		r = e.play(g.ID, move("tableau/4", "foundation", 0))
		r = e.play(g.ID, api.MoveRequest{Type: "take-back", From: str("foundation/0"), To: str("tableau/0")})
		if len(r.Game.Foundations[0].Cards) != 0 || r.Game.Tableau[0].Cards[11].Code != "2H" || r.Game.Tableau[0].Cards[12].Code != "AS" {
			t.Errorf("take-back: %+v", r.Game.Tableau[0])
		}
		if !r.Game.CanUndo {
			t.Errorf("relaxed can undo after a take-back")
		}
	})
}

func TestLegalMovesArePlayable(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		for _, variant := range []string{"klondike", "relaxed", "harp"} {
			g := e.createGame(map[string]any{"variant": variant, "seed": 2026})
			for step := 0; step < 25; step++ {
				l := e.legal(g.ID)
				var want []api.MoveRequest
				for _, m := range domain.LegalMoves(e.load(g.ID)) {
					want = append(want, fromDomain(m))
				}
				if !reflect.DeepEqual(l.Moves, want) {
					t.Fatalf("%s step %d: legal moves %+v, domain says %+v", variant, step, l.Moves, want)
				}
				// Prefer building moves, then flips and draws; never resign or undo.
				pick := -1
				for i, m := range l.Moves {
					switch {
					case m.Type == "move" || m.Type == "take-back" && pick < 0:
						if pick < 0 || l.Moves[pick].Type != "move" {
							pick = i
						}
					case (m.Type == "flip" || m.Type == "autocomplete") && (pick < 0 || l.Moves[pick].Type == "draw"):
						pick = i
					case m.Type == "draw" && pick < 0:
						pick = i
					}
				}
				if pick < 0 {
					break
				}
				var r api.MoveResult
				e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: l.Moves[pick],
					header: map[string]string{"If-Match": quoted(l.Version)}}).decode(t, &r)
				if r.Game.Version != l.Version+len(r.Events) || r.Events[0].Version != l.Version+1 {
					t.Fatalf("%s: version %d after %d with %d events", variant, r.Game.Version, l.Version, len(r.Events))
				}
				if r.Game.Status != "in_progress" {
					break
				}
			}
		}
	})
}

func TestIfMatch(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(api.CreateGameRequest{Variant: "klondike"})
		path := "/v1/games/" + g.ID + "/moves"
		r := e.must(http.StatusOK, req{method: "POST", path: path, body: draw(), header: map[string]string{"If-Match": `"1"`}})
		if r.header.Get("ETag") != `"2"` {
			t.Errorf("ETag %q", r.header.Get("ETag"))
		}
		r = e.must(http.StatusPreconditionFailed, req{method: "POST", path: path, body: draw(), header: map[string]string{"If-Match": `"1"`}})
		if p := r.problem(t); p.Code != api.CodeStaleVersion || r.header.Get("ETag") != `"2"` {
			t.Errorf("stale: %+v ETag %q", p, r.header.Get("ETag"))
		}
		for _, bad := range []string{`1`, `"x"`, `W/"2"`, `"2", "3"`, `"-1"`, `"02"`} {
			r := e.do(req{method: "POST", path: path, body: draw(), header: map[string]string{"If-Match": bad}})
			if r.status != http.StatusBadRequest || r.problem(t).Param != "If-Match" {
				t.Errorf("If-Match %s: %d %s", bad, r.status, r.body)
			}
		}
		e.must(http.StatusOK, req{method: "POST", path: path, body: draw(), header: map[string]string{"If-Match": `*`}})
		if v := e.version(g.ID); v != 3 {
			t.Errorf("version %d, want 3: a refused If-Match appended", v)
		}
	})
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(api.CreateGameRequest{Variant: "klondike"})
		path := "/v1/games/" + g.ID + "/moves"
		key := map[string]string{"Idempotency-Key": "draw-1"}
		first := e.must(http.StatusOK, req{method: "POST", path: path, body: draw(), header: key})
		again := e.must(http.StatusOK, req{method: "POST", path: path, body: draw(), header: key})
		if !bytes.Equal(first.body, again.body) || again.header.Get("Idempotent-Replayed") != "true" ||
			again.header.Get("ETag") != first.header.Get("ETag") || first.header.Get("Idempotent-Replayed") != "" {
			t.Errorf("replay differs:\n%s\n%s\n%v", first.body, again.body, again.header)
		}
		if v := e.version(g.ID); v != 2 {
			t.Fatalf("a replay appended: version %d", v)
		}
		// Same key, another request: 422, nothing appended.
		for _, q := range []req{
			{method: "POST", path: path, body: resign(), header: key},
			{method: "POST", path: path, body: `{"type": "draw"}`, header: key},
		} {
			r := e.do(q)
			if r.status != http.StatusUnprocessableEntity || r.problem(t).Code != api.CodeIdempotencyKeyReused {
				t.Errorf("reused key: %d %s", r.status, r.body)
			}
		}
		g2 := e.createGame(api.CreateGameRequest{Variant: "klondike"})
		if r := e.do(req{method: "POST", path: "/v1/games/" + g2.ID + "/moves", body: draw(), header: key}); r.status != 422 {
			t.Errorf("the key on another game's path: %d", r.status)
		}
		if v := e.version(g.ID); v != 2 {
			t.Fatalf("reused keys appended: version %d", v)
		}
		// Keys are per player.
		_, other := e.newPlayer("Eve")
		og := e.do(req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "klondike"}, token: other})
		var ogame api.Game
		og.decode(t, &ogame)
		e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + ogame.ID + "/moves", body: draw(), header: key, token: other})

		// A refused move is kept too: its retry gets the same answer.
		k2 := map[string]string{"Idempotency-Key": "bad move"}
		bad := move("stock", "tableau/0", 0)
		r1 := e.do(req{method: "POST", path: path, body: bad, header: k2})
		r2 := e.do(req{method: "POST", path: path, body: bad, header: k2})
		if r1.status != 422 || r2.status != 422 || r2.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("refused move with a key: %d, retry %d %v", r1.status, r2.status, r2.header)
		}

		// Creating a game with a key: one game, the same answer.
		before := e.countGames()
		ck := map[string]string{"Idempotency-Key": strings.Repeat("k", 255)}
		c1 := e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "harp"}, header: ck})
		c2 := e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "harp"}, header: ck})
		if !bytes.Equal(c1.body, c2.body) || c2.header.Get("Location") != c1.header.Get("Location") || c1.header.Get("Location") == "" {
			t.Errorf("create replay differs")
		}
		if n := e.countGames(); n != before+1 {
			t.Errorf("%d games created with one key", n-before)
		}
		long := map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}
		if r := e.do(req{method: "POST", path: path, body: draw(), header: long, invalid: true}); r.status != 400 {
			t.Errorf("a 256-character key: %d", r.status)
		}

		// Concurrent retries with one key: one move.
		v0 := e.version(g.ID)
		ck2 := map[string]string{"Idempotency-Key": "concurrent"}
		var wg sync.WaitGroup
		results := make([]resp, 6)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = e.do(req{method: "POST", path: path, body: draw(), header: ck2})
			}()
		}
		wg.Wait()
		for i, r := range results {
			if r.status != http.StatusOK || !bytes.Equal(r.body, results[0].body) {
				t.Errorf("concurrent retry %d: %d", i, r.status)
			}
		}
		if v := e.version(g.ID); v != v0+1 {
			t.Errorf("concurrent retries appended %d events, want 1", v-v0)
		}
	})
}

func TestTimeLimit(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		// R5.3: a command after the deadline is refused and the expiry logged.
		g := e.createGame(api.CreateGameRequest{Variant: "klassik"})
		if g.StartedAt == nil || g.Deadline == nil {
			t.Fatalf("R5.2: a timed game starts at creation: %+v", g)
		}
		e.clock.Advance(301 * time.Second)
		r := e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: draw()})
		if p := r.problem(t); r.status != http.StatusConflict || p.Reason != "time_expired" {
			t.Errorf("move after the deadline: %d %+v", r.status, p)
		}
		got := e.getGame(g.ID)
		if got.Status != "expired" || got.Version != 2 || got.ElapsedMS != 300000 || got.Stock.Cards == nil {
			t.Errorf("expired game: status %s version %d elapsed %d", got.Status, got.Version, got.ElapsedMS)
		}
		// Reading past the deadline shows it expired before any command.
		g = e.createGame(api.CreateGameRequest{Variant: "klassik"})
		e.clock.Advance(300 * time.Second)
		if got := e.getGame(g.ID); got.Status != "expired" {
			t.Errorf("read after the deadline: %s", got.Status)
		}
		r = e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: draw()})
		if p := r.problem(t); r.status != http.StatusConflict || p.Reason != "game_over" {
			t.Errorf("move in an expired game: %d %+v", r.status, p)
		}
	})
}

// TestMoveFieldsFit: a move request with a field its command does not take
// (api.MoveFields, the table the spec's one schema per command is built
// from) is refused with 400 invalid_body naming the field, and nothing is
// played, a resign included; both databases.
func TestMoveFieldsFit(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(map[string]any{"variant": "klondike"})
		for _, c := range []struct {
			body  string
			param string
		}{
			{`{"type":"resign","pile":"tableau/0"}`, "pile"},
			{`{"type":"draw","from":"waste"}`, "from"},
			{`{"type":"draw","count":1}`, "count"},
			{`{"type":"undo","to":"foundation"}`, "to"},
			{`{"type":"flip","pile":"tableau/1","from":"waste"}`, "from"},
			{`{"type":"move","from":"waste","to":"tableau/1","pile":"tableau/2"}`, "pile"},
		} {
			r := e.must(http.StatusBadRequest, req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: c.body, invalid: true})
			if p := r.problem(t); p.Code != api.CodeInvalidBody || p.Param != c.param {
				t.Errorf("%s: %+v, want invalid_body naming %s", c.body, p, c.param)
			}
		}
		if got := e.getGame(g.ID); got.Status != "in_progress" || got.Version != 1 {
			t.Fatalf("after the refused requests: %s at version %d, want in_progress at 1", got.Status, got.Version)
		}
	})
}
