package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openpatience/solitaire/api"
)

// TestStrictJSON: a body with a duplicate member name, a name that differs
// from the field's only in case, or invalid UTF-8 is refused with 400
// invalid_body naming the field, and changes nothing, on both databases.
// encoding/json (v1) took the last duplicate and matched names without
// case, so {"type":"draw","type":"resign"} resigned.
func TestStrictJSON(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(api.CreateGameRequest{Variant: "klondike"})
		moves := "/v1/games/" + g.ID + "/moves"
		cases := []struct {
			name, path, body string
			param, detail    string // the problem's param and a part of its detail
		}{
			{"duplicate type", moves, `{"type":"draw","type":"resign"}`, "type", "appears twice"},
			{"duplicate, same value", moves, `{"type":"draw","type":"draw"}`, "type", "appears twice"},
			{"name in upper case", moves, `{"TYPE":"draw"}`, "TYPE", `did you mean "type"`},
			{"name in mixed case beside the right one", "/v1/games", `{"variant":"klondike","Variant":"harp"}`, "Variant", `did you mean "variant"`},
			{"duplicate nested", "/v1/games", `{"variant":"klondike","options":{"draw":1,"draw":3}}`, "options.draw", "appears twice"},
			{"case in a nested name", "/v1/games", `{"variant":"klondike","options":{"Draw":3}}`, "options.Draw", `did you mean "draw"`},
			{"invalid UTF-8 in a value", "/v1/players", "{\"name\":\"A\xffda\"}", "name", "UTF-8"},
			{"duplicate name of a player", "/v1/players", `{"name":"Ada","name":"Eve"}`, "name", "appears twice"},
		}
		for _, c := range cases {
			before := tableCounts(t, e.store)
			r := e.do(req{method: "POST", path: c.path, body: c.body, invalid: true})
			if r.status != http.StatusBadRequest {
				t.Errorf("%s: status %d, want 400: %s", c.name, r.status, truncate(r.body))
				continue
			}
			p := r.problem(t)
			if p.Code != api.CodeInvalidBody || p.Param != c.param || !strings.Contains(p.Detail, c.detail) {
				t.Errorf("%s: code %q param %q detail %q; want %s, param %q, detail with %q",
					c.name, p.Code, p.Param, p.Detail, api.CodeInvalidBody, c.param, c.detail)
			}
			if d := sameCounts(before, tableCounts(t, e.store)); d != "" {
				t.Errorf("%s: a refused request changed the database: %s", c.name, d)
			}
		}
		if got := e.getGame(g.ID); got.Status != "in_progress" || got.Version != g.Version {
			t.Errorf("game after the refused moves: %s at version %d, want in_progress at %d", got.Status, got.Version, g.Version)
		}
		// The same bodies with one member each are accepted.
		e.must(http.StatusOK, req{method: "POST", path: moves, body: `{"type":"draw"}`})
		if got := e.createGame(map[string]any{"variant": "harp"}); got.Variant != "harp" {
			t.Errorf("variant %q, want harp", got.Variant)
		}
	})
}
