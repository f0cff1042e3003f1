package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/openpatience/solitaire/api"
)

// checkTooMany fails unless r is 429 rate_limited with a Retry-After of
// whole seconds from 1.
func checkTooMany(t *testing.T, what string, r resp) {
	t.Helper()
	if r.status != http.StatusTooManyRequests {
		t.Fatalf("%s: status %d, want 429: %s", what, r.status, truncate(r.body))
	}
	if p := r.problem(t); p.Code != api.CodeRateLimited {
		t.Errorf("%s: code %q, want %s", what, p.Code, api.CodeRateLimited)
	}
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("%s: Retry-After %q, want whole seconds from 1", what, r.header.Get("Retry-After"))
	}
}

// TestRateLimit: rate limits answer 429 with Retry-After (README
// "Limits"). Each
// token has its own bucket; requests without a token share their
// address's; the probes, metrics and spec are not limited by these buckets
// (the probes' own limit: TestProbeRateLimit).
func TestRateLimit(t *testing.T) {
	const burst = 4
	// One request every 10 s refills: nothing refills during the test.
	e := newEnvOn(t, openStore(t, "sqlite"), func(c *api.Config) { c.RateLimit, c.RateBurst = 0.1, burst })
	// newEnvOn made a player: one request of the address's bucket. One more.
	_, other := e.newPlayer("Bob")

	for i := 0; i < burst; i++ {
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games"})
	}
	before := tableCounts(t, e.store)
	r := e.do(req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "klondike"}})
	checkTooMany(t, "token over its burst", r)
	if d := sameCounts(before, tableCounts(t, e.store)); d != "" {
		t.Errorf("a limited request changed the database: %s", d)
	}
	if s := r.header.Get("Retry-After"); s != "10" {
		t.Errorf("Retry-After %s, want 10 (one request per 10 s)", s)
	}
	// Another token is not affected.
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games", token: other})

	// Without a token: the address's bucket, two spent on players.
	for i := 2; i < burst; i++ {
		e.must(http.StatusOK, req{method: "GET", path: "/v1/variants", token: "-"})
	}
	checkTooMany(t, "address over its burst", e.do(req{method: "GET", path: "/v1/variants", token: "-"}))
	e.must(http.StatusNotFound, req{method: "GET", path: "/v2/nothing", token: "-"}) // no route: not limited
	before = tableCounts(t, e.store)
	checkTooMany(t, "new player over the burst", e.do(req{method: "POST", path: "/v1/players", token: "-", body: api.NewPlayer{Name: "Eve"}}))
	if d := sameCounts(before, tableCounts(t, e.store)); d != "" {
		t.Errorf("a limited request changed the database: %s", d)
	}
	// The probes (without a limit of their own here), metrics and the
	// spec are not limited by the API's buckets.
	for _, path := range []string{"/healthz", "/readyz", "/openapi.yaml", "/openapi.json", "/docs", "/metrics"} {
		for i := 0; i < 2; i++ {
			if r := e.do(req{method: "GET", path: path, token: "-"}); r.status != http.StatusOK {
				t.Errorf("%s: %d while the address is limited", path, r.status)
			}
		}
	}
}

// TestProbeRateLimit: GET /healthz and /readyz share a bucket per client
// address (Config.ProbeRateLimit, bursts of twice the rate rounded up) and
// spend from no other: over it they answer 429 rate_limited with
// Retry-After and the "probes" RateLimit fields, whatever token they carry,
// while the address's API requests, a real token's requests, /metrics, the
// spec and the probes of another address are served as before.
func TestProbeRateLimit(t *testing.T) {
	const burst = 4
	// Probes: 0.1 a second, so a burst of 1 refilled in 10 s; API
	// requests: bursts of 4, also 0.1 a second. Nothing refills during
	// the test.
	e := newEnvOn(t, openStore(t, "sqlite"), func(c *api.Config) {
		c.RateLimit, c.RateBurst, c.ProbeRateLimit = 0.1, burst, 0.1
	})
	r := e.must(http.StatusOK, req{method: "GET", path: "/healthz", token: "-"})
	policy, left := rateFields(t, r)
	if p, l := policy[api.PolicyProbes], left[api.PolicyProbes]; len(policy) != 1 || p["q"] != 1 || p["w"] != 10 || l["r"] != 0 || l["t"] != 10 {
		t.Errorf("/healthz: RateLimit-Policy %v, RateLimit %v, want probes q=1 w=10 and r=0 t=10 only", policy, left)
	}
	checkTooMany(t, "/readyz after /healthz spent the probes' bucket", e.do(req{method: "GET", path: "/readyz", token: "-"}))
	// Made-up tokens change nothing for a probe, and spend nothing from
	// the address's bucket of unknown tokens (4 of them would empty it).
	for i := range burst {
		r := e.do(req{method: "GET", path: "/healthz", token: "made-up-" + strconv.Itoa(i)})
		checkTooMany(t, "/healthz with a made-up token", r)
		if ra := r.header.Get("Retry-After"); ra != "10" {
			t.Errorf("Retry-After %s, want 10 (one probe per 10 s)", ra)
		}
		if _, left := rateFields(t, r); len(left) != 1 || left[api.PolicyProbes] == nil {
			t.Errorf("a limited probe's RateLimit %v, want the probes policy only", left)
		}
	}
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games"})
	// The address's API bucket: newEnvOn's new player and this request.
	r = e.must(http.StatusOK, req{method: "GET", path: "/v1/variants", token: "-"})
	if _, left := rateFields(t, r); len(left) != 1 || left[api.PolicyRequests]["r"] != burst-2 {
		t.Errorf("/v1/variants after the probes: RateLimit %v, want requests r=%d only (probes spend none of it)", left, burst-2)
	}
	for _, path := range []string{"/metrics", "/openapi.yaml", "/openapi.json", "/docs"} {
		e.must(http.StatusOK, req{method: "GET", path: path, token: "-"})
	}
	// Another address (127.0.0.2; the test server listens on 127.0.0.1)
	// has a bucket of its own.
	other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{
		LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	res, err := other.Get(e.srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("/healthz from another address: %d, want 200", res.StatusCode)
	}
}

// TestRateLimitMadeUpTokens: a token counts as its own only once the store
// knows it. Made-up tokens count against their address, on routes that
// take a token and routes that do not; each also spends from the address's
// failure bucket, and once that is empty the address's requests with a
// token are refused before the database is asked.
func TestRateLimitMadeUpTokens(t *testing.T) {
	const burst = 4
	e := newEnvOn(t, openStore(t, "sqlite"), func(c *api.Config) { c.RateLimit, c.RateBurst = 0.1, burst })
	// newEnvOn made a player: one request of the address's bucket.
	for i := 1; i < burst; i++ {
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/players", token: "made-up-" + strconv.Itoa(i),
			body: api.NewPlayer{Name: "Eve"}})
	}
	checkTooMany(t, "new player with a made-up token over the address's burst",
		e.do(req{method: "POST", path: "/v1/players", token: "made-up-x", body: api.NewPlayer{Name: "Eve"}}))
	// Four made-up tokens: the failure bucket is empty, so even a real
	// token from this address waits.
	checkTooMany(t, "a real token after the failures", e.do(req{method: "GET", path: "/v1/games"}))
	checkTooMany(t, "a made-up token after the failures", e.do(req{method: "GET", path: "/v1/games", token: "made-up-y"}))

	// With fewer failures, a real token keeps its own bucket while its
	// address is spent.
	e = newEnvOn(t, openStore(t, "sqlite"), func(c *api.Config) { c.RateLimit, c.RateBurst = 0.1, burst })
	for i := 1; i < burst; i++ {
		e.must(http.StatusUnauthorized, req{method: "GET", path: "/v1/games", token: "made-up-" + strconv.Itoa(i)})
	}
	checkTooMany(t, "no token, address spent", e.do(req{method: "GET", path: "/v1/variants", token: "-"}))
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games"})
}

// TestCORS: with SOLITAIRE_CORS_ORIGINS a browser frontend on one of the
// origins may call the API: preflights are answered, the API's request
// headers are allowed and its response headers exposed. Other origins get
// no CORS headers (the browser withholds the answer) but are still served
// as any client; without origins the API sends no CORS headers at all.
func TestCORS(t *testing.T) {
	const origin = "https://cards.example"
	e := newEnvOn(t, openStore(t, "sqlite"), func(c *api.Config) {
		c.CORSOrigins = []string{origin, "http://localhost:5173"}
	})
	raw := func(method, path, origin string, header map[string]string) *http.Response {
		t.Helper()
		r, err := http.NewRequest(method, e.srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		for k, v := range header {
			r.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	hasAll := func(what, list string, want ...string) {
		t.Helper()
		have := map[string]bool{}
		for _, h := range strings.Split(list, ",") {
			have[strings.ToLower(strings.TrimSpace(h))] = true
		}
		for _, w := range want {
			if !have[strings.ToLower(w)] {
				t.Errorf("%s %q lacks %s", what, list, w)
			}
		}
	}

	pre := raw("OPTIONS", "/v1/games/abc/moves", origin, map[string]string{"Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization,content-type,if-match,idempotency-key"})
	if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != origin {
		t.Errorf("preflight: %d, Allow-Origin %q", pre.StatusCode, pre.Header.Get("Access-Control-Allow-Origin"))
	}
	hasAll("Allow-Headers", pre.Header.Get("Access-Control-Allow-Headers"),
		"Authorization", "Content-Type", "If-Match", "Idempotency-Key", "Last-Event-ID", "If-None-Match")
	hasAll("Allow-Methods", pre.Header.Get("Access-Control-Allow-Methods"), "GET", "POST")
	if pre.Header.Get("Access-Control-Max-Age") == "" || pre.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Errorf("preflight: Max-Age %q, Allow-Credentials %q", pre.Header.Get("Access-Control-Max-Age"),
			pre.Header.Get("Access-Control-Allow-Credentials"))
	}
	for _, tc := range []struct {
		path   string
		status int
		auth   bool
	}{{"/v1/variants", 200, false}, {"/v1/games", 200, true}, {"/v1/games/nope", 404, true}, {"/v1/games", 401, false}} {
		h := map[string]string{}
		if tc.auth {
			h["Authorization"] = "Bearer " + e.token
		}
		res := raw("GET", tc.path, origin, h)
		if res.StatusCode != tc.status || res.Header.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("GET %s from %s: %d, Allow-Origin %q", tc.path, origin, res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
		}
		hasAll("Expose-Headers", res.Header.Get("Access-Control-Expose-Headers"),
			"ETag", "Location", "Retry-After", "X-Request-Id", "Idempotent-Replayed", "Ratelimit-Policy", "Ratelimit")
		hasAll("Vary", strings.Join(res.Header.Values("Vary"), ","), "Origin")
	}

	// Another origin: served, without CORS headers; its preflight is not
	// answered (OPTIONS is no method of the API).
	res := raw("GET", "/v1/variants", "https://evil.example", nil)
	if res.StatusCode != http.StatusOK || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin: %d, Allow-Origin %q", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
	}
	hasAll("Vary", strings.Join(res.Header.Values("Vary"), ","), "Origin")
	res = raw("OPTIONS", "/v1/variants", "https://evil.example", map[string]string{"Access-Control-Request-Method": "GET"})
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Access-Control-Allow-Origin") != "" ||
		res.Header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("other origin's preflight: %d, Allow-Origin %q, %s", res.StatusCode,
			res.Header.Get("Access-Control-Allow-Origin"), res.Header.Get("Content-Type"))
	}

	// No origins configured: no CORS at all.
	plain := newEnvOn(t, openStore(t, "sqlite"), nil)
	r, _ := http.NewRequest("OPTIONS", plain.srv.URL+"/v1/variants", nil)
	r.Header.Set("Origin", origin)
	r.Header.Set("Access-Control-Request-Method", "GET")
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("no origins configured: preflight %d, Allow-Origin %q", res.StatusCode, res.Header.Get("Access-Control-Allow-Origin"))
	}

	for _, bad := range [][]string{{"cards.example"}, {"https://cards.example/app"}, {"ftp://x"}, {"https://*.example"}} {
		if _, err := api.New(api.Config{Games: e.games, Players: e.store, Idempotency: e.store,
			Spec: []byte("openapi: 3.0.0"), CORSOrigins: bad}); err == nil {
			t.Errorf("CORS origins %q accepted", bad)
		}
	}
}

// TestBodyLimit: a body over the limit (64 KiB) is answered 413
// body_too_large on every route that reads one, whether its length is
// announced or not, and creates nothing; a body of exactly the limit is
// read.
func TestBodyLimit(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(api.CreateGameRequest{Variant: "klondike"})
		pad := func(n int, prefix string) []byte {
			b := []byte(prefix)
			return append(b, bytes.Repeat([]byte(" "), n-len(b))...)
		}
		before := tableCounts(t, e.store)
		for _, path := range []string{"/v1/players", "/v1/games", "/v1/games/" + g.ID + "/moves"} {
			for _, chunked := range []bool{false, true} {
				body := pad(api.DefaultMaxBodyBytes+1, `{"name":"x","variant":"klondike","type":"draw"}`)
				hr, err := http.NewRequestWithContext(specInvalid(context.Background()), "POST", e.srv.URL+path, bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if chunked {
					hr.Body = io.NopCloser(bytes.NewReader(body)) // no length: sent chunked
					hr.ContentLength = -1
				}
				hr.Header.Set("Content-Type", "application/json")
				hr.Header.Set("Authorization", "Bearer "+e.token)
				res, err := e.client.Do(hr)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				var p api.Problem
				json.Unmarshal(b, &p)
				if res.StatusCode != http.StatusRequestEntityTooLarge || p.Code != api.CodeBodyTooLarge {
					t.Errorf("POST %s (chunked %v): %d %s", path, chunked, res.StatusCode, truncate(b))
				}
			}
		}
		if d := sameCounts(before, tableCounts(t, e.store)); d != "" {
			t.Errorf("bodies over the limit changed the database: %s", d)
		}
		// Exactly the limit: read, and answered on its merits.
		e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + g.ID + "/moves",
			body: pad(api.DefaultMaxBodyBytes, `{"type":"draw"}`)})
	})
}

// rateFields parses the RateLimit-Policy and RateLimit fields of r
// (draft-ietf-httpapi-ratelimit-headers-10: Structured Field Lists of
// `"name";q=Q;w=W` and `"name";r=R;t=T`) into policy name -> parameters.
func rateFields(t *testing.T, r resp) (policy, left map[string]map[string]int) {
	t.Helper()
	parse := func(field string, params ...string) map[string]map[string]int {
		out := map[string]map[string]int{}
		for _, v := range r.header.Values(field) {
			for _, item := range strings.Split(v, ",") {
				parts := strings.Split(strings.TrimSpace(item), ";")
				name, err := strconv.Unquote(parts[0])
				if err != nil || len(parts) != 1+len(params) {
					t.Fatalf("%s: item %q is not a quoted name with %v", field, item, params)
				}
				out[name] = map[string]int{}
				for i, p := range parts[1:] {
					k, val, ok := strings.Cut(p, "=")
					n, err := strconv.Atoi(val)
					if !ok || k != params[i] || err != nil || n < 0 {
						t.Fatalf("%s: parameter %q of %q, want %s=<integer>", field, p, item, params[i])
					}
					out[name][k] = n
				}
			}
		}
		return out
	}
	return parse(api.RateLimitPolicyHeader, "q", "w"), parse(api.RateLimitHeader, "r", "t")
}

// TestRateLimitHeaders: every limited response, 200 or 429, carries
// RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers-10)
// and they agree with the limiter: r is exactly the number of requests
// that are still served before the 429, t the seconds until the bucket is
// full (the burst at one request per 10 s), q and w the burst and the
// seconds it takes to refill.
func TestRateLimitHeaders(t *testing.T) {
	const burst, players = 4, 3
	e := newEnvOn(t, openStore(t, "sqlite"), func(c *api.Config) {
		c.RateLimit, c.RateBurst, c.PlayersPerHour = 0.1, burst, players
	})
	// The token's own bucket: full. r counts down; t grows by 10 s a request.
	served := 0
	var promised int
	for i := 0; ; i++ {
		r := e.do(req{method: "GET", path: "/v1/games"})
		policy, left := rateFields(t, r)
		if p := policy[api.PolicyRequests]; p["q"] != burst || p["w"] != 40 || len(policy) != 1 {
			t.Fatalf("request %d: RateLimit-Policy %v, want requests q=%d w=40 only", i+1, policy, burst)
		}
		l, ok := left[api.PolicyRequests]
		if !ok || len(left) != 1 {
			t.Fatalf("request %d: RateLimit %v, want the requests policy only", i+1, left)
		}
		if i == 0 {
			promised = l["r"]
		}
		if r.status == http.StatusTooManyRequests {
			checkTooMany(t, "over the burst", r)
			if l["r"] != 0 || l["t"] != 40 {
				t.Errorf("429: RateLimit r=%d t=%d, want r=0 t=40", l["r"], l["t"])
			}
			if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); ra > l["t"] {
				t.Errorf("Retry-After %d is later than the reset t=%d", ra, l["t"])
			}
			break
		}
		if r.status != http.StatusOK {
			t.Fatalf("request %d: status %d", i+1, r.status)
		}
		if want := burst - 1 - i; l["r"] != want || l["t"] != 10*(i+1) {
			t.Errorf("request %d: RateLimit r=%d t=%d, want r=%d t=%d", i+1, l["r"], l["t"], want, 10*(i+1))
		}
		served++
	}
	if served != promised+1 {
		t.Errorf("the first response promised %d more requests; %d more were served", promised, served-1)
	}

	// New players: their own policy beside the address's requests.
	// newEnvOn made one player; players-1 more are served.
	for i := 1; ; i++ {
		r := e.do(req{method: "POST", path: "/v1/players", token: "-", body: api.NewPlayer{Name: "Eve"}})
		policy, left := rateFields(t, r)
		if p := policy[api.PolicyPlayers]; p["q"] != players || p["w"] != 3600 {
			t.Fatalf("player %d: RateLimit-Policy %v, want players q=%d w=3600", i+1, policy, players)
		}
		if _, ok := policy[api.PolicyRequests]; !ok {
			t.Errorf("player %d: RateLimit-Policy %v without the requests policy", i+1, policy)
		}
		l := left[api.PolicyPlayers]
		if i == players {
			checkTooMany(t, "player over the hourly limit", r)
			if ra, _ := strconv.Atoi(r.header.Get("Retry-After")); l["r"] != 0 || ra != 1200 || l["t"] < ra {
				t.Errorf("429: RateLimit r=%d t=%d Retry-After %d, want r=0, Retry-After 1200 (3600/3) <= t", l["r"], l["t"], ra)
			}
			break
		}
		if r.status != http.StatusCreated || l["r"] != players-1-i || l["t"] != 1200*(i+1) {
			t.Fatalf("player %d: status %d RateLimit r=%d t=%d, want 201 r=%d t=%d",
				i+1, r.status, l["r"], l["t"], players-1-i, 1200*(i+1))
		}
	}
	// Routes that are never limited say nothing of limits, nor do the
	// probes without a limit of their own.
	for _, path := range []string{"/healthz", "/metrics"} {
		if r := e.do(req{method: "GET", path: path, token: "-"}); r.header.Get(api.RateLimitHeader) != "" ||
			r.header.Get(api.RateLimitPolicyHeader) != "" {
			t.Errorf("%s carries rate-limit fields: %v", path, r.header)
		}
	}
}

// TestProbeRateLimitAlone: the probes' limit holds with no request
// limit configured (a server behind a gateway that limits API requests):
// /healthz spends from the probes' bucket and is refused once it is
// empty, while API requests carry no RateLimit fields at all.
func TestProbeRateLimitAlone(t *testing.T) {
	e := newEnvOn(t, openStore(t, "sqlite"), func(c *api.Config) { c.RateLimit, c.ProbeRateLimit = 0, 0.1 })
	r := e.must(http.StatusOK, req{method: "GET", path: "/healthz", token: "-"})
	if _, left := rateFields(t, r); len(left) != 1 || left[api.PolicyProbes]["r"] != 0 {
		t.Errorf("/healthz: RateLimit %v, want probes r=0 only", left)
	}
	checkTooMany(t, "/readyz after /healthz spent the probes' bucket", e.do(req{method: "GET", path: "/readyz", token: "-"}))
	for range 3 {
		r := e.must(http.StatusOK, req{method: "GET", path: "/v1/games"})
		if got := r.header.Get("RateLimit"); got != "" {
			t.Errorf("an API request without a request limit carries RateLimit %q", got)
		}
	}
}

// TestPlayerCreationLimit: POST /v1/players is limited per address even
// without a request rate limit, since each new player brings a new token
// and its own request bucket; a limited request creates nothing, and other
// routes are not limited by it.
func TestPlayerCreationLimit(t *testing.T) {
	e := newEnvOn(t, openStore(t, "postgres"), func(c *api.Config) { c.PlayersPerHour = 2 })
	e.newPlayer("Bob") // newEnvOn made Ada: two of two
	before := tableCounts(t, e.store)
	r := e.do(req{method: "POST", path: "/v1/players", token: "-", body: api.NewPlayer{Name: "Eve"}})
	checkTooMany(t, "third player in an hour", r)
	if d := sameCounts(before, tableCounts(t, e.store)); d != "" {
		t.Errorf("a limited request changed the database: %s", d)
	}
	if _, left := rateFields(t, r); len(left) != 1 || left[api.PolicyPlayers]["r"] != 0 {
		t.Errorf("RateLimit %v, want players r=0 only (no request limit configured)", left)
	}
	// Other routes are not limited by it.
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games"})
}

// TestGamesInProgressBound: with Config.MaxGamesInProgress a player may
// have that many games in progress; one more is 409 too_many_games and
// creates nothing, even when requests race (one process counts them one
// at a time); ending a game frees a place; other players are not
// affected.
func TestGamesInProgressBound(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			const bound = 3
			store := openStore(t, backend)
			e := newEnvOn(t, store, func(c *api.Config) { c.MaxGamesInProgress, c.InProgress = bound, store })
			// Racing creations: exactly bound of them succeed.
			statuses := make(chan int, 2*bound)
			for range 2 * bound {
				go func() {
					statuses <- e.do(req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "klondike"}}).status
				}()
			}
			created := 0
			for range 2 * bound {
				switch s := <-statuses; s {
				case http.StatusCreated:
					created++
				case http.StatusConflict:
				default:
					t.Errorf("racing creation: status %d", s)
				}
			}
			if created != bound {
				t.Fatalf("%d games created by racing requests, want %d", created, bound)
			}
			before := tableCounts(t, e.store)
			r := e.do(req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "klondike"}})
			if p := r.problem(t); r.status != http.StatusConflict || p.Code != api.CodeTooManyGames ||
				!strings.Contains(p.Detail, "3 games in progress") {
				t.Fatalf("one game too many: %d %+v", r.status, p)
			}
			if d := sameCounts(before, tableCounts(t, e.store)); d != "" {
				t.Errorf("a refused creation changed the database: %s", d)
			}
			// Another player has places of their own.
			_, other := e.newPlayer("Eve")
			e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", token: other, body: api.CreateGameRequest{Variant: "klondike"}})
			// Ending a game frees a place.
			var list api.GameList
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games?status=in_progress"}).decode(t, &list)
			e.play(list.Games[0].ID, resign())
			e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "klondike"}})
		})
	}
}
