package persistence

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"

	"github.com/openpatience/solitaire/domain/app"
)

// The dialects Store.Dialect reports.
const (
	DialectPostgres = "postgres"
	DialectSQLite   = "sqlite"
)

// DefaultSQLitePath is the embedded database file used when neither
// Config.DatabaseURL nor Config.SQLitePath is set (README
// "Configuration": SOLITAIRE_SQLITE_PATH, default solitaire.db).
const DefaultSQLitePath = "solitaire.db"

// DefaultSnapshotEvery is the default snapshot interval, in events.
// Config.SnapshotEvery 0 disables snapshots, so a caller
// that wants the default passes DefaultSnapshotEvery (or any negative
// value).
const DefaultSnapshotEvery = 100

// DefaultMaxConns is the size of the PostgreSQL pool when Config.MaxConns
// is 0: enough connections for the server's concurrent requests without
// crowding PostgreSQL's max_connections (100 by default). Each is a file
// descriptor of the process, which the server's bound of HTTP connections
// leaves room for.
const DefaultMaxConns = 20

// postgresMaxIdle is how long an unused PostgreSQL connection is kept.
const postgresMaxIdle = 5 * time.Minute

// Config says which database to use and how.
type Config struct {
	// DatabaseURL is a postgres:// (or postgresql://) URL. Empty selects
	// the embedded SQLite database at SQLitePath. It may list several
	// hosts, as libpq and pgx read it
	// (postgres://u@h1:5432,h2:5432/db?target_session_attrs=read-write,
	// what `pg_autoctl show uri` prints for a pg_auto_failover
	// formation): each new connection goes to the first host that
	// answers and takes writes, so after a failover the pool, the LISTEN
	// connection of live streams, the transparency log's sequencer and
	// the appender reach the new primary by themselves, and a connection
	// that meets a read-only server (SQLSTATE 25006) is closed (its
	// request gets ErrUnavailable, the API's 503).
	DatabaseURL string
	// SQLitePath is the SQLite file, created if missing; "" means
	// DefaultSQLitePath. It may not contain '?'. Ignored with DatabaseURL.
	SQLitePath string
	// SnapshotEvery is the snapshot interval in events: Append writes a
	// snapshot of the state whenever the stream's version crosses a
	// multiple of it, up to version 8×SnapshotEvery; beyond, the interval
	// doubles each time the version does (between v/8 and v/4 events
	// apart around version v), so that long games, whose snapshots carry
	// a long undo record, do not write more snapshot bytes per move. 0
	// disables snapshots; a negative value means DefaultSnapshotEvery
	// (100).
	SnapshotEvery int
	// Logger receives warnings (slow queries, skipped snapshots) and debug
	// traces; nil discards them.
	Logger *slog.Logger
	// StateCacheBytes is the budget of the in-memory cache of current game
	// states (cache.go; DefaultStateCacheBytes is the server's default);
	// 0 or less means no cache. With a cache, Load of a recently used game
	// reads only its games row, whatever the log's length, and an append
	// on PostgreSQL is one statement. The cache is checked against the
	// games row on every Load, so appends by other stores are seen at
	// once; rows changed behind the store's back (other than by appends)
	// are not, so maintenance tools that rewrite rows open a store without
	// it.
	StateCacheBytes int64
	// MaxConns bounds PostgreSQL connections of the pool; 0 means
	// DefaultMaxConns.
	// Ignored on SQLite (one connection).
	MaxConns int
	// ExecMode is how pgx sends statements on DatabaseURL's connections:
	// one of the ExecMode* values; "" means ExecModeAuto (detectPooler
	// decides between cache_statement and cache_describe). A
	// default_query_exec_mode parameter in the URL wins over auto.
	ExecMode string
	// MigrateURL, if set, is where migrations run (Open, Migrate): a
	// direct URL to the same database when DatabaseURL is a transaction
	// pooler, whose connections cannot hold the session advisory lock
	// that makes servers starting together migrate once. "" means
	// DatabaseURL; behind a detected pooler migrations then run without
	// that lock (start one server first, or run `migrate` alone).
	MigrateURL string
	// ListenURL, if set, is the URL of the LISTEN connection of live
	// streams (Listen): a direct URL when DatabaseURL is a transaction
	// pooler, which cannot hold a LISTEN. "" means DatabaseURL; behind a
	// detected pooler, this store's own appends then wake its subscribers
	// at once, and Listen wakes every subscriber each 0.5 s for other
	// processes' appends (each reads its game's log: more queries).
	ListenURL string
	// ReadURL, if set, is a read replica of DatabaseURL (a hot standby,
	// or several: a multi-host URL, or a pooler in front of them) that
	// serves the reads of ended history: a game's events (replays,
	// audits, exports, GET …/events) and the boards. A read goes there
	// only when the replica has what the primary had when the read began,
	// so a client never sees less than it has already been answered
	// (replica.go); otherwise it goes to the primary. "" means every read
	// is on DatabaseURL.
	ReadURL string
}

// Store is the event store on one database. It implements app.Store and
// app.PlayerStore and is safe for concurrent use. Create it with Open
// and release it with Close.
type Store struct {
	db            *gorm.DB
	sqlDB         *sql.DB
	dialect       string
	snapshotEvery int
	log           *slog.Logger
	hub           hub         // live-stream subscribers in this process (notify.go)
	cache         *stateCache // nil without Config.StateCacheBytes
	notifier      notifier    // post-commit pg_notify batches (notify.go)
	appender      appender    // group commit of one-statement appends (batch.go)
	snapshots     snapshotter // snapshots written after their appends (snapshots.go)
	replica       replica     // Config.ReadURL's pool (replica.go)
	// pooled is true when a connection pooler was detected in front of
	// DatabaseURL (pgconnect.go); listenURL and migrateURL are
	// Config.ListenURL and Config.MigrateURL.
	pooled                bool
	listenURL, migrateURL string
}

var (
	_ app.Store       = (*Store)(nil)
	_ app.PlayerStore = (*Store)(nil)
)

// Open connects to the database cfg names (PostgreSQL if cfg.DatabaseURL is
// set, else the SQLite file cfg.SQLitePath, default "solitaire.db"),
// applies any pending migrations, and returns the store. Errors:
// "persistence: open ..." when the database cannot be reached or opened,
// "persistence: migrate: ..." when a migration fails.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	s, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Migrate connects to the database cfg names, applies the pending
// migrations of package migrations, and disconnects. Open does the same
// before returning; Migrate is for a separate `migrate` command.
func Migrate(ctx context.Context, cfg Config) error {
	s, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.migrate(ctx)
}

// migrate applies the pending migrations on Config.MigrateURL if set,
// else on the store's own pool (see Config.MigrateURL).
func (s *Store) migrate(ctx context.Context) error {
	if s.migrateURL == "" {
		return migrate(ctx, s.sqlDB, s.dialect, !s.pooled, s.log)
	}
	db, _, pooled, err := postgresPool(ctx, s.migrateURL, ExecModeAuto)
	if err != nil {
		return fmt.Errorf("persistence: migrate: open MigrateURL: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	return migrate(ctx, db, s.dialect, !pooled, s.log)
}

// Close releases the database connections. The store is unusable after.
func (s *Store) Close() error {
	s.appender.close()
	s.snapshots.close() // after the appender, which queues snapshots
	s.notifier.close()
	if s.replica.db != nil {
		if db, err := s.replica.db.DB(); err == nil {
			db.Close()
		}
	}
	if err := s.sqlDB.Close(); err != nil {
		return fmt.Errorf("persistence: close: %w", err)
	}
	return nil
}

// Ping reports whether the database answers (readiness: GET /readyz).
// Errors: ErrUnavailable (wrapped) when it does not.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.sqlDB.PingContext(ctx); err != nil {
		return wrap("ping", err)
	}
	return nil
}

// Dialect is "postgres" or "sqlite" (DialectPostgres, DialectSQLite).
func (s *Store) Dialect() string { return s.dialect }

// DB is the underlying connection pool, for tests and maintenance tools
// (the conformance suite tampers with rows through it). Application code
// uses the Store's methods. On SQLite the pool has a single connection:
// do not hold a *sql.Conn or transaction from it while calling the Store.
func (s *Store) DB() *sql.DB { return s.sqlDB }

func connect(ctx context.Context, cfg Config) (*Store, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	every := cfg.SnapshotEvery
	if every < 0 {
		every = DefaultSnapshotEvery
	}
	gcfg := &gorm.Config{
		Logger:                 newGormLogger(log),
		SkipDefaultTransaction: true,
		DisableAutomaticPing:   true,
	}
	s := &Store{snapshotEvery: every, log: log, cache: newStateCache(cfg.StateCacheBytes),
		listenURL: cfg.ListenURL, migrateURL: cfg.MigrateURL}
	var err error
	if cfg.DatabaseURL != "" {
		s.dialect = DialectPostgres
		if !ValidExecMode(cfg.ExecMode) {
			return nil, fmt.Errorf("persistence: open postgres: unknown exec mode %q", cfg.ExecMode)
		}
		pool, pcfg, pooled, err := postgresPool(ctx, cfg.DatabaseURL, cfg.ExecMode)
		if err != nil {
			return nil, fmt.Errorf("persistence: open postgres: %w", err)
		}
		if hostCount(&pcfg.Config) > 1 && pcfg.ValidateConnect == nil {
			log.Warn("persistence: DATABASE_URL lists several hosts and no target_session_attrs: " +
				"connections may be made to a standby, where every write fails (503); " +
				"add target_session_attrs=read-write to the URL")
		}
		s.pooled = pooled
		if pooled {
			log.Info("persistence: a connection pooler is in front of the database: statements unprepared (cache_describe)",
				"listen_url_set", cfg.ListenURL != "", "migrate_url_set", cfg.MigrateURL != "")
		}
		s.db, err = gorm.Open(postgres.New(postgres.Config{Conn: pool}), gcfg)
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("persistence: open postgres: %w", err)
		}
		if cfg.ReadURL != "" {
			rpool, _, _, err := postgresPool(ctx, cfg.ReadURL, cfg.ExecMode)
			if err == nil {
				s.replica.db, err = gorm.Open(postgres.New(postgres.Config{Conn: rpool}), gcfg)
				if err != nil {
					rpool.Close()
				}
			}
			if err != nil {
				pool.Close()
				return nil, fmt.Errorf("persistence: open the read replica: %w", err)
			}
			rpool.SetMaxOpenConns(max(cfg.MaxConns, DefaultMaxConns))
			rpool.SetConnMaxIdleTime(postgresMaxIdle)
		}
	} else {
		if cfg.ListenURL != "" || cfg.MigrateURL != "" || cfg.ReadURL != "" || (cfg.ExecMode != "" && cfg.ExecMode != ExecModeAuto) {
			return nil, errNoPostgres
		}
		s.dialect = DialectSQLite
		path := cfg.SQLitePath
		if path == "" {
			path = DefaultSQLitePath
		}
		if strings.ContainsRune(path, '?') {
			return nil, fmt.Errorf("persistence: open sqlite: path %q contains '?'", path)
		}
		s.db, err = gorm.Open(sqlite.Open(path+sqliteParams), gcfg)
		if err != nil {
			return nil, fmt.Errorf("persistence: open sqlite %s: %w", path, err)
		}
	}
	s.sqlDB, err = s.db.DB()
	if err != nil {
		return nil, fmt.Errorf("persistence: open %s: %w", s.dialect, err)
	}
	if s.dialect == DialectSQLite {
		// One connection: every transaction, read or write, takes turns, so
		// concurrent appenders in this process never see SQLITE_BUSY and the
		// conditional update decides races exactly as on PostgreSQL.
		s.sqlDB.SetMaxOpenConns(1)
		s.sqlDB.SetMaxIdleConns(1)
		s.sqlDB.SetConnMaxLifetime(0)
		s.sqlDB.SetConnMaxIdleTime(0)
	} else {
		conns := DefaultMaxConns
		if cfg.MaxConns > 0 {
			conns = cfg.MaxConns
		}
		s.sqlDB.SetMaxOpenConns(conns)
		s.sqlDB.SetMaxIdleConns(conns)
		s.sqlDB.SetConnMaxIdleTime(postgresMaxIdle)
	}
	if err := s.sqlDB.PingContext(ctx); err != nil {
		s.sqlDB.Close()
		return nil, fmt.Errorf("persistence: open %s: %w", s.dialect, err)
	}
	return s, nil
}

// sqliteParams are the connection settings of the embedded database:
//   - WAL lets a second process (a migrate command, a backup) read while
//     the server writes. synchronous NORMAL: a commit is written to the
//     WAL file before it is acknowledged, so it survives a crash or kill
//     of the server (TestCrashRetries), but the WAL is synced only at
//     checkpoints, so a power loss or an operating-system crash may lose
//     the moves acknowledged since the last checkpoint (the database stays
//     consistent: whole transactions are lost, never parts). FULL would
//     sync every commit (README "Configuration": the cost, measured).
//   - busy_timeout makes another process's lock a wait, not an error.
//   - _txlock=immediate takes the write lock at BEGIN, so a transaction
//     never fails half-way upgrading a read lock.
//   - foreign_keys: events and snapshots must belong to a game.
//   - _stmt_cache_size: the driver keeps up to 64 prepared statements per
//     connection, keyed by their text, so a move's statements are not
//     parsed and planned again each time (parsing is most of the SQLite
//     engine's work per move without it: BENCHMARKS.md "SQLite"). A
//     schema change (a migration) makes SQLite prepare a cached statement
//     anew.
//
// The names are github.com/mattn/go-sqlite3's, which runs each pragma on
// every new connection.
const sqliteParams = "?_busy_timeout=10000&_journal_mode=WAL" +
	"&_synchronous=NORMAL&_foreign_keys=1&_txlock=immediate&_stmt_cache_size=64"
