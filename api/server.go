package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/openpatience/solitaire/domain/app"
)

// DefaultMaxBodyBytes is the default limit of a request body: 64 KiB, far
// above the largest layout (three decks) or move.
const DefaultMaxBodyBytes = 64 << 10

// Config is what New needs to serve the API.
type Config struct {
	// Games is the application service (required). Its Now is the server
	// clock for every response.
	Games *app.Games
	// Players keeps players and their token hashes (required).
	Players app.PlayerStore
	// Idempotency keeps the responses of requests sent with an
	// Idempotency-Key (required).
	Idempotency IdempotencyStore
	// Ready reports whether the server can serve (the database answers);
	// GET /readyz calls it. nil means always ready.
	Ready func(context.Context) error
	// Spec is openapi.yaml, served byte for byte at /openapi.yaml and as
	// JSON at /openapi.json (required).
	Spec []byte
	// Metrics is where the HTTP metrics are registered and what /metrics
	// serves. nil means a new registry of the API's metrics only.
	Metrics *prometheus.Registry
	// Logger receives access logs and errors; nil discards them.
	Logger *slog.Logger
	// MaxBodyBytes limits request bodies (default DefaultMaxBodyBytes);
	// larger ones get 413.
	MaxBodyBytes int64
	// Random is the source of tokens, ids and request ids (default
	// crypto/rand.Reader).
	Random io.Reader
	// Feed wakes live streams (GET /v1/games/{id}/stream) when a game's
	// log grows, whichever server process appended to it (the persistence
	// Store: LISTEN/NOTIFY on PostgreSQL, in-process on SQLite). nil means
	// streams read the log every second instead.
	Feed EventFeed
	// Heartbeat is the interval of a live stream's heartbeat events
	// (default DefaultHeartbeat, 15 s); a stream also reads the log at
	// each, in case a wake-up was lost.
	Heartbeat time.Duration
	// MaxStreamsPerPlayer bounds the live streams one player may have open
	// at once (default DefaultMaxStreamsPerPlayer, 8); one more gets 429
	// too_many_streams with Retry-After.
	MaxStreamsPerPlayer int
	// MaxStreamsPerAddress bounds the live streams of one client address
	// (IPv4, or IPv6 /64), whichever players open them (default
	// DefaultMaxStreamsPerAddress, 64); one more gets 429 too_many_streams.
	MaxStreamsPerAddress int
	// MaxStreams bounds the live streams of the whole server (default
	// DefaultMaxStreams, 4096): each holds a connection, so a file
	// descriptor; one more gets 429 too_many_streams, and the server goes on
	// answering every other request.
	MaxStreams int
	// Done, once closed, ends every live stream: http.Server.Shutdown
	// waits for handlers, and a stream would otherwise last until its
	// client leaves. Clients resume elsewhere with Last-Event-ID. nil:
	// streams end only with their client or their game.
	Done <-chan struct{}
	// RateLimit is the sustained rate, in requests per second, allowed to
	// each bearer token, and to each client address (IPv4, or IPv6 /64)
	// for requests without a valid one (README "Limits"); beyond it requests
	// get 429 rate_limited with Retry-After. 0 means no limit. The
	// metrics and the spec are never limited; the probes have a limit of
	// their own (ProbeRateLimit).
	RateLimit float64
	// RateBurst is how many requests above RateLimit a token or address may
	// send at once (default: RateLimit rounded up).
	RateBurst int
	// ProbeRateLimit is the sustained rate, in requests per second, of the
	// probes GET /healthz and /readyz from each client address (IPv4, or
	// IPv6 /64), with bursts of twice that rounded up; beyond it 429
	// rate_limited with Retry-After. Its bucket is the probes' own: they
	// spend nothing of RateLimit's, so a load balancer that shares an
	// address with busy clients still gets its answer, and a client cannot
	// ping them without bound to keep connections busy. 0 means no limit.
	ProbeRateLimit float64
	// MaxGamesInProgress bounds the games in progress one player may have
	// when creating another with POST /v1/games (duel and daily games are
	// bounded by their competitions instead); one more gets 409
	// too_many_games. 0 means no bound. InProgress must be set with it.
	MaxGamesInProgress int
	// InProgress counts a player's games in progress for
	// MaxGamesInProgress (the persistence Store).
	InProgress InProgressCounter
	// PlayersPerHour bounds POST /v1/players per client address (IPv4, or
	// IPv6 /64): a bucket of PlayersPerHour refilled over an hour; beyond
	// it 429 rate_limited with Retry-After. 0 means no limit.
	PlayersPerHour int
	// CORSOrigins are the browser origins (scheme://host[:port], or "*" for
	// any) allowed to call the API from another origin; none means the
	// API sends no CORS headers and answers no preflight.
	CORSOrigins []string
	// Competitions is the service of duels and daily deals (/v1/duels,
	// /v1/daily), made with app.NewCompetitions on Games (which makes
	// their games sealed until they close, RULES R6.6); nil leaves those
	// routes out.
	Competitions *app.Competitions
	// Stats reads statistics and leaderboards (/v1/players/me/stats,
	// /v1/leaderboards); nil leaves those routes out.
	Stats StatsStore
	// Log is the transparency log of finished games (/v1/log/...,
	// /v1/games/{id}/proof; docs/transparency.md); nil leaves those
	// routes out.
	Log app.TransparencyLog
	// Solver runs the searches of POST /v1/solve, hints and analyses
	// (RULES R7), each request's taking its player's share (SolverShare);
	// New registers its metrics on Metrics. nil: a pool of
	// DefaultSolverWorkers() workers, DefaultSolverQueue waiting and
	// DefaultSolverShare() per player.
	Solver *SolverPool
	// SolverMaxBudget caps the time of one search: POST /v1/solve refuses a
	// larger budget_ms (422), and hints and each search of an analysis run
	// with it (default DefaultSolverMaxBudget, 10 s).
	SolverMaxBudget time.Duration
}

// server holds the configured dependencies of the handlers.
type server struct {
	cfg      Config
	log      *slog.Logger
	metrics  *metrics
	specJSON []byte
	locks    keyLocks
	limits   *rateLimits // nil: no rate limit

	corsHandler gin.HandlerFunc // nil: no CORS

	metricsHandler http.Handler

	docsUI    gin.HandlerFunc // gin-swagger, serving /docs/{file}
	docsIndex []byte          // the page of /docs

	solver    *SolverPool
	maxBudget time.Duration
	hints     *app.Hints     // the hint rule and each game's hinted line (hints.go)
	analyses  *analysisCache // the analysis of each ended game (analysis.go)
}

// New returns the HTTP handler of the API (a gin engine) with every route
// of openapi.yaml. Errors: a required Config field missing, a
// spec that does not parse, metrics that are already registered, a negative
// rate limit, a CORS origin that is not scheme://host[:port] or *.
func New(cfg Config) (http.Handler, error) {
	if cfg.Games == nil || cfg.Players == nil || cfg.Idempotency == nil || len(cfg.Spec) == 0 {
		return nil, errors.New("api: Config needs Games, Players, Idempotency and Spec")
	}
	if cfg.Games.Now == nil {
		return nil, errors.New("api: Config.Games.Now is nil")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.Random == nil {
		cfg.Random = rand.Reader
	}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	specJSON, err := specToJSON(cfg.Spec)
	if err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Metrics)
	if err != nil {
		return nil, err
	}
	if cfg.RateLimit < 0 || math.IsNaN(cfg.RateLimit) || cfg.RateBurst < 0 || cfg.PlayersPerHour < 0 ||
		cfg.ProbeRateLimit < 0 || math.IsNaN(cfg.ProbeRateLimit) || math.IsInf(cfg.ProbeRateLimit, 0) {
		return nil, errors.New("api: Config.RateLimit, RateBurst, PlayersPerHour and ProbeRateLimit must not be negative (nor ProbeRateLimit infinite)")
	}
	if cfg.RateBurst == 0 {
		cfg.RateBurst = max(1, int(math.Ceil(cfg.RateLimit)))
	}
	if cfg.MaxGamesInProgress < 0 || (cfg.MaxGamesInProgress > 0 && cfg.InProgress == nil) {
		return nil, errors.New("api: Config.MaxGamesInProgress must not be negative, and needs InProgress")
	}
	corsHandler, err := newCORS(cfg.CORSOrigins)
	if err != nil {
		return nil, err
	}
	docsUI, docsIndex, err := newDocsUI()
	if err != nil {
		return nil, err
	}
	if cfg.SolverMaxBudget < 0 {
		return nil, errors.New("api: Config.SolverMaxBudget must not be negative")
	}
	if cfg.SolverMaxBudget == 0 {
		cfg.SolverMaxBudget = DefaultSolverMaxBudget
	}
	if cfg.Solver == nil {
		cfg.Solver = NewSolverPool(DefaultSolverWorkers(), DefaultSolverQueue, DefaultSolverShare())
	}
	if err := cfg.Metrics.Register(cfg.Solver); err != nil {
		var dup prometheus.AlreadyRegisteredError
		if !errors.As(err, &dup) || dup.ExistingCollector != cfg.Solver {
			return nil, err
		}
	}
	s := &server{cfg: cfg, log: log, metrics: m, specJSON: specJSON, docsUI: docsUI, docsIndex: docsIndex,
		limits: newRateLimits(cfg.RateLimit, cfg.RateBurst, cfg.PlayersPerHour, cfg.ProbeRateLimit), corsHandler: corsHandler,
		metricsHandler: promhttp.HandlerFor(cfg.Metrics, promhttp.HandlerOpts{}),
		solver:         cfg.Solver, maxBudget: cfg.SolverMaxBudget, analyses: newAnalysisCache(analysisCacheGames)}
	s.hints = s.newHints(hintCacheGames)
	return headAsGet(s.routes()), nil
}

// headKey marks, in a request's context, a HEAD request routed as GET.
type headKey struct{}

// headAsGet answers HEAD on every GET route (RFC 9110 §9.3.2): the request
// is routed as a GET, and restoreHead, the first middleware, makes it a
// HEAD again, so handlers, logs and metrics see the method sent. net/http
// sends no body for a HEAD, whatever the handler writes; the status and
// headers are those of the GET.
func headAsGet(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			r = r.WithContext(context.WithValue(r.Context(), headKey{}, true))
			r.Method = http.MethodGet
		}
		h.ServeHTTP(w, r)
	})
}

// restoreHead undoes headAsGet's rewrite once the route is chosen.
func (s *server) restoreHead(c *gin.Context) {
	if c.Request.Context().Value(headKey{}) != nil {
		c.Request.Method = http.MethodHead
	}
}

func (s *server) routes() *gin.Engine {
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	_ = r.SetTrustedProxies(nil) // ClientIP is the peer's address; nil never fails
	r.Use(s.restoreHead, s.requestID, s.accessLog, s.observe, s.recover, s.cors, s.limitRate, s.cleanPath, s.limitBody)
	r.NoRoute(s.handle(func(c *gin.Context) reply {
		return s.fail(c, &requestError{status: http.StatusNotFound, code: CodeNotFound, detail: "no such route"})
	}))
	r.NoMethod(s.handle(func(c *gin.Context) reply {
		// gin lists the methods of its routes; a GET route takes HEAD too
		// (headAsGet).
		if allow := c.Writer.Header().Get("Allow"); slices.Contains(strings.Split(allow, ", "), http.MethodGet) {
			c.Writer.Header().Set("Allow", allow+", "+http.MethodHead)
		}
		return s.fail(c, &requestError{status: http.StatusMethodNotAllowed, code: CodeMethodNotAllowed,
			detail: "the route does not take this method; Allow lists the ones it takes"})
	}))

	r.GET("/healthz", s.handle(s.healthz))
	r.GET("/readyz", s.handle(s.readyz))
	r.GET("/metrics", s.serveMetrics)
	r.GET("/openapi.yaml", s.handle(s.specYAML))
	r.GET("/openapi.json", s.handle(s.specJSONHandler))
	r.GET("/docs", s.handle(s.docsPage))
	r.GET("/docs/:file", s.docsFileHandler)

	v1 := r.Group("/v1")
	v1.POST("/players", s.handle(s.createPlayer))
	v1.GET("/variants", s.handle(s.listVariants))

	games := v1.Group("/games", s.auth)
	games.POST("", s.idempotent(s.createGame))
	games.GET("", s.handle(s.listGames))
	games.GET("/:id", s.handle(s.getGame))
	games.GET("/:id/legal-moves", s.handle(s.legalMoves))
	games.POST("/:id/moves", s.idempotentWrite(s.postMove))
	games.GET("/:id/events", s.handle(s.events))
	games.GET("/:id/states/:version", s.handle(s.stateAt))
	games.GET("/:id/audit", s.handle(s.audit))
	games.GET("/:id/stream", s.streamHandler())
	games.POST("/:id/hints", s.handle(s.postHint))      // hints.go
	games.GET("/:id/analysis", s.handle(s.getAnalysis)) // analysis.go
	v1.POST("/solve", s.auth, s.handle(s.postSolve))    // solve.go
	s.competitionRoutes(v1)                             // duels.go
	if s.cfg.Log != nil {
		s.logRoutes(v1) // log.go
	}
	return r
}

// now is the server clock.
func (s *server) now() time.Time { return s.cfg.Games.Now() }

// reply is a complete response: handlers build one, write sends it, and
// the idempotency layer can keep and replay it byte for byte.
type reply struct {
	status      int
	contentType string
	header      []field // extra header fields (ETag, Location, ...), each name once, canonical
	body        []byte
	code        string  // the problem code of an error reply, "" otherwise
	buffer      *[]byte // body's buffer, from answerBuffers; nil if body is not pooled
}

const (
	mimeJSON    = "application/json"
	mimeProblem = "application/problem+json"
	mimeNDJSON  = "application/x-ndjson"
	mimeYAML    = "application/yaml"
	mimeHTML    = "text/html; charset=utf-8"
)

// encodeJSON is v as JSON and a newline, without HTML escaping.
func encodeJSON(v any) ([]byte, error) {
	if a, ok := v.(jsonAppender); ok { // the same bytes, faster (answerjson.go)
		return append(a.appendJSON(make([]byte, 0, 4096)), '\n'), nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return b.Bytes(), err
}

// answerBuffers holds the buffers of answers that write their own JSON
// (jsonAppender), for the next answer once one is sent: a move's answer
// is one to a few KB, and a buffer of its own per move would be the
// largest allocation of a move. A buffer grown past maxPooledAnswer (a long game with every
// legal move listed) goes to the garbage collector instead, so the pool
// holds no outsized buffers.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// maxPooledAnswer is the largest buffer answerBuffers keeps, in bytes.
const maxPooledAnswer = 64 << 10

// release gives r's pooled buffer back (answerBuffers) once r is sent:
// nothing may read r.body after it. A reply not from the pool is left
// alone.
func (r reply) release() {
	if r.buffer == nil || cap(r.body) > maxPooledAnswer {
		return
	}
	*r.buffer = r.body[:0]
	answerBuffers.Put(r.buffer)
}

// jsonReply encodes v as the body of a status response. An answer that
// writes its own JSON goes into a buffer of answerBuffers, which handle
// gives back once the answer is sent.
func (s *server) jsonReply(status int, v any) reply {
	if a, ok := v.(jsonAppender); ok { // encodeJSON's bytes, faster (answerjson.go)
		buf := answerBuffers.Get().(*[]byte)
		return pooledReply(status, buf, a.appendJSON((*buf)[:0]))
	}
	b, err := encodeJSON(v)
	if err != nil { // only for a bug: every type here marshals
		s.log.Error("api: encode response", "err", err)
		return s.problemReply(newProblem(http.StatusInternalServerError, CodeInternal, "an internal error occurred"))
	}
	return reply{status: status, contentType: mimeJSON, body: b}
}

// pooledReply is the reply of JSON body, which an appendJSON wrote into
// buf (from answerBuffers, given back once the answer is written).
func pooledReply(status int, buf *[]byte, body []byte) reply {
	return reply{status: status, contentType: mimeJSON, body: append(body, '\n'), buffer: buf}
}

// with sets header field key of r to value, replacing any value it had.
func (r reply) with(key, value string) reply {
	key = http.CanonicalHeaderKey(key)
	// A copy, never the backing array of the reply r was copied from
	// (replies are values), and no map: a move's answer has one field.
	fields := make([]field, 0, len(r.header)+1)
	for _, f := range r.header {
		if f.name != key {
			fields = append(fields, f)
		}
	}
	r.header = append(fields, field{name: key, value: value})
	return r
}

// field is one header field of a reply.
type field struct{ name, value string }

// get is the value of r's extra header field key ("" if none).
func (r reply) get(key string) string {
	key = http.CanonicalHeaderKey(key)
	for _, f := range r.header {
		if f.name == key {
			return f.value
		}
	}
	return ""
}

func (s *server) problemReply(p Problem) reply {
	b, _ := encodeJSON(p) // a Problem always marshals
	return reply{status: p.Status, contentType: mimeProblem, body: b, code: p.Code}
}

// fail answers err as a problem (problemFor). An unexpected error is
// logged with the request id and answered with a generic 500; a database
// outage is logged as a warning and answered 503 with Retry-After.
//
// A request whose client has gone (its context ended, and err is that
// context's error) is no failure of the server: it is not logged as an
// error (the access log has it, at info, with its status) and is answered
// 499 (nginx's "client closed request"), so that logs and the status
// metric tell it from a 500. Nobody reads that answer. A move cut
// off so may still have been written (the append goes on once submitted):
// the client learns the outcome by reading the game.
func (s *server) fail(c *gin.Context, err error) reply {
	if clientClosed(c, err) {
		// The access log records the request at info with its 499; the
		// cause is for debugging only.
		s.log.DebugContext(c.Request.Context(), "client closed the request", "request_id", requestIDOf(c),
			"method", c.Request.Method, "route", c.FullPath(), "err", err)
		p := newProblem(StatusClientClosed, CodeClientClosed, "the client closed the request before the answer")
		p.RequestID = requestIDOf(c)
		return s.problemReply(p)
	}
	p, known := problemFor(err)
	if !known {
		s.log.ErrorContext(c.Request.Context(), "request failed", "request_id", requestIDOf(c),
			"method", c.Request.Method, "route", c.FullPath(), "err", err)
	}
	p.RequestID = requestIDOf(c)
	r := s.problemReply(p)
	if p.location != "" {
		r = r.with("Location", p.location)
	}
	if p.Code == CodeDatabaseUnavailable {
		s.log.WarnContext(c.Request.Context(), "database unavailable", "request_id", requestIDOf(c),
			"method", c.Request.Method, "route", c.FullPath(), "err", err)
		r = r.with("Retry-After", retryAfter(UnavailableRetryAfter))
	}
	// An error that knows when to come back (a full bound) says so.
	var later interface{ RetryAfter() time.Duration }
	if errors.As(err, &later) {
		r = r.with("Retry-After", retryAfter(later.RetryAfter()))
	}
	return r
}

// StatusClientClosed is the status of a request whose client left before
// the answer (nginx's 499; HTTP has no standard code for it).
const StatusClientClosed = 499

// clientClosed reports whether err is the request's own context ending
// (that very error, not a deadline of the server's own that came at the
// same time): the client disconnected while the request was served.
// A search cut short is left out: it keeps its documented 503 solver_busy
// (a client that half-closed its connection after sending may still read
// that answer).
func clientClosed(c *gin.Context, err error) bool {
	ended := c.Request.Context().Err()
	var busy *solverBusyError
	return ended != nil && errors.Is(err, ended) && !errors.As(err, &busy)
}

// write sends r. A reply with status 0 was already written (a stream).
func (s *server) write(c *gin.Context, r reply) {
	if r.status == 0 {
		return
	}
	h := c.Writer.Header()
	for _, f := range r.header {
		h[f.name] = []string{f.value}
	}
	if r.contentType != "" {
		h.Set("Content-Type", r.contentType)
	}
	if r.code != "" {
		c.Set(ctxProblemCode, r.code)
	}
	if bodyAllowed(r.status) {
		// Set, not left to net/http, so that a HEAD gets the GET's length
		// (net/http counts only what fits its buffer, and a HEAD writes
		// nothing).
		h.Set("Content-Length", strconv.Itoa(len(r.body)))
	}
	c.Writer.WriteHeader(r.status)
	if c.Request.Method == http.MethodHead {
		// gin sends the status only with the first byte of a body; without
		// one it would answer a 404 or 405 in text/plain after us.
		c.Writer.WriteHeaderNow()
		return
	}
	_, _ = c.Writer.Write(r.body)
}

// bodyAllowed reports whether a response of status may have a body (RFC
// 9110 §6.4.1: not 1xx, 204 or 304).
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

// handle adapts a handler that returns a reply.
func (s *server) handle(h func(*gin.Context) reply) gin.HandlerFunc {
	return func(c *gin.Context) {
		r := h(c)
		s.write(c, r)
		r.release() // written: net/http has copied or sent the body
	}
}
