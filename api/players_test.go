package api_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/openpatience/solitaire/api"
)

func TestCreatePlayer(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		var p api.PlayerCreated
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/players", body: `{"name":"Grace"}`, token: "-"}).decode(t, &p)
		if p.Name != "Grace" || p.ID == "" {
			t.Errorf("player = %+v", p)
		}
		raw, err := base64.RawURLEncoding.DecodeString(p.Token)
		if err != nil || len(raw) != 32 {
			t.Errorf("token %q is not 32 bytes of base64url: %v", p.Token, err)
		}
		// The token works at once and belongs to the new player.
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games", token: p.Token})

		for _, tc := range []struct {
			name, body string
			status     int
			invalid    bool
		}{
			{"empty name", `{"name":""}`, http.StatusBadRequest, true},
			{"blank name", `{"name":"   "}`, http.StatusUnprocessableEntity, false},
			{"long name", `{"name":"` + strings.Repeat("x", 65) + `"}`, http.StatusUnprocessableEntity, true},
			{"control character", `{"name":"a\u0007b"}`, http.StatusUnprocessableEntity, false},
			{"zero-width spaces only", `{"name":"\u200b\u200b"}`, http.StatusUnprocessableEntity, false},
			{"bidirectional override", `{"name":"Ada\u202egnik"}`, http.StatusUnprocessableEntity, false},
			{"no-break spaces only", `{"name":"\u00a0\u3000"}`, http.StatusUnprocessableEntity, false},
			{"Hangul fillers only", `{"name":"\u3164\u115f\uffa0"}`, http.StatusUnprocessableEntity, false},
			{"blank Braille and marks only", `{"name":"\u2800\u0300\ufe0f\u034f"}`, http.StatusUnprocessableEntity, false},
			{"a tagged flag (tag characters)", `{"name":"\ud83c\udff4\udb40\udc67\udb40\udc62\udb40\udc65\udb40\udc6e\udb40\udc67\udb40\udc7f"}`, http.StatusCreated, false},
			{"spaces and an emoji sequence (zero-width joiner)", `{"name":"Ada L. \ud83d\udc69\u200d\ud83d\udcbb"}`, http.StatusCreated, false},
			{"missing name", `{}`, http.StatusBadRequest, true},
			{"name not a string", `{"name":1}`, http.StatusBadRequest, true},
			{"unknown field", `{"name":"x","admin":true}`, http.StatusBadRequest, true},
		} {
			r := e.do(req{method: "POST", path: "/v1/players", body: tc.body, token: "-", invalid: tc.invalid})
			if r.status != tc.status {
				t.Errorf("%s: status %d, want %d: %s", tc.name, r.status, tc.status, r.body)
			}
		}
	})
}

func TestAuth(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(api.CreateGameRequest{Variant: "klondike"})
		for _, tc := range []struct {
			name   string
			header string
		}{
			{"no header", ""},
			{"wrong scheme", "Basic Zm9vOmJhcg=="},
			{"empty token", "Bearer "},
			{"unknown token", "Bearer nope"},
		} {
			h := map[string]string{"Authorization": tc.header}
			for _, path := range []string{"/v1/games", "/v1/games/" + g.ID, "/v1/games/" + g.ID + "/events"} {
				r := e.do(req{method: "GET", path: path, token: "-", header: h, invalid: true})
				if r.status != http.StatusUnauthorized || r.problem(t).Code != api.CodeUnauthorized {
					t.Errorf("%s %s: %d %s", tc.name, path, r.status, r.body)
				}
			}
			r := e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: draw(), token: "-", header: h, invalid: true})
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s move: %d", tc.name, r.status)
			}
		}
		if v := e.version(g.ID); v != 1 {
			t.Errorf("unauthorized moves appended: version %d", v)
		}
		// Variants and the spec need no token.
		e.must(http.StatusOK, req{method: "GET", path: "/v1/variants", token: "-"})
	})
}
