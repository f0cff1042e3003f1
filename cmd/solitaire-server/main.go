// Command solitaire-server serves the solitaire HTTP API (openapi.yaml).
//
// Usage:
//
//	solitaire-server           serve until SIGINT or SIGTERM, then shut down gracefully
//	solitaire-server migrate   apply the database migrations and exit
//
// Configuration is by environment:
//
//	SOLITAIRE_ADDR            listen address (default 127.0.0.1:8080)
//	DATABASE_URL              postgres:// URL; empty means the embedded SQLite database
//	SOLITAIRE_DB_EXEC_MODE    how statements are sent: auto (default: cache_describe behind a detected
//	                          pooler such as PgBouncer, else cache_statement) or a pgx mode name
//	SOLITAIRE_MIGRATE_DATABASE_URL  where migrations run (default DATABASE_URL; a direct URL behind a pooler)
//	SOLITAIRE_LISTEN_DATABASE_URL   the LISTEN connection of live streams (default DATABASE_URL; a direct
//	                          URL behind a transaction pooler, which cannot hold a LISTEN)
//	SOLITAIRE_READ_DATABASE_URL     a read replica (a hot standby) for game histories and boards; each
//	                          read goes there only once it has what the primary has (default: none)
//	SOLITAIRE_SQLITE_PATH     the SQLite file (default solitaire.db)
//	SOLITAIRE_SNAPSHOT_EVERY  events between state snapshots (default 100, 0 = none)
//	SOLITAIRE_LOG_LEVEL       debug, info (default), warn or error
//	SOLITAIRE_STREAM_HEARTBEAT        interval of live-stream heartbeats (a Go duration, default 15s)
//	SOLITAIRE_MAX_STREAMS_PER_PLAYER  live streams one player may have open at once (default 8)
//	SOLITAIRE_MAX_STREAMS_PER_ADDRESS live streams one client address may have open at once (default 64)
//	SOLITAIRE_MAX_STREAMS     live streams of the whole server (default 4096; default and set
//	                          value at most half the open-file limit, a value above refused)
//	SOLITAIRE_MAX_CONNS_PER_ADDRESS  HTTP connections one client address may hold open (default 128);
//	                          one more replaces the address's longest-idle connection, or is refused
//	SOLITAIRE_MAX_CONNS       HTTP connections of the whole server (default 10000, at most the
//	                          open-file limit less SOLITAIRE_DB_MAX_CONNS + 65); one more replaces the
//	                          longest-idle connection of the address holding the most, or is refused
//	SOLITAIRE_RATE_LIMIT      requests per second per bearer token, and per client address for
//	                          requests without one (default 50, 0 = no limit); beyond it 429
//	SOLITAIRE_RATE_BURST      requests a token or address may send at once (default twice the limit)
//	SOLITAIRE_PLAYER_CREATE_LIMIT  new players per hour per client address (default 20, 0 = no limit)
//	SOLITAIRE_PROBE_RATE_LIMIT  GET /healthz and /readyz per second per client address, a bucket of
//	                          their own (default 10, bursts of twice that; 0 = no limit); beyond it 429
//	SOLITAIRE_MAX_GAMES_IN_PROGRESS  games in progress one player may have (default 100, 0 = no bound)
//	SOLITAIRE_CORS_ORIGINS    browser origins allowed to call the API, comma-separated
//	                          (scheme://host[:port], or *; default none: no CORS)
//	SOLITAIRE_STATE_CACHE_MB  memory for cached game states, MiB (default 32, 0 = no cache)
//	SOLITAIRE_DB_MAX_CONNS    PostgreSQL connections in the pool (default 20)
//	SOLITAIRE_PPROF_ADDR      if set, serve net/http/pprof on this address (loopback only; off by default)
//	SOLITAIRE_SWEEP_EVERY     how often games past their time limit are expired and games of closed
//	                          duels and daily deals resigned (a Go duration, default 5s)
//	SOLITAIRE_LOG_KEY         the transparency log's signer key (a note signer key; see log.go)
//	SOLITAIRE_LOG_KEY_FILE    a file holding it (default on SQLite: the database file + ".logkey")
//	SOLITAIRE_LOG_ORIGIN      the log's name, its URL prefix without the scheme (e.g. solitaire.example/v1/log;
//	                          default the key's; a new key on SQLite listening on loopback: SOLITAIRE_ADDR/v1/log;
//	                          required for a new key on PostgreSQL or beyond loopback)
//	SOLITAIRE_LOG_EVERY       how often ended games get their leaves and a checkpoint (default 1s)
//	SOLITAIRE_SHARED_MIN_ACCOUNT_AGE  accounts younger than this when a duel or daily deal opened play
//	                          it unranked (a Go duration, default 0: off)
//
// Logs are JSON lines (log/slog) on standard error.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain/app"

	"github.com/openpatience/solitaire/domain/supply"
	"github.com/openpatience/solitaire/persistence"
)

// DefaultAddr is the listen address without SOLITAIRE_ADDR (README
// "Configuration").
const DefaultAddr = "127.0.0.1:8080"

// Timeouts of the HTTP server and of its shutdown.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 2 * time.Minute // long enough to stream a whole log as NDJSON
	idleTimeout       = 2 * time.Minute
	shutdownTimeout   = 15 * time.Second
)

// The players remembered by token hash, so that authenticating a request
// costs no query (persistence.PlayerCache): about 100 bytes each.
const (
	playerCacheSize = 10_000
	playerCacheTTL  = time.Minute
)

// purgeEvery is how often expired idempotency keys, and each player's
// beyond persistence.MaxIdempotencyKeysPerPlayer, are deleted.
const purgeEvery = 5 * time.Minute

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	gin.SetMode(gin.ReleaseMode)
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "solitaire-server:", err)
		os.Exit(1)
	}
}

// config is the server's configuration, read from the environment.
type config struct {
	addr  string
	level slog.Level
	store persistence.Config
	// heartbeat and maxStreams tune the live streams of
	// GET /v1/games/{id}/stream (SOLITAIRE_STREAM_HEARTBEAT,
	// SOLITAIRE_MAX_STREAMS_PER_PLAYER).
	heartbeat  time.Duration
	maxStreams int
	// maxStreamsPerAddress and maxStreamsAll are api.Config's
	// MaxStreamsPerAddress and MaxStreams (SOLITAIRE_MAX_STREAMS_PER_ADDRESS,
	// SOLITAIRE_MAX_STREAMS; see streamBound).
	maxStreamsPerAddress, maxStreamsAll int
	// maxConnsPerAddress and maxConns bound the HTTP connections held
	// open, per client address and in all (SOLITAIRE_MAX_CONNS_PER_ADDRESS,
	// SOLITAIRE_MAX_CONNS; conns.go).
	maxConnsPerAddress, maxConns int
	// rateLimit, rateBurst and corsOrigins are api.Config's RateLimit,
	// RateBurst and CORSOrigins (SOLITAIRE_RATE_LIMIT,
	// SOLITAIRE_RATE_BURST, SOLITAIRE_CORS_ORIGINS).
	rateLimit   float64
	rateBurst   int
	corsOrigins []string
	// probeRate is api.Config.ProbeRateLimit (SOLITAIRE_PROBE_RATE_LIMIT).
	probeRate float64
	// playersPerHour is api.Config.PlayersPerHour
	// (SOLITAIRE_PLAYER_CREATE_LIMIT).
	playersPerHour int
	// gamesInProgress is api.Config.MaxGamesInProgress
	// (SOLITAIRE_MAX_GAMES_IN_PROGRESS).
	gamesInProgress int
	// pprofAddr serves net/http/pprof when set (SOLITAIRE_PPROF_ADDR):
	// profiles for BENCHMARKS.md, never on the API's listener.
	pprofAddr string
	// sweepEvery is the interval of the sweeper (SOLITAIRE_SWEEP_EVERY).
	sweepEvery time.Duration
	// minAccountAge is app.Competitions.MinAccountAge
	// (SOLITAIRE_SHARED_MIN_ACCOUNT_AGE, limits.go).
	minAccountAge time.Duration
	// tlog configures the transparency log (log.go, SOLITAIRE_LOG_*).
	tlog logConfig
	// solverWorkers, solverQueue, solverShare and solverMaxBudget
	// configure the solver pool (SOLITAIRE_SOLVER_WORKERS,
	// SOLITAIRE_SOLVER_QUEUE, SOLITAIRE_SOLVER_*_PER_PLAYER,
	// SOLITAIRE_SOLVER_MAX_BUDGET_MS; solver.go).
	solverWorkers, solverQueue int
	solverShare                api.SolverShare
	solverMaxBudget            time.Duration
	// supply configures the supply of proven winnable deals (supply.go,
	// SOLITAIRE_WINNABLE_*); supplyOn is false with no workers.
	supply   supply.Config
	supplyOn bool
}

func loadConfig(getenv func(string) string) (config, error) {
	c := config{addr: getenv("SOLITAIRE_ADDR")}
	if c.addr == "" {
		c.addr = DefaultAddr
	}
	if v := getenv("SOLITAIRE_PPROF_ADDR"); v != "" {
		if !loopback(v) {
			return config{}, fmt.Errorf("SOLITAIRE_PPROF_ADDR=%q: want a loopback host:port, e.g. 127.0.0.1:6060", v)
		}
		c.pprofAddr = v
	}
	c.sweepEvery = defaultSweepEvery
	if err := durationVar(getenv, "SOLITAIRE_SWEEP_EVERY", 100*time.Millisecond, time.Hour, "5s", &c.sweepEvery); err != nil {
		return config{}, err
	}
	if v := getenv("SOLITAIRE_LOG_LEVEL"); v != "" {
		if err := c.level.UnmarshalText([]byte(v)); err != nil {
			return config{}, fmt.Errorf("SOLITAIRE_LOG_LEVEL=%q: want debug, info, warn or error", v)
		}
	}
	for _, load := range []func(func(string) string) error{
		c.loadStore, c.loadLimits, func(g func(string) string) error { return c.loadConns(g, openFileLimit()) },
		c.loadLog, c.loadSolver, c.loadSupply, c.loadStreams,
	} {
		if err := load(getenv); err != nil {
			return config{}, err
		}
	}
	return c, nil
}

// loadStore reads the database settings (README "Configuration"):
// DATABASE_URL, SOLITAIRE_MIGRATE_DATABASE_URL,
// SOLITAIRE_LISTEN_DATABASE_URL and SOLITAIRE_READ_DATABASE_URL (the last
// three need the first),
// SOLITAIRE_DB_EXEC_MODE, SOLITAIRE_SQLITE_PATH, SOLITAIRE_SNAPSHOT_EVERY
// (events, 0 for none), SOLITAIRE_STATE_CACHE_MB (MiB, 0 for no cache) and
// SOLITAIRE_DB_MAX_CONNS (1..1000).
func (c *config) loadStore(getenv func(string) string) error {
	c.store = persistence.Config{
		DatabaseURL:   getenv("DATABASE_URL"),
		MigrateURL:    getenv("SOLITAIRE_MIGRATE_DATABASE_URL"),
		ListenURL:     getenv("SOLITAIRE_LISTEN_DATABASE_URL"),
		ReadURL:       getenv("SOLITAIRE_READ_DATABASE_URL"),
		ExecMode:      getenv("SOLITAIRE_DB_EXEC_MODE"),
		SQLitePath:    getenv("SOLITAIRE_SQLITE_PATH"),
		SnapshotEvery: persistence.DefaultSnapshotEvery,
	}
	if c.store.SQLitePath == "" {
		c.store.SQLitePath = persistence.DefaultSQLitePath
	}
	cacheMB := int(persistence.DefaultStateCacheBytes >> 20)
	for _, v := range []struct {
		name   string
		lo, hi int
		want   string
		dst    *int
	}{
		{"SOLITAIRE_SNAPSHOT_EVERY", 0, 1 << 30, "events between snapshots, 0 for none", &c.store.SnapshotEvery},
		{"SOLITAIRE_STATE_CACHE_MB", 0, 1 << 20, "MiB, 0 for no cache", &cacheMB},
		{"SOLITAIRE_DB_MAX_CONNS", 1, 1000, "connections", &c.store.MaxConns},
	} {
		if err := intVar(getenv, v.name, v.lo, v.hi, v.want, v.dst); err != nil {
			return err
		}
	}
	c.store.StateCacheBytes = int64(cacheMB) << 20
	if !persistence.ValidExecMode(c.store.ExecMode) {
		return fmt.Errorf("SOLITAIRE_DB_EXEC_MODE=%q: want auto, cache_statement, cache_describe, describe_exec, exec or simple_protocol", c.store.ExecMode)
	}
	if c.store.DatabaseURL == "" && (c.store.MigrateURL != "" || c.store.ListenURL != "" || c.store.ReadURL != "") {
		return errors.New("SOLITAIRE_MIGRATE_DATABASE_URL, SOLITAIRE_LISTEN_DATABASE_URL and SOLITAIRE_READ_DATABASE_URL need DATABASE_URL")
	}
	return nil
}

// loadStreams reads the live streams' settings (README "Limits"):
// SOLITAIRE_STREAM_HEARTBEAT (10ms..1h), SOLITAIRE_MAX_STREAMS_PER_PLAYER
// (1..10000), SOLITAIRE_MAX_STREAMS_PER_ADDRESS (1..1000000) and
// SOLITAIRE_MAX_STREAMS (1..1000000, and at most half the open-file limit,
// as its default is: streamBound).
func (c *config) loadStreams(getenv func(string) string) error {
	c.heartbeat, c.maxStreams = api.DefaultHeartbeat, api.DefaultMaxStreamsPerPlayer
	c.maxStreamsPerAddress, c.maxStreamsAll = api.DefaultMaxStreamsPerAddress, streamBound(openFileLimit())
	if err := durationVar(getenv, "SOLITAIRE_STREAM_HEARTBEAT", 10*time.Millisecond, time.Hour, "15s", &c.heartbeat); err != nil {
		return err
	}
	for _, v := range []struct {
		name string
		hi   int
		dst  *int
	}{
		{"SOLITAIRE_MAX_STREAMS_PER_PLAYER", 10000, &c.maxStreams},
		{"SOLITAIRE_MAX_STREAMS_PER_ADDRESS", 1_000_000, &c.maxStreamsPerAddress},
		{"SOLITAIRE_MAX_STREAMS", 1_000_000, &c.maxStreamsAll},
	} {
		if err := intVar(getenv, v.name, 1, v.hi, "streams", v.dst); err != nil {
			return err
		}
	}
	// A set bound gets the default's reason (streamBound): above half the
	// open-file limit, streams could take the descriptors that every other
	// request needs, so the server refuses to start.
	if nofile := openFileLimit(); getenv("SOLITAIRE_MAX_STREAMS") != "" && nofile != 0 && uint64(c.maxStreamsAll) > max(1, nofile/2) {
		return fmt.Errorf("SOLITAIRE_MAX_STREAMS=%d: want at most %d, half the open-file limit (ulimit -n %d)", c.maxStreamsAll, max(1, nofile/2), nofile)
	}
	return nil
}

// rangeVar sets *dst to the environment variable name, read by parse, when
// it is set; one that parse refuses or that is not in lo..hi is the error
// "name=value: want " and want: one check and one wording for every
// bounded variable that reads through it.
func rangeVar[T cmp.Ordered](getenv func(string) string, name string, parse func(string) (T, error), lo, hi T, want string, dst *T) error {
	v := getenv(name)
	if v == "" {
		return nil
	}
	x, err := parse(v)
	// Written as "not in range" so that a float NaN, which compares false
	// with everything, is refused too.
	if err != nil || !(x >= lo && x <= hi) {
		return fmt.Errorf("%s=%q: want %s", name, v, want)
	}
	*dst = x
	return nil
}

// intVar sets *dst to the integer environment variable name when it is
// set; one that is not an integer in lo..hi is an error that names want,
// what the number counts.
func intVar(getenv func(string) string, name string, lo, hi int, want string, dst *int) error {
	return rangeVar(getenv, name, strconv.Atoi, lo, hi, fmt.Sprintf("%d..%d %s", lo, hi, want), dst)
}

// durationVar sets *dst to the duration environment variable name when it
// is set; one that is not a Go duration in lo..hi is an error that gives
// example, a value in range.
func durationVar(getenv func(string) string, name string, lo, hi time.Duration, example string, dst *time.Duration) error {
	return rangeVar(getenv, name, time.ParseDuration, lo, hi, fmt.Sprintf("a duration of %v..%v, e.g. %s", lo, hi, example), dst)
}

// parseFloat is strconv.ParseFloat for a float64, the parse of rangeVar
// for rates.
func parseFloat(s string) (float64, error) { return strconv.ParseFloat(s, 64) }

// streamBound is the default bound of the server's live streams for an
// open-file limit of nofile (0 = unknown): api.DefaultMaxStreams, but at
// most half the limit, since each stream holds a connection's descriptor
// for as long as it lasts and the other half must serve everything else
// (the database pool, the SQLite files, other clients' connections, the
// refused streams' own connections until they close). At least 1.
func streamBound(nofile uint64) int {
	if nofile == 0 || nofile/2 >= api.DefaultMaxStreams {
		return api.DefaultMaxStreams
	}
	return max(1, int(nofile/2))
}

// run is the command: args without the program name, the environment,
// where logs go, and listening, called with the bound address once the
// server accepts connections (nil: not called). It returns after ctx is
// done and the server has shut down.
func run(ctx context.Context, args []string, getenv func(string) string, logs io.Writer, listening func(net.Addr)) error {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: cfg.level}))
	cfg.store.Logger = log
	switch {
	case len(args) == 0 || (len(args) == 1 && args[0] == "serve"):
		return serve(ctx, cfg, log, listening)
	case len(args) == 1 && args[0] == "migrate":
		if err := persistence.Migrate(ctx, cfg.store); err != nil {
			return err
		}
		log.Info("migrations applied")
		return nil
	}
	return fmt.Errorf("usage: solitaire-server [serve|migrate]")
}

func serve(ctx context.Context, cfg config, log *slog.Logger, listening func(net.Addr)) error {
	store, err := persistence.Open(ctx, cfg.store)
	if err != nil {
		return err
	}
	defer store.Close()

	defer runListen(store)()
	// Closed when shutdown begins: open streams end, so Shutdown need not
	// wait for their clients; they resume elsewhere with Last-Event-ID.
	streamsDone := make(chan struct{})

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(storeMetrics(store)...)
	games := app.NewGames(store)
	competitions := app.NewCompetitions(games, store) // also seals shared deals in games (R6.6)
	competitions.MinAccountAge = cfg.minAccountAge
	defer startSupply(cfg, games, log)() // proven winnable deals (R7.2)
	tlog, err := store.OpenLog(ctx, cfg.tlog.open)
	if errors.Is(err, persistence.ErrNoOrigin) {
		return originNeeded(err)
	}
	if err != nil {
		return err
	}
	defer runLog(tlog, cfg.tlog.every)()
	log.Info("transparency log", "origin", tlog.Origin(), "verifier_key", tlog.VerifierKey())
	handler, err := api.New(apiConfig(cfg, store, games, competitions, tlog, reg, log, streamsDone))
	if err != nil {
		return err
	}
	tcp, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	ln := newConnLimiter(tcp, cfg.maxConnsPerAddress, cfg.maxConns)
	reg.MustRegister(connMetrics(ln)...)
	srv := &http.Server{
		Handler:           handler,
		ConnState:         ln.connState,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	srv.RegisterOnShutdown(func() { close(streamsDone) })

	defer runHousekeeping(store, games, cfg.sweepEvery, log)()

	if cfg.pprofAddr != "" {
		stopPprof, err := servePprof(cfg.pprofAddr, log)
		if err != nil {
			return err
		}
		defer stopPprof()
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	log.Info("serving", "addr", ln.Addr().String(), "database", store.Dialect(), "max_streams", cfg.maxStreamsAll,
		"max_conns", cfg.maxConns, "max_conns_per_address", cfg.maxConnsPerAddress)
	if listening != nil {
		listening(ln.Addr())
	}

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// apiConfig is the api.Config that serve hands to api.New: the handler's
// stores (all backed by store, the players through a cache), its limits
// from cfg, the metrics registry reg, the transparency log tlog and the
// solver pool. streamsDone is closed when shutdown begins, so that open
// live streams end and Shutdown need not wait for their clients.
func apiConfig(cfg config, store *persistence.Store, games *app.Games, competitions *app.Competitions,
	tlog *persistence.Log, reg *prometheus.Registry, log *slog.Logger, streamsDone chan struct{}) api.Config {
	return api.Config{
		Games:       games,
		Players:     persistence.NewPlayerCache(store, playerCacheSize, playerCacheTTL),
		Idempotency: store,
		Ready:       store.Ping,
		Spec:        solitaire.OpenAPIYAML,
		Metrics:     reg,
		Logger:      log,
		RateLimit:   cfg.rateLimit,
		RateBurst:   cfg.rateBurst,
		CORSOrigins: cfg.corsOrigins,

		ProbeRateLimit: cfg.probeRate,

		PlayersPerHour:     cfg.playersPerHour,
		MaxGamesInProgress: cfg.gamesInProgress,
		InProgress:         store,

		Feed:                 store,
		Heartbeat:            cfg.heartbeat,
		MaxStreamsPerPlayer:  cfg.maxStreams,
		MaxStreamsPerAddress: cfg.maxStreamsPerAddress,
		MaxStreams:           cfg.maxStreamsAll,
		Done:                 streamsDone,

		Competitions: competitions,
		Stats:        store,
		Log:          tlog,

		Solver:          api.NewSolverPool(cfg.solverWorkers, cfg.solverQueue, cfg.solverShare, reg),
		SolverMaxBudget: cfg.solverMaxBudget,
	}
}

// runListen has live streams hear of appends by every server on the
// database (PostgreSQL LISTEN/NOTIFY; on SQLite appends notify
// in-process): it runs store.Listen until the returned stop is called,
// and stop waits for it to return.
func runListen(store *persistence.Store) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	listened := make(chan struct{})
	go func() {
		defer close(listened)
		_ = store.Listen(ctx)
	}()
	return func() { cancel(); <-listened }
}

// runHousekeeping runs the server's background loops, purgeLoop (expired
// idempotency keys, every purgeEvery) and sweepLoop (games past their
// time limit or of closed competitions, every sweepEvery), until the
// returned stop is called; stop waits for both to return.
func runHousekeeping(store *persistence.Store, games *app.Games, sweepEvery time.Duration, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	purged := make(chan struct{})
	go func() {
		defer close(purged)
		purgeLoop(ctx, store, purgeEvery, log)
	}()
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		sweepLoop(ctx, games, sweepEvery, log)
	}()
	return func() { cancel(); <-swept; <-purged }
}

// servePprof serves the runtime profiles of net/http/pprof on addr (its
// own listener and mux, not the API's) until the returned stop is called.
func servePprof(addr string, log *slog.Logger) (stop func(), err error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: readHeaderTimeout}
	go func() { _ = srv.Serve(ln) }()
	log.Info("serving pprof", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}

// purger deletes expired idempotency keys.
type purger interface {
	PurgeIdempotency(ctx context.Context, now time.Time) (int64, error)
}

// purgeLoop purges expired idempotency keys now and then every interval
// until ctx is done.
func purgeLoop(ctx context.Context, p purger, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		n, err := p.PurgeIdempotency(ctx, time.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("purging idempotency keys", "err", err)
		case n > 0:
			log.Info("purged idempotency keys", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// defaultSweepEvery is the sweeper's interval without SOLITAIRE_SWEEP_EVERY.
const defaultSweepEvery = 5 * time.Second

// sweepLoop runs the sweeper (app.Games.Sweep) now and then every
// interval until ctx is done: games past their time limit are expired
// (RULES R5.3) and games of closed duels and daily deals resigned, even if
// no client ever reads them again.
func sweepLoop(ctx context.Context, g *app.Games, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		expired, closed, err := g.Sweep(ctx, g.Now())
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("sweeping games", "err", err, "expired", expired, "closed", closed)
		case expired+closed > 0:
			log.Info("swept games", "expired", expired, "closed", closed)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// connMetrics exports the connection bound's counts on /metrics (conns.go).
func connMetrics(l *connLimiter) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "solitaire_http_connections_open",
			Help: "HTTP connections held open (SOLITAIRE_MAX_CONNS bounds them)."},
			func() float64 { return float64(l.stats().open) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "solitaire_http_connections_closed_idle_total",
			Help: "Idle HTTP connections closed to make room for a new one (per-address or server bound reached)."},
			func() float64 { return float64(l.stats().closedIdle) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "solitaire_http_connections_refused_total",
			Help: "New HTTP connections closed at once: the bound was reached and no connection was idle."},
			func() float64 { return float64(l.stats().refused) }),
	}
}

// storeMetrics exports the store's own counters on /metrics: the state
// cache's lookups (checked loads and unchecked command loads) and the
// appender's group commits (BENCHMARKS.md).
func storeMetrics(s *persistence.Store) []prometheus.Collector {
	counter := func(name, help string, f func() int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(f()) })
	}
	return []prometheus.Collector{
		counter("solitaire_state_cache_hits_total", "Game loads served from the state cache after the version check.",
			func() int64 { return s.CacheStats().Hits }),
		counter("solitaire_state_cache_misses_total", "Game loads rebuilt from a snapshot and events.",
			func() int64 { return s.CacheStats().Misses }),
		counter("solitaire_state_cache_command_hits_total", "Move loads served from the state cache without a query.",
			func() int64 { return s.CacheStats().CommandHits }),
		counter("solitaire_state_cache_command_misses_total", "Move loads that had to query (no cached state, or known to be behind).",
			func() int64 { return s.CacheStats().CommandMisses }),
		counter("solitaire_append_batches_total", "Statements that appended to more than one game at once (group commit).",
			func() int64 { return s.AppendStats().Batches }),
		counter("solitaire_append_batched_total", "Appends written by group-commit statements.",
			func() int64 { return s.AppendStats().Batched }),
		counter("solitaire_append_batch_fallbacks_total", "Group-commit statements that failed and were written one append at a time.",
			func() int64 { return s.AppendStats().Fallbacks }),
	}
}
