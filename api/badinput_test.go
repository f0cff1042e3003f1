package api_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/openpatience/solitaire/api"
)

// TestBadInput sends malformed and refused requests of every kind: each
// gets a 4xx problem with a stable code (never a 500) and appends nothing.
func TestBadInput(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(api.CreateGameRequest{Variant: "klondike", Layout: runs()})
		e.play(g.ID, move("tableau/0", "foundation", 0))
		_, otherToken := e.newPlayer("Mallory")
		moves := "/v1/games/" + g.ID + "/moves"
		huge := `{"type":"draw","pad":"` + strings.Repeat("x", api.DefaultMaxBodyBytes) + `"}`

		type tc struct {
			name    string
			q       req
			status  int
			code    string
			reason  string // for illegal moves and layouts
			valid   bool   // the request itself keeps to the spec
			nothing bool   // check nothing was appended to g
		}
		mv := func(name, body string, status int, code, reason string, valid bool) tc {
			return tc{name: name, q: req{method: "POST", path: moves, body: body}, status: status, code: code,
				reason: reason, valid: valid, nothing: true}
		}
		cases := []tc{
			// Unreadable bodies: 400.
			mv("malformed JSON", `{"type":`, 400, api.CodeInvalidBody, "", false),
			mv("not JSON", `draw`, 400, api.CodeInvalidBody, "", false),
			mv("empty body", ``, 400, api.CodeInvalidBody, "", false),
			mv("array", `[{"type":"draw"}]`, 400, api.CodeInvalidBody, "", false),
			mv("null", `null`, 400, api.CodeInvalidBody, "", false),
			mv("trailing data", `{"type":"draw"} {"type":"draw"}`, 400, api.CodeInvalidBody, "", false),
			mv("trailing garbage", `{"type":"draw"}x`, 400, api.CodeInvalidBody, "", false),
			mv("type not a string", `{"type":1}`, 400, api.CodeInvalidBody, "", false),
			mv("count a string", `{"type":"move","from":"tableau/1","to":"foundation","count":"1"}`, 400, api.CodeInvalidBody, "", false),
			mv("count a fraction", `{"type":"move","from":"tableau/1","to":"foundation","count":1.5}`, 400, api.CodeInvalidBody, "", false),
			mv("count huge", `{"type":"move","from":"tableau/1","to":"foundation","count":1e30}`, 400, api.CodeInvalidBody, "", false),
			mv("pile not a string", `{"type":"flip","pile":3}`, 400, api.CodeInvalidBody, "", false),
			mv("unknown field", `{"type":"draw","cards":["AS"]}`, 400, api.CodeInvalidBody, "", false),
			mv("missing type", `{}`, 400, api.CodeInvalidBody, "", false),
			// Read, but not a legal move: 422 with a reason.
			mv("unknown type", `{"type":"jump"}`, 422, api.CodeIllegalMove, "unknown_move_type", false),
			mv("bad pile name", `{"type":"move","from":"tableau/x","to":"foundation"}`, 422, api.CodeIllegalMove, "bad_pile", false),
			mv("pile with a leading zero", `{"type":"move","from":"tableau/01","to":"foundation"}`, 422, api.CodeIllegalMove, "bad_pile", false),
			mv("no such pile", `{"type":"move","from":"tableau/50","to":"foundation"}`, 422, api.CodeIllegalMove, "no_such_pile", true),
			mv("no such foundation", `{"type":"move","from":"tableau/1","to":"foundation/4"}`, 422, api.CodeIllegalMove, "no_such_pile", true),
			mv("count zero", `{"type":"move","from":"tableau/1","to":"tableau/4","count":0}`, 422, api.CodeIllegalMove, "bad_count", false),
			mv("count negative", `{"type":"move","from":"tableau/1","to":"tableau/4","count":-3}`, 422, api.CodeIllegalMove, "bad_count", false),
			mv("count too large", `{"type":"move","from":"tableau/1","to":"tableau/4","count":14}`, 422, api.CodeIllegalMove, "bad_count", false),
			mv("not a run", `{"type":"move","from":"tableau/0","to":"tableau/4","count":13}`, 422, api.CodeIllegalMove, "not_a_run", true),
			mv("card does not fit", `{"type":"move","from":"tableau/1","to":"tableau/2"}`, 422, api.CodeIllegalMove, "card_does_not_fit", true),
			mv("only a king on empty", `{"type":"move","from":"tableau/1","to":"tableau/5"}`, 422, api.CodeIllegalMove, "only_king_on_empty", true),
			mv("from the stock", `{"type":"move","from":"stock","to":"tableau/5"}`, 422, api.CodeIllegalMove, "bad_source", true),
			mv("nothing to draw", `{"type":"draw"}`, 422, api.CodeIllegalMove, "nothing_to_draw", true),
			mv("flip is automatic", `{"type":"flip","pile":"tableau/1"}`, 422, api.CodeIllegalMove, "flip_is_automatic", true),
			mv("take-back not allowed", `{"type":"take-back","from":"foundation/0","to":"tableau/0"}`, 422, api.CodeIllegalMove, "take_back_not_allowed", true),
			// Headers.
			{name: "huge body", q: req{method: "POST", path: moves, body: huge}, status: 413, code: api.CodeBodyTooLarge, nothing: true},
			{name: "text body", q: req{method: "POST", path: moves, body: `{"type":"draw"}`, header: map[string]string{"Content-Type": "text/plain"}},
				status: 415, code: api.CodeUnsupportedMedia, nothing: true},
			{name: "bad If-Match", q: req{method: "POST", path: moves, body: draw(), header: map[string]string{"If-Match": "two"}},
				status: 400, code: api.CodeInvalidParameter, valid: true, nothing: true},
			{name: "stale If-Match", q: req{method: "POST", path: moves, body: `{"type":"resign"}`, header: map[string]string{"If-Match": `"1"`}},
				status: 412, code: api.CodeStaleVersion, valid: true, nothing: true},
			{name: "long Idempotency-Key", q: req{method: "POST", path: moves, body: draw(), header: map[string]string{"Idempotency-Key": strings.Repeat("k", 300)}},
				status: 400, code: api.CodeInvalidParameter, nothing: true},
			{name: "no token", q: req{method: "POST", path: moves, body: `{"type":"resign"}`, token: "-"}, status: 401, code: api.CodeUnauthorized, nothing: true},
			{name: "wrong token", q: req{method: "POST", path: moves, body: `{"type":"resign"}`, token: "x" + otherToken}, status: 401, code: api.CodeUnauthorized, nothing: true},
			{name: "foreign game", q: req{method: "POST", path: moves, body: `{"type":"resign"}`, token: otherToken}, status: 404, code: api.CodeNotFound, valid: true, nothing: true},
			{name: "no such game", q: req{method: "POST", path: "/v1/games/0123/moves", body: draw()}, status: 404, code: api.CodeNotFound, valid: true},
			{name: "overlong game id", q: req{method: "GET", path: "/v1/games/" + strings.Repeat("a", 100)}, status: 404, code: api.CodeNotFound, valid: true},
			// Routes.
			{name: "unknown route", q: req{method: "GET", path: "/v1/nope"}, status: 404, code: api.CodeNotFound},
			{name: "unknown route, no token", q: req{method: "GET", path: "/nope", token: "-"}, status: 404, code: api.CodeNotFound},
			{name: "trailing slash", q: req{method: "GET", path: "/v1/games/"}, status: 404, code: api.CodeNotFound},
			{name: "wrong method", q: req{method: "DELETE", path: "/v1/games/" + g.ID}, status: 405, code: api.CodeMethodNotAllowed, nothing: true},
			{name: "wrong method on moves", q: req{method: "PUT", path: moves, body: draw()}, status: 405, code: api.CodeMethodNotAllowed, nothing: true},
			// Creating games.
			{name: "unknown variant", q: req{method: "POST", path: "/v1/games", body: `{"variant":"spider"}`}, status: 422, code: api.CodeUnknownVariant, valid: true},
			{name: "no variant", q: req{method: "POST", path: "/v1/games", body: `{"options":{}}`}, status: 400, code: api.CodeInvalidBody},
			{name: "variant not a string", q: req{method: "POST", path: "/v1/games", body: `{"variant":["klondike"]}`}, status: 400, code: api.CodeInvalidBody},
			{name: "unknown option", q: req{method: "POST", path: "/v1/games", body: `{"variant":"klondike","options":{"passes":3}}`}, status: 400, code: api.CodeInvalidBody},
			{name: "draw not offered", q: req{method: "POST", path: "/v1/games", body: `{"variant":"klondike","options":{"draw":3}}`}, status: 422, code: api.CodeInvalidOption, valid: true},
			{name: "draw 2", q: req{method: "POST", path: "/v1/games", body: `{"variant":"relaxed","options":{"draw":2}}`}, status: 422, code: api.CodeInvalidOption},
			{name: "scoring for 2 decks", q: req{method: "POST", path: "/v1/games", body: `{"variant":"harp","options":{"scoring":"vegas"}}`}, status: 422, code: api.CodeInvalidOption, valid: true},
			{name: "unknown scoring", q: req{method: "POST", path: "/v1/games", body: `{"variant":"klondike","options":{"scoring":"golf"}}`}, status: 422, code: api.CodeInvalidOption},
			{name: "time limit too short", q: req{method: "POST", path: "/v1/games", body: `{"variant":"klondike","options":{"time_limit_s":5}}`}, status: 422, code: api.CodeInvalidOption, valid: true},
			{name: "flip mode", q: req{method: "POST", path: "/v1/games", body: `{"variant":"klondike","options":{"flip":"never"}}`}, status: 422, code: api.CodeInvalidOption},
			{name: "negative seed", q: req{method: "POST", path: "/v1/games", body: `{"variant":"klondike","seed":-1}`}, status: 400, code: api.CodeInvalidBody},
			{name: "seed too large", q: req{method: "POST", path: "/v1/games", body: `{"variant":"klondike","seed":18446744073709551616}`}, status: 400, code: api.CodeInvalidBody},
			{name: "seed a string of no digits", q: req{method: "POST", path: "/v1/games", body: `{"variant":"klondike","seed":"forty-two"}`}, status: 400, code: api.CodeInvalidBody},
			{name: "layout not an object", q: req{method: "POST", path: "/v1/games", body: `{"variant":"klondike","layout":"AS"}`}, status: 400, code: api.CodeInvalidBody},
			{name: "layout with waste", q: req{method: "POST", path: "/v1/games", body: `{"variant":"klondike","layout":{"tableau":[],"stock":[],"waste":[]}}`}, status: 400, code: api.CodeInvalidBody},
			{name: "duel", q: req{method: "POST", path: "/v1/games", body: `{"variant":"klondike","duel_id":"d1"}`}, status: 422, code: api.CodeInvalidField, valid: true},
			// Players.
			{name: "player huge body", q: req{method: "POST", path: "/v1/players", body: `{"name":"` + strings.Repeat("x", 70000) + `"}`, token: "-"}, status: 413, code: api.CodeBodyTooLarge},
		}
		before := e.countGames()
		for _, c := range cases {
			c.q.invalid = !c.valid
			v0 := e.version(g.ID)
			r := e.do(c.q)
			if r.status != c.status {
				t.Errorf("%s: status %d, want %d: %s", c.name, r.status, c.status, truncate(r.body))
				continue
			}
			p := r.problem(t)
			if p.Code != c.code || (c.reason != "" && p.Reason != c.reason) {
				t.Errorf("%s: %s/%s, want %s/%s: %s", c.name, p.Code, p.Reason, c.code, c.reason, p.Detail)
			}
			if c.nothing {
				if v := e.version(g.ID); v != v0 {
					t.Errorf("%s: appended %d events", c.name, v-v0)
				}
			}
		}
		if n := e.countGames(); n != before {
			t.Errorf("refused requests created %d games", n-before)
		}
		if got := e.getGame(g.ID); got.Version != 2 || got.Moves != 1 || got.Status != "in_progress" {
			t.Errorf("game after the bad requests: version %d moves %d %s", got.Version, got.Moves, got.Status)
		}
	})
}

// specBytes is openapi.yaml as committed.
func specBytes(t *testing.T) []byte {
	b, err := os.ReadFile("../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOperations(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		e.must(http.StatusOK, req{method: "GET", path: "/healthz", token: "-"})
		e.must(http.StatusOK, req{method: "GET", path: "/readyz", token: "-"})
		m := e.must(http.StatusOK, req{method: "GET", path: "/metrics", token: "-"})
		for _, want := range []string{
			`solitaire_http_requests_total{code="200",method="GET",route="/readyz"} 1`,
			`solitaire_http_request_duration_seconds_bucket{method="GET",route="/healthz"`,
			`solitaire_http_requests_in_flight`,
		} {
			if !strings.Contains(string(m.body), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		y := e.must(http.StatusOK, req{method: "GET", path: "/openapi.yaml", token: "-"})
		if string(y.body) != string(specBytes(t)) || y.header.Get("Content-Type") != "application/yaml" {
			t.Errorf("/openapi.yaml is not openapi.yaml byte for byte")
		}
		j := e.must(http.StatusOK, req{method: "GET", path: "/openapi.json", token: "-"})
		if !strings.Contains(string(j.body), `"openapi":"3.0.3"`) || !strings.Contains(string(j.body), `"/v1/games/{id}/moves"`) {
			t.Errorf("/openapi.json: %s", truncate(j.body))
		}
		for _, page := range []string{"/docs", "/docs/index.html"} {
			d := e.must(http.StatusOK, req{method: "GET", path: page, token: "-"})
			if !strings.Contains(string(d.body), "swagger-ui-bundle.js") || d.header.Get("Content-Security-Policy") == "" {
				t.Errorf("%s is not Swagger UI's page:\n%s", page, truncate(d.body))
			}
		}
		if js := e.must(http.StatusOK, req{method: "GET", path: "/docs/swagger-initializer.js", token: "-"}); !strings.Contains(string(js.body), `"/openapi.json"`) {
			t.Errorf("Swagger UI does not render /openapi.json:\n%s", truncate(js.body))
		}
		e.must(http.StatusNotFound, req{method: "GET", path: "/docs/doc.json", token: "-", invalid: true})
		// The request id comes back, given or generated.
		r := e.must(http.StatusOK, req{method: "GET", path: "/healthz", token: "-", header: map[string]string{"X-Request-Id": "abc-123"}})
		if r.header.Get("X-Request-Id") != "abc-123" {
			t.Errorf("request id %q", r.header.Get("X-Request-Id"))
		}
		r = e.must(http.StatusOK, req{method: "GET", path: "/healthz", token: "-", header: map[string]string{"X-Request-Id": "bad id!"}})
		if id := r.header.Get("X-Request-Id"); len(id) != 32 {
			t.Errorf("generated request id %q", id)
		}
	})
}
