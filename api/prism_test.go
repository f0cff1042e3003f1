package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/docs/npmtest"
)

// prismDir holds the validating proxy's npm package (Stoplight Prism,
// pinned by its package-lock.json), relative to this package.
const prismDir = "../docs/prism"

// prismErrorType starts the type of every problem document Prism writes
// itself: a request it refused, a route the spec lacks, an answer that
// breaks the spec.
const prismErrorType = "https://stoplight.io/prism/errors#"

// TestPrismProxy puts a validator from outside the project in front of a
// real server: Stoplight Prism (@stoplight/prism-cli, pinned by
// docs/prism/package-lock.json), run as `prism proxy openapi.yaml <server>
// --errors`. Prism checks each request against openapi.yaml before it
// forwards it and each answer before it passes it on (status, media type,
// body, declared header fields); with --errors it answers a request that
// breaks the spec, or a route or method the spec lacks, itself (422, 404,
// 405) and replaces an answer that breaks it with its own 500, all as
// problem documents of its own type, and it reports lesser findings (a
// status code the operation does not list) in an sl-violations field. The
// test fails on any answer that did not come from the server (no
// X-Request-Id, or Prism's problem type), on any sl-violations field, on a
// status other than the one expected, on a field of exposedHeaders the
// answer's response in openapi.yaml does not declare, and on an operation
// of openapi.yaml it sent nothing to.
//
// The traffic, through Prism, on a server with rate limits on (so that
// answers carry the RateLimit fields) and on SQLite: a new player, the
// variants, random, winnable and layout games (creation with an
// Idempotency-Key, the list, a game with its ETag and a 304, legal moves,
// a move with If-Match, a hint, a layout game won, its events as a page
// and as NDJSON, a state, the audit, the analysis, its stream as SSE, as
// NDJSON and a 204 past its end), a solve, duels (random and winnable:
// created, read, joined with {} and with no body), daily deals (read
// before and after the first game, played), statistics and a
// leaderboard, the transparency log (key, checkpoint, tiles, a proof, a
// consistency proof), the probes, metrics, the spec as YAML and JSON and
// the documentation page with one of its files. Each GET is followed at
// once by the same request as HEAD, which must get the GET's status.
// Prism 5.16.0 cannot pass on a HEAD answer with a JSON Content-Type (it
// parses the body such an answer lacks, headUnread): those HEADs, once
// Prism's log shows that failure, are sent to the server itself through
// the validating transport (kin-openapi) instead. Answers of refused
// requests that keep to the spec (so that Prism forwards them) must
// validate too: an unknown game (404), an unknown token (401), an unknown
// variant (422), a stale If-Match (412), a move on a game that has ended
// (409), a second duel join and a second daily game (409 with Location).
// One request that breaks the spec (a number for a variant) must be
// refused by Prism itself, which shows that it validates.
func TestPrismProxy(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	e := newEnv(t, "sqlite", func(c *api.Config) {
		c.RateLimit, c.RateBurst, c.PlayersPerHour, c.ProbeRateLimit = 1000, 2000, 1000, 1000
	})
	p := startPrism(t, e)
	_, bob := e.newPlayer("Bob")

	// Players and variants.
	p.do(http.StatusCreated, preq{method: "POST", path: "/v1/players", token: "-", body: api.NewPlayer{Name: "Cy"}})
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/variants", token: "-"})

	// Games: random, winnable, and a layout one nearly won.
	var g api.Game
	p.do(http.StatusCreated, preq{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "klondike"},
		header: map[string]string{api.IdempotencyKeyHeader: "prism-1"}}).decode(t, &g)
	relaxed := rulesOf(t, "relaxed")
	e.waitReady(relaxed, 2)
	p.do(http.StatusCreated, preq{method: "POST", path: "/v1/games", body: map[string]any{"variant": "relaxed", "winnable": true}})
	var w api.Game
	p.do(http.StatusCreated, preq{method: "POST", path: "/v1/games",
		body: api.CreateGameRequest{Variant: "klondike", Layout: runs()}}).decode(t, &w)
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/games"})
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/games?status=in_progress&limit=2"})
	gamePath := "/v1/games/" + g.ID
	r := p.do(http.StatusOK, preq{method: "GET", path: gamePath})
	p.do(http.StatusNotModified, preq{method: "GET", path: gamePath, header: map[string]string{"If-None-Match": r.header.Get("ETag")}})
	p.do(http.StatusOK, preq{method: "GET", path: gamePath + "/legal-moves"})
	p.do(http.StatusOK, preq{method: "POST", path: gamePath + "/moves", body: draw(),
		header: map[string]string{"If-Match": r.header.Get("ETag"), api.IdempotencyKeyHeader: "prism-2"}})
	p.do(http.StatusPreconditionFailed, preq{method: "POST", path: gamePath + "/moves", body: draw(),
		header: map[string]string{"If-Match": `"1"`}})

	// The layout game: a hint, then won; its log, audit and analysis.
	wPath := "/v1/games/" + w.ID
	p.do(http.StatusOK, preq{method: "POST", path: wPath + "/hints", body: api.HintRequest{}})
	line := winningLine()
	p.do(http.StatusOK, preq{method: "POST", path: wPath + "/moves", body: fromDomain(line[0])})
	for _, m := range line[1:] {
		e.play(w.ID, fromDomain(m))
	}
	p.do(http.StatusConflict, preq{method: "POST", path: wPath + "/moves", body: draw()})
	p.do(http.StatusOK, preq{method: "GET", path: wPath + "/events?limit=5"})
	p.do(http.StatusOK, preq{method: "GET", path: wPath + "/events", header: map[string]string{"Accept": "application/x-ndjson"}})
	p.do(http.StatusOK, preq{method: "GET", path: wPath + "/states/2"})
	p.do(http.StatusOK, preq{method: "GET", path: wPath + "/audit"})
	p.do(http.StatusOK, preq{method: "GET", path: wPath + "/analysis"})
	p.do(http.StatusOK, preq{method: "GET", path: wPath + "/stream"})
	p.do(http.StatusOK, preq{method: "GET", path: wPath + "/stream", header: map[string]string{"Accept": "application/x-ndjson"}})
	p.do(http.StatusNoContent, preq{method: "GET", path: wPath + "/stream",
		header: map[string]string{"Last-Event-ID": strconv.Itoa(e.version(w.ID))}})
	p.do(http.StatusOK, preq{method: "POST", path: "/v1/solve", body: map[string]any{"variant": "klondike", "layout": runs()}})

	// Duels: a random one joined with {} and with no body, a winnable one.
	var duel api.Duel
	p.do(http.StatusCreated, preq{method: "POST", path: "/v1/duels", body: map[string]any{"winnable": false}}).decode(t, &duel)
	duelPath := "/v1/duels/" + duel.ID
	p.do(http.StatusOK, preq{method: "GET", path: duelPath, token: "-"})
	p.do(http.StatusCreated, preq{method: "POST", path: duelPath + "/games", body: map[string]any{}})
	p.do(http.StatusConflict, preq{method: "POST", path: duelPath + "/games", body: map[string]any{}})
	p.do(http.StatusCreated, preq{method: "POST", path: duelPath + "/games", token: bob})
	p.do(http.StatusOK, preq{method: "GET", path: duelPath, token: "-"})
	e.waitReady(relaxed, 1)
	p.do(http.StatusCreated, preq{method: "POST", path: "/v1/duels", body: map[string]any{"variant": "relaxed"}})

	// Daily deals: before the day's first game, played, read again.
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/daily/relaxed", token: "-"})
	e.waitReady(relaxed, 1)
	p.do(http.StatusCreated, preq{method: "POST", path: "/v1/daily/relaxed/games", body: map[string]any{}})
	p.do(http.StatusConflict, preq{method: "POST", path: "/v1/daily/relaxed/games"})
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/daily/relaxed?date=" + start.Format(time.DateOnly), token: "-"})

	// Statistics and boards.
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/players/me/stats"})
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/players/me/stats?variant=klondike&winnable=false"})
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/leaderboards/klondike", token: "-"})

	// The transparency log, once the won game has its leaf.
	e.sequence()
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/log/key", token: "-"})
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/log/checkpoint", token: "-"})
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/log/tile/8/0/000.p/1", token: "-"})
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/log/tile/8/data/000.p/1", token: "-"})
	p.do(http.StatusNotFound, preq{method: "GET", path: "/v1/log/tile/8/0/000", token: "-"})
	p.do(http.StatusNotFound, preq{method: "GET", path: "/v1/log/tile/8/0/x001/000/000", token: "-"})
	p.do(http.StatusNotFound, preq{method: "GET", path: "/v1/log/tile/8/0/x001/x000/000/000", token: "-"})
	// The C2SP tlog-tiles layout: hash tiles and entry bundles, each
	// route by its number of index segments.
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/log/tile/0/000.p/1", token: "-"})
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/log/tile/entries/000.p/1", token: "-"})
	p.do(http.StatusNotFound, preq{method: "GET", path: "/v1/log/tile/0/000", token: "-"})
	p.do(http.StatusNotFound, preq{method: "GET", path: "/v1/log/tile/0/x001/x000/000", token: "-"})
	p.do(http.StatusNotFound, preq{method: "GET", path: "/v1/log/tile/0/x001/x000/x000/000", token: "-"})
	p.do(http.StatusNotFound, preq{method: "GET", path: "/v1/log/tile/entries/000", token: "-"})
	p.do(http.StatusNotFound, preq{method: "GET", path: "/v1/log/tile/entries/x001/000.p/1", token: "-"})
	p.do(http.StatusNotFound, preq{method: "GET", path: "/v1/log/tile/entries/x001/x000/000", token: "-"})
	p.do(http.StatusNotFound, preq{method: "GET", path: "/v1/log/tile/entries/x001/x000/x000/000", token: "-"})
	p.do(http.StatusOK, preq{method: "GET", path: wPath + "/proof", token: "-"})
	p.do(http.StatusOK, preq{method: "GET", path: "/v1/log/consistency?old=1&new=1", token: "-"})

	// Operations and the documentation page.
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/openapi.yaml", "/openapi.json", "/docs", "/docs/index.css"} {
		p.do(http.StatusOK, preq{method: "GET", path: path, token: "-"})
	}

	// Requests that keep to the spec and that the server refuses.
	p.do(http.StatusNotFound, preq{method: "GET", path: "/v1/games/nope"})
	p.do(http.StatusUnauthorized, preq{method: "GET", path: "/v1/games", token: "not-a-token"})
	p.do(http.StatusUnprocessableEntity, preq{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "nope"}})

	// A request that breaks the spec: Prism answers it, the server never
	// sees it.
	c := p.send(preq{method: "POST", path: "/v1/games", body: map[string]any{"variant": 7}, token: e.token})
	if c.status != http.StatusUnprocessableEntity || c.header.Get(api.RequestIDHeader) != "" ||
		!strings.HasPrefix(c.problemType(), prismErrorType) {
		t.Errorf("a variant that is a number: %d %s %s, want Prism's own 422", c.status, c.header.Get(api.RequestIDHeader), truncate(c.body))
	}

	p.checkCoverage()
	t.Logf("%d requests through Prism in %v; %d HEAD answers with a JSON Content-Type, which Prism cannot read, "+
		"checked by the validating transport", p.sent, time.Since(t0).Round(time.Millisecond), p.unread)
}

// prism is a running `prism proxy` and the requests sent through it.
type prism struct {
	t      *testing.T
	e      *env
	url    string
	token  string        // the env's default player's
	out    *lockedBuffer // Prism's log
	router routers.Router
	doc    *openapi3.T
	hit    map[string]bool // "METHOD /template" of the operations sent to
	sent   int
	unread int // HEAD answers Prism could not read (headUnread)
}

// preq is a request sent through Prism.
type preq struct {
	method, path string
	body         any    // JSON unless nil
	token        string // "" = the env's default player (do), "-" = none
	header       map[string]string
}

// startPrism installs Prism from its lockfile and runs it as a proxy to
// e's server with --errors on a free port of the loopback; it is stopped
// when the test ends.
func startPrism(t *testing.T, e *env) *prism {
	t.Helper()
	npmtest.Install(t, prismDir)
	doc, err := openapi3.NewLoader().LoadFromData(solitaire.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := filepath.Abs("../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	out := &lockedBuffer{}
	cmd := exec.Command(filepath.Join(prismDir, "node_modules", ".bin", "prism"), "proxy", spec, e.srv.URL,
		"--errors", "--verboseLevel", "warn", "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--cors=false")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start prism: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("Prism's log:\n%s", out.String())
		}
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for deadline := time.Now().Add(2 * time.Minute); ; {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("prism exited (%v):\n%s", err, out.String())
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("prism is not listening on %s after 2 minutes:\n%s", addr, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return &prism{t: t, e: e, url: "http://" + addr, token: e.token, out: out, router: router, doc: doc, hit: map[string]bool{}}
}

// send sends q through Prism and reads the answer whole.
func (p *prism) send(q preq) resp {
	t := p.t
	t.Helper()
	var body []byte
	if q.body != nil {
		b, err := json.Marshal(q.body)
		if err != nil {
			t.Fatal(err)
		}
		body = b
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	hr, err := newRequest(ctx, q.method, p.url+q.path, body, q.token, q.header)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatalf("%s %s through Prism: %v", q.method, q.path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	p.sent++
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// do sends q (with the default player's token unless q says otherwise)
// and fails the test on any violation Prism reports, on an answer that is
// not the server's, on a status other than want, and on a field of
// exposedHeaders that openapi.yaml does not declare on the answer.
func (p *prism) do(want int, q preq) resp {
	t := p.t
	t.Helper()
	if q.token == "" {
		q.token = p.token
	}
	r := p.send(q)
	route := p.route(q)
	if route != nil {
		p.hit[route.Method+" "+route.Path] = true
	}
	if p.headUnread(q, r) {
		p.unread++
		p.e.must(want, req{method: q.method, path: q.path, token: q.token, header: q.header})
		return r
	}
	where := fmt.Sprintf("%s %s -> %d", q.method, q.path, r.status)
	if v := r.header.Get("sl-violations"); v != "" {
		t.Errorf("%s: Prism reports violations: %s", where, v)
	}
	if typ := r.problemType(); strings.HasPrefix(typ, prismErrorType) {
		t.Errorf("%s: Prism answered itself (%s): %s", where, strings.TrimPrefix(typ, prismErrorType), truncate(r.body))
	} else if r.header.Get(api.RequestIDHeader) == "" {
		t.Errorf("%s: not the server's answer (no %s): %s", where, api.RequestIDHeader, truncate(r.body))
	}
	if r.status != want {
		t.Errorf("%s: want %d: %s", where, want, truncate(r.body))
	}
	if route != nil {
		checkDeclaredHeaders(t, where, route, r.status, r.header)
	}
	if q.method == http.MethodGet {
		// HEAD, at once, with the same request, for the same answer.
		q.method = http.MethodHead
		p.do(r.status, q)
	}
	return r
}

// route is q's operation in openapi.yaml, nil for none.
func (p *prism) route(q preq) *routers.Route {
	hr, err := http.NewRequest(q.method, "http://localhost"+q.path, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	route, _, err := p.router.FindRoute(hr)
	if err != nil {
		return nil
	}
	return route
}

// headUnread reports whether r is Prism's 500 for a HEAD whose answer it
// could not read: Prism 5.16.0's proxy parses the body of every answer
// with a JSON Content-Type, and a HEAD answer has none ("invalid json
// response body" in its log), so it neither passes such an answer on nor
// validates it. Such a HEAD is sent to the server itself through the
// validating transport (kin-openapi) instead. An answer with
// sl-violations is a violation Prism found, never this.
func (p *prism) headUnread(q preq, r resp) bool {
	if q.method != http.MethodHead || r.status != http.StatusInternalServerError ||
		r.header.Get(api.RequestIDHeader) != "" || r.header.Get("sl-violations") != "" {
		return false
	}
	logged := "invalid json response body at " + p.e.srv.URL + q.path
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(p.out.String(), logged) {
			return true
		}
	}
	return false
}

// checkCoverage fails the test for each operation of openapi.yaml that no
// request was sent to.
func (p *prism) checkCoverage() {
	var missed []string
	for _, path := range p.doc.Paths.InMatchingOrder() {
		for method := range p.doc.Paths.Value(path).Operations() {
			if !p.hit[method+" "+path] {
				missed = append(missed, method+" "+path)
			}
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		p.t.Errorf("operations of openapi.yaml sent nothing through Prism: %s", strings.Join(missed, ", "))
	}
}

// problemType is the type of a problem document r carries, "" for none.
func (r resp) problemType() string {
	var p struct {
		Type string `json:"type"`
	}
	if !slices.Contains([]string{"application/problem+json", "application/json"}, strings.Split(r.header.Get("Content-Type"), ";")[0]) ||
		json.Unmarshal(r.body, &p) != nil {
		return ""
	}
	return p.Type
}
