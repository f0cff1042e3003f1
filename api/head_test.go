package api_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
)

// volatileHeaders differ between any two responses, whatever the method.
var volatileHeaders = []string{"Date", "X-Request-Id", "Ratelimit"}

// TestHeadOnEveryGetRoute (RFC 9110 §9.3.2): every GET operation of
// openapi.yaml answers HEAD with the status and headers of the GET (the
// same Content-Length and ETag) and no body, on a game, a duel, a variant,
// a file of the page, and on a game that is not there; and openapi.yaml
// describes that HEAD beside each GET, with the GET's status codes and
// header fields and no bodies.
func TestHeadOnEveryGetRoute(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		game := e.createGame(api.CreateGameRequest{Variant: "klondike"})
		e.play(game.ID, draw())
		var duel api.Duel
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/duels", body: map[string]any{"winnable": false}}).decode(t, &duel)
		doc, err := openapi3.NewLoader().LoadFromData(solitaire.OpenAPIYAML)
		if err != nil {
			t.Fatal(err)
		}
		values := map[string]string{"version": "1", "variant": "klondike", // the log's tiles: height 8, level 0, tile 000
			"height": "8", "level": "0", "p1": "000", "p2": "000", "p3": "000", "p4": "000"}
		tested := 0
		for _, path := range doc.Paths.InMatchingOrder() {
			op := doc.Paths.Value(path).Get
			if op == nil {
				continue
			}
			checkHeadOperation(t, path, op, doc.Paths.Value(path).Head)
			concrete := path
			for _, p := range op.Parameters {
				if p.Value == nil || p.Value.In != "path" {
					continue
				}
				v, ok := values[p.Value.Name]
				switch {
				case p.Value.Name == "id" && strings.HasPrefix(path, "/v1/duels/"):
					v, ok = duel.ID, true
				case p.Value.Name == "id":
					v, ok = game.ID, true
				case p.Value.Schema != nil && len(p.Value.Schema.Value.Enum) > 0:
					v, ok = p.Value.Schema.Value.Enum[0].(string)
				}
				if !ok {
					t.Fatalf("GET %s: no value for path parameter %s; add one to this test", path, p.Value.Name)
				}
				concrete = strings.ReplaceAll(concrete, "{"+p.Value.Name+"}", v)
			}
			compareHead(t, e, concrete)
			tested++
		}
		if tested == 0 {
			t.Errorf("no GET route in openapi.yaml")
		}
		// A GET route lists HEAD among the methods it takes.
		if r := e.do(req{method: "POST", path: "/v1/variants", body: "{}", invalid: true}); r.header.Get("Allow") != "GET, HEAD" {
			t.Errorf("POST /v1/variants: %d, Allow %q, want GET, HEAD", r.status, r.header.Get("Allow"))
		}
		compareHead(t, e, "/v1/games/nope")    // 404
		compareHead(t, e, "/docs/nothing.js")  // 404
		compareHead(t, e, "/v1/players")       // 405: POST only
		compareHead(t, e, "/v1/no-such-route") // 404
	})
}

// checkHeadOperation fails t unless head describes HEAD beside the GET
// operation get of path: the same parameters, status codes and header
// fields, no bodies.
func checkHeadOperation(t *testing.T, path string, get, head *openapi3.Operation) {
	t.Helper()
	if head == nil {
		t.Errorf("openapi.yaml: GET %s has no HEAD beside it", path)
		return
	}
	if len(head.Parameters) != len(get.Parameters) || head.OperationID == get.OperationID {
		t.Errorf("HEAD %s: %d parameters (GET: %d), operationId %s", path, len(head.Parameters), len(get.Parameters), head.OperationID)
	}
	for status, r := range get.Responses.Map() {
		h := head.Responses.Value(status)
		if h == nil || h.Value == nil {
			t.Errorf("HEAD %s: no %s", path, status)
			continue
		}
		if len(h.Value.Content) != 0 {
			t.Errorf("HEAD %s: %s has a body", path, status)
		}
		for name := range r.Value.Headers {
			if h.Value.Headers[name] == nil {
				t.Errorf("HEAD %s: %s lacks %s", path, status, name)
			}
		}
	}
	if head.Responses.Len() != get.Responses.Len() {
		t.Errorf("HEAD %s: %d responses, GET %d", path, head.Responses.Len(), get.Responses.Len())
	}
}

// compareHead sends GET and HEAD for path (with the env's token) and fails
// unless they answer the same status and headers, HEAD with no body.
func compareHead(t *testing.T, e *env, path string) {
	t.Helper()
	send := func(method string) (*http.Response, []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := http.NewRequestWithContext(ctx, method, e.srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("Authorization", "Bearer "+e.token)
		r.Header.Set("Accept-Encoding", "identity")
		res, err := http.DefaultTransport.RoundTrip(r)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		var body []byte
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			b, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			body = b
		}
		return res, body
	}
	get, getBody := send(http.MethodGet)
	head, headBody := send(http.MethodHead)
	if head.StatusCode != get.StatusCode {
		t.Errorf("%s: HEAD %d, GET %d", path, head.StatusCode, get.StatusCode)
	}
	if len(headBody) != 0 {
		t.Errorf("%s: HEAD sent a body of %d bytes", path, len(headBody))
	}
	if n := get.Header.Get("Content-Length"); n != "" && path != "/metrics" && n != strconv.Itoa(len(getBody)) {
		t.Errorf("%s: GET Content-Length %s, body %d bytes", path, n, len(getBody))
	}
	for _, h := range []http.Header{get.Header, head.Header} {
		for _, k := range volatileHeaders {
			h.Del(k)
		}
	}
	if path == "/metrics" { // the counters move between the two requests
		get.Header.Del("Content-Length")
		head.Header.Del("Content-Length")
	}
	keys := func(h http.Header) []string {
		var ks []string
		for k := range h {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	if !slices.Equal(keys(get.Header), keys(head.Header)) {
		t.Errorf("%s: HEAD headers %v, GET %v", path, keys(head.Header), keys(get.Header))
	}
	for k, v := range get.Header {
		if !slices.Equal(head.Header[k], v) {
			t.Errorf("%s: HEAD %s %q, GET %q", path, k, head.Header[k], v)
		}
	}
}
