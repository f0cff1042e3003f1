package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/gin-gonic/gin"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"

	"github.com/openpatience/solitaire/domain/supply"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.ReleaseMode)
	// /docs and its files; /openapi.yaml, YAML text.
	for _, mt := range []string{"text/html", "text/css", "application/javascript", "image/png", "application/yaml"} {
		openapi3filter.RegisterBodyDecoder(mt, openapi3filter.PlainBodyDecoder)
	}
	os.Exit(m.Run())
}

// ---- the spec, made strict for validation ----

var (
	specOnce   sync.Once
	specRouter routers.Router
	specErr    error
)

// strictSpec loads openapi.yaml for validation and forbids properties it
// does not list (additionalProperties: false on every object schema with
// properties), so a field the server sends but the spec lacks is caught.
// The published spec stays open for evolution; only the tests are strict.
func strictSpec(t testing.TB) routers.Router {
	t.Helper()
	specOnce.Do(func() {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(solitaire.OpenAPIYAML)
		if err != nil {
			specErr = err
			return
		}
		for _, s := range doc.Components.Schemas {
			if s.Value != nil && len(s.Value.Properties) > 0 {
				no := false
				s.Value.AdditionalProperties = openapi3.AdditionalProperties{Has: &no}
			}
		}
		doc.Servers = nil
		if err := doc.Validate(context.Background()); err != nil {
			specErr = err
			return
		}
		specRouter, specErr = legacy.NewRouter(doc)
	})
	if specErr != nil {
		t.Fatalf("openapi.yaml: %v", specErr)
	}
	return specRouter
}

// ---- the validating transport ----

type ctxKey int

const (
	keySpecInvalid ctxKey = iota // the request is meant to break the spec
)

// specInvalid marks a request that deliberately breaks the spec (bad input
// tests): its request validation is not reported. Its response still is.
func specInvalid(ctx context.Context) context.Context {
	return context.WithValue(ctx, keySpecInvalid, true)
}

// validating is the one test transport: it checks every request and every
// response against openapi.yaml (kin-openapi openapi3filter), and the
// conventions every response keeps (request id; problem+json for errors,
// never a 500). Each response body is also recorded for hidden-information
// checks.
type validating struct {
	t      testing.TB
	base   http.RoundTripper
	mu     sync.Mutex
	bodies [][]byte
}

func (v *validating) RoundTrip(req *http.Request) (*http.Response, error) {
	t := v.t
	var reqBody []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body.Close()
		reqBody = b
		req.Body = io.NopCloser(bytes.NewReader(b))
	}
	router := strictSpec(t)
	route, params, routeErr := router.FindRoute(req)
	if routeErr == nil && expand(route.Path, params) != req.URL.Path {
		// kin-openapi forgives a trailing slash; the server does not.
		routeErr = fmt.Errorf("%s is not %s", req.URL.Path, route.Path)
	}
	var in *openapi3filter.RequestValidationInput
	if routeErr == nil {
		vr := req.Clone(req.Context())
		vr.Body = io.NopCloser(bytes.NewReader(reqBody))
		in = &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
				IncludeResponseStatus: true, MultiError: true}}
		// A request that breaks the spec on purpose is not validated at
		// all: its result would not be reported, and a body nested
		// thousands deep takes kin-openapi minutes against a oneOf.
		if req.Context().Value(keySpecInvalid) == nil {
			if err := openapi3filter.ValidateRequest(req.Context(), in); err != nil {
				t.Errorf("%s %s: request breaks openapi.yaml: %v", req.Method, req.URL.Path, err)
			}
		}
	}
	resp, err := v.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	v.mu.Lock()
	v.bodies = append(v.bodies, body)
	v.mu.Unlock()

	where := fmt.Sprintf("%s %s -> %d", req.Method, req.URL.RequestURI(), resp.StatusCode)
	if resp.Header.Get(api.RequestIDHeader) == "" {
		t.Errorf("%s: no %s", where, api.RequestIDHeader)
	}
	if resp.StatusCode >= 500 && resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("%s: server error: %s", where, body)
	}
	switch {
	case resp.StatusCode >= 400 && req.Method == http.MethodHead:
		// The problem's fields without its body.
		if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
			t.Errorf("%s: Content-Type %q, want application/problem+json", where, ct)
		}
	case resp.StatusCode >= 400:
		checkProblem(t, where, resp, body)
	}
	if routeErr != nil {
		if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("%s: route not in openapi.yaml (%v) but answered", where, routeErr)
		}
		return resp, nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if req.Method == http.MethodHead {
		// kin-openapi validates no HEAD answer; shown as a GET's, it checks
		// the status and header fields against the HEAD operation's
		// responses, which have no content.
		asGet := *in
		asGet.Request = req.Clone(req.Context())
		asGet.Request.Method = http.MethodGet
		in = &asGet
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
		Header: resp.Header, Body: io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true,
			ExcludeResponseBody: mt == "application/x-ndjson"}}
	if err := openapi3filter.ValidateResponse(req.Context(), out); err != nil {
		t.Errorf("%s: response breaks openapi.yaml: %v\n%s", where, err, truncate(body))
	}
	checkDeclaredHeaders(t, where, route, resp.StatusCode, resp.Header)
	if mt == "application/x-ndjson" {
		validateNDJSON(t, where, route, resp.StatusCode, body)
	}
	return resp, nil
}

// exposedHeaders are the response fields the API exposes to browser
// frontends (api's corsExposeHeaders): openapi.yaml declares each on every
// response that carries it.
var exposedHeaders = []string{"ETag", "Location", "Retry-After", api.RequestIDHeader, "Idempotent-Replayed",
	"WWW-Authenticate", "Allow", api.RateLimitPolicyHeader, api.RateLimitHeader}

// checkDeclaredHeaders fails t for each field of exposedHeaders in header
// that the route's response for status does not declare.
func checkDeclaredHeaders(t testing.TB, where string, route *routers.Route, status int, header http.Header) {
	ref := route.Operation.Responses.Status(status)
	if ref == nil {
		ref = route.Operation.Responses.Default()
	}
	if ref == nil || ref.Value == nil {
		return // an undeclared status, which response validation reports
	}
	for _, h := range exposedHeaders {
		if header.Get(h) == "" {
			continue
		}
		declared := false
		for name := range ref.Value.Headers {
			declared = declared || strings.EqualFold(name, h)
		}
		if !declared {
			t.Errorf("%s: %s sent but not declared in openapi.yaml", where, h)
		}
	}
}

// expand fills a path template with its parameters.
func expand(tmpl string, params map[string]string) string {
	for k, v := range params {
		tmpl = strings.ReplaceAll(tmpl, "{"+k+"}", v)
	}
	return tmpl
}

// validateNDJSON checks each line of a stream against the item schema of
// the route's application/x-ndjson response (ndjsonItem).
func validateNDJSON(t testing.TB, where string, route *routers.Route, status int, body []byte) {
	r := route.Operation.Responses.Status(status)
	if r == nil || r.Value.Content["application/x-ndjson"] == nil {
		t.Errorf("%s: no application/x-ndjson response in openapi.yaml", where)
		return
	}
	schema, err := ndjsonItem(route.Spec, r.Value.Content["application/x-ndjson"])
	if err != nil {
		t.Errorf("%s: %v", where, err)
		return
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			t.Errorf("%s: line %d is not JSON: %v", where, i+1, err)
			continue
		}
		if err := schema.VisitJSON(v); err != nil {
			t.Errorf("%s: line %d breaks openapi.yaml: %v", where, i+1, err)
		}
	}
}

// ndjsonItem is the schema of one line of an application/x-ndjson media
// type: the component its x-itemSchema refers to (the body itself is a
// string, text of many lines).
func ndjsonItem(doc *openapi3.T, mt *openapi3.MediaType) (*openapi3.Schema, error) {
	ext, _ := mt.Extensions["x-itemSchema"].(map[string]any)
	ref, _ := ext["$ref"].(string)
	name, ok := strings.CutPrefix(ref, "#/components/schemas/")
	if c := doc.Components.Schemas[name]; ok && c != nil && c.Value != nil {
		return c.Value, nil
	}
	return nil, fmt.Errorf("openapi.yaml: the application/x-ndjson item schema %q is not a component", ref)
}

// checkProblem checks an error response is a problem document (RFC 9457)
// that says no more than it should.
func checkProblem(t testing.TB, where string, resp *http.Response, body []byte) {
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s: Content-Type %q, want application/problem+json", where, ct)
		return
	}
	var p api.Problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Errorf("%s: problem is not JSON: %v", where, err)
		return
	}
	// A replayed problem keeps the request id of the request it answered.
	replayed := resp.Header.Get("Idempotent-Replayed") == "true"
	if p.Status != resp.StatusCode || p.Code == "" || p.Title == "" || p.Detail == "" ||
		!strings.HasPrefix(p.Type, "tag:") || (p.RequestID != resp.Header.Get(api.RequestIDHeader) && !replayed) {
		t.Errorf("%s: incomplete problem %s", where, body)
	}
	for _, leak := range []string{"persistence:", "sql", "gorm", "pq:", "SQLSTATE", "goroutine", ".go:", "domain:"} {
		if strings.Contains(p.Detail, leak) {
			t.Errorf("%s: problem detail leaks internals (%q): %s", where, leak, p.Detail)
		}
	}
	if resp.StatusCode == http.StatusUnauthorized && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("%s: 401 without WWW-Authenticate: Bearer", where)
	}
	if resp.StatusCode == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "" {
		t.Errorf("%s: 405 without Allow", where)
	}
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// ---- the clock ----

// clock is the server's clock in tests: fixed until advanced.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// ---- the environment: a real store, the real engine, a real server ----

// env is one server on one real database, reached over HTTP through the
// validating transport.
type env struct {
	t      *testing.T
	store  *persistence.Store
	games  *app.Games
	clock  *clock
	srv    *httptest.Server
	tr     *validating
	client *http.Client
	token  string // the default player's token
	player string // the default player's id

	tlog *persistence.Log // the transparency log, sequenced by the test (log_test.go)

	supply *supply.Supply // the Dealer of proven winnable deals (R7.2)

	fromMu sync.Mutex
	from   map[byte]*http.Client // clients sending from 127.0.0.n (req.from), by n
}

// clientFrom is a client whose connections come from 127.0.0.n (the test
// server listens on 127.0.0.1, and all of 127/8 is loopback), through the
// validating transport: a client address of its own.
func (e *env) clientFrom(n byte) *http.Client {
	e.fromMu.Lock()
	defer e.fromMu.Unlock()
	if c := e.from[n]; c != nil {
		return c
	}
	base := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, n)}}).DialContext}
	e.t.Cleanup(base.CloseIdleConnections)
	c := &http.Client{Transport: &validating{t: e.t, base: base}}
	if e.from == nil {
		e.from = map[byte]*http.Client{}
	}
	e.from[n] = c
	return c
}

// testSolverBudget is the servers' SolverMaxBudget in tests: long enough
// that the solver's node budget (solver.DefaultNodes) ends every search,
// so that verdicts do not depend on the machine's speed or load.
const testSolverBudget = 10 * time.Minute

// backends are the databases every HTTP test runs on.
var backends = []string{"sqlite", "postgres"}

// forEachStore runs f as a subtest on each real database, the two in
// parallel; opts change the servers' configuration (newEnv).
func forEachStore(t *testing.T, f func(t *testing.T, e *env), opts ...func(*api.Config)) {
	for _, b := range backends {
		t.Run(b, func(t *testing.T) {
			t.Parallel()
			f(t, newEnv(t, b, opts...))
		})
	}
}

func openStore(t *testing.T, backend string) *persistence.Store {
	cfg := persistence.Config{SnapshotEvery: 5}
	switch backend {
	case "sqlite":
		cfg.SQLitePath = filepath.Join(t.TempDir(), "solitaire.db")
	case "postgres":
		cfg.DatabaseURL = pgtest.DSN(t)
	default:
		t.Fatalf("unknown backend %q", backend)
	}
	s, err := persistence.Open(context.Background(), cfg)
	if err != nil {
		t.Fatalf("open %s store: %v", backend, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// testLog sends the server's warnings and errors to the test's log.
type testLog struct{ t testing.TB }

func (w testLog) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// start is the fixed start of the test clock.
var start = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// newEnv starts a server on a new store of backend; opts change its
// configuration before it starts.
func newEnv(t *testing.T, backend string, opts ...func(*api.Config)) *env {
	return newEnvWith(t, backend, supply.Config{}, opts...)
}

// newEnvWith is newEnv with a supply of proven deals (the games' Dealer,
// R7.2) configured by sc; it proves only the rules asked for.
func newEnvWith(t *testing.T, backend string, sc supply.Config, opts ...func(*api.Config)) *env {
	store := openStore(t, backend)
	clk := &clock{t: start}
	dealer := supply.New(sc)
	t.Cleanup(dealer.Close)
	games := &app.Games{Store: store, Now: clk.Now, Random: rand.Reader, Retries: 3, Dealer: dealer}
	tlog := openTestLog(t, store, clk.Now)
	cfg := api.Config{Games: games, Players: store, Idempotency: store,
		Ready: store.Ping, Spec: solitaire.OpenAPIYAML, Competitions: app.NewCompetitions(games, store), Stats: store,
		Log:             tlog,
		Logger:          slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		SolverMaxBudget: testSolverBudget}
	for _, o := range opts {
		o(&cfg)
	}
	h, err := api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := &validating{t: t, base: http.DefaultTransport}
	e := &env{t: t, store: store, games: games, clock: clk, srv: srv, tr: tr, client: &http.Client{Transport: tr}, tlog: tlog,
		supply: dealer}
	e.player, e.token = e.newPlayer("Ada")
	return e
}

// ---- requests ----

// req is one request of a test.
type req struct {
	method, path string
	body         any    // marshalled as JSON unless []byte or string (sent as is)
	token        string // "" = the env's default player; "-" = no Authorization
	header       map[string]string
	invalid      bool // the request breaks the spec on purpose
	from         byte // sent from 127.0.0.from (clientFrom); 0 = the env's client
}

// resp is a response read whole.
type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %T: %v\n%s", v, err, truncate(r.body))
	}
}

func (r resp) problem(t testing.TB) api.Problem {
	t.Helper()
	var p api.Problem
	r.decode(t, &p)
	return p
}

func (e *env) do(q req) resp {
	e.t.Helper()
	var body io.Reader
	switch b := q.body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	case string:
		body = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		body = bytes.NewReader(j)
	}
	ctx := context.Background()
	if q.invalid {
		ctx = specInvalid(ctx)
	}
	hr, err := http.NewRequestWithContext(ctx, q.method, e.srv.URL+q.path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	switch q.token {
	case "":
		hr.Header.Set("Authorization", "Bearer "+e.token)
	case "-":
	default:
		hr.Header.Set("Authorization", "Bearer "+q.token)
	}
	for k, v := range q.header {
		if v == "" {
			hr.Header.Del(k)
			continue
		}
		hr.Header.Set(k, v)
	}
	client := e.client
	if q.from != 0 {
		client = e.clientFrom(q.from)
	}
	res, err := client.Do(hr)
	if err != nil {
		e.t.Fatalf("%s %s: %v", q.method, q.path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// newRequest is a request of the tests: body, if not nil, as JSON; token,
// unless "" or "-", as a bearer token; then the fields of header, where ""
// removes one.
func newRequest(ctx context.Context, method, url string, body []byte, token string, header map[string]string) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, err
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if token != "-" && token != "" {
		hr.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		if v == "" {
			hr.Header.Del(k)
			continue
		}
		hr.Header.Set(k, v)
	}
	return hr, nil
}

// must does q and fails the test unless the status is want.
func (e *env) must(want int, q req) resp {
	e.t.Helper()
	r := e.do(q)
	if r.status != want {
		e.t.Fatalf("%s %s: status %d, want %d\n%s", q.method, q.path, r.status, want, truncate(r.body))
	}
	return r
}

func (e *env) newPlayer(name string) (id, token string) {
	e.t.Helper()
	var p api.PlayerCreated
	e.must(http.StatusCreated, req{method: "POST", path: "/v1/players", body: api.NewPlayer{Name: name}, token: "-"}).decode(e.t, &p)
	return p.ID, p.Token
}

// createGame creates a game from a request body and returns it.
func (e *env) createGame(body any) api.Game {
	e.t.Helper()
	var g api.Game
	e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", body: body}).decode(e.t, &g)
	return g
}

func (e *env) getGame(id string) api.Game {
	e.t.Helper()
	var g api.Game
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id}).decode(e.t, &g)
	return g
}

// play posts a move and returns the result; it fails unless accepted.
func (e *env) play(id string, m api.MoveRequest) api.MoveResult {
	e.t.Helper()
	var r api.MoveResult
	e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + id + "/moves", body: m}).decode(e.t, &r)
	return r
}

func (e *env) legal(id string) api.LegalMoves {
	e.t.Helper()
	var l api.LegalMoves
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id + "/legal-moves"}).decode(e.t, &l)
	return l
}

// allEvents reads a game's whole log as JSON pages.
func (e *env) allEvents(id string, limit int) []api.Event {
	e.t.Helper()
	var out []api.Event
	after := 0
	for {
		var p api.EventPage
		e.must(http.StatusOK, req{method: "GET", path: fmt.Sprintf("/v1/games/%s/events?after=%d&limit=%d", id, after, limit)}).decode(e.t, &p)
		out = append(out, p.Events...)
		if p.NextAfter == nil {
			return out
		}
		after = *p.NextAfter
	}
}

// ---- moves and layouts ----

func str(s string) *string { return &s }
func num(n int) *int       { return &n }

func draw() api.MoveRequest   { return api.MoveRequest{Type: "draw"} }
func undo() api.MoveRequest   { return api.MoveRequest{Type: "undo"} }
func resign() api.MoveRequest { return api.MoveRequest{Type: "resign"} }
func flip(pile string) api.MoveRequest {
	return api.MoveRequest{Type: "flip", Pile: &pile}
}
func move(from, to string, count int) api.MoveRequest {
	m := api.MoveRequest{Type: "move", From: &from, To: &to}
	if count > 0 {
		m.Count = &count
	}
	return m
}

// fromDomain renders a domain move as a request.
func fromDomain(m domain.Move) api.MoveRequest {
	r := api.MoveRequest{Type: string(m.Type)}
	if !m.From.IsZero() {
		r.From = str(m.From.String())
	}
	if !m.To.IsZero() {
		r.To = str(m.To.String())
	}
	if !m.Pile.IsZero() {
		r.Pile = str(m.Pile.String())
	}
	if m.Count != 0 {
		r.Count = num(m.Count)
	}
	return r
}

// runs is a one-deck layout that is all but won: four face-up runs from
// king to ace, three empty piles, an empty stock. Moving the tops of
// piles 0 and 1 (and 2 and 3) to the foundations in turn wins.
func runs() *api.Layout {
	pile := func(s string) api.LayoutPile {
		var up []string
		for i := 0; i < len(s); i += 2 {
			up = append(up, s[i:i+2])
		}
		return api.LayoutPile{FaceDown: []string{}, FaceUp: up}
	}
	empty := api.LayoutPile{FaceDown: []string{}, FaceUp: []string{}}
	return &api.Layout{Tableau: []api.LayoutPile{
		pile("KSQHJSTH9S8H7S6H5S4H3S2HAS"),
		pile("KHQSJHTS9H8S7H6S5H4S3H2SAH"),
		pile("KCQDJCTD9C8D7C6D5C4D3C2DAC"),
		pile("KDQCJDTC9D8C7D6C5D4C3D2CAD"),
		empty, empty, empty,
	}, Stock: []string{}}
}

// winningLine wins the runs layout one card at a time.
func winningLine() []domain.Move {
	var out []domain.Move
	for _, pair := range [][2]int{{0, 1}, {2, 3}} {
		for i := 0; i < 13; i++ {
			for _, p := range pair {
				out = append(out, domain.Move{Type: domain.MoveCards, From: domain.TableauRef(p),
					To: domain.FoundationRef(domain.AnyFoundation), Count: 1})
			}
		}
	}
	return out
}

// hiddenCodes are the codes of the cards a client must not see in state s
// (R6.4): the face-down tableau cards and the stock.
func hiddenCodes(s *domain.State) []string {
	var out []string
	for _, p := range s.Tableau {
		for _, c := range p.Cards[:p.Down] {
			out = append(out, c.String())
		}
	}
	for _, c := range s.Stock {
		out = append(out, c.String())
	}
	return out
}

// load is the server-side state of a game, read from the store.
func (e *env) load(id string) *domain.State {
	e.t.Helper()
	_, s, err := e.store.Load(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// version is the number of events in a game's log, read from the store.
func (e *env) version(id string) int {
	e.t.Helper()
	recs, err := e.store.Events(context.Background(), id, 0, 10000)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(recs)
}

func quoted(n int) string { return `"` + strconv.Itoa(n) + `"` }
