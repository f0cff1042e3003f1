package persistence

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// The query exec modes of Config.ExecMode (pgx's names, as its URL
// parameter default_query_exec_mode takes them). ExecModeAuto, the
// default, is ExecModeCacheStatement on a direct connection and
// ExecModeCacheDescribe behind a connection pooler (detectPooler).
//
// In transaction pooling (PgBouncer pool_mode=transaction, before 1.21's
// max_prepared_statements) consecutive statements of one client run on
// different server connections, so pgx's named prepared statements
// (cache_statement) fail with `prepared statement "stmtcache_…" already
// exists` or `does not exist`, and describe_exec's unnamed statement,
// described in one round trip and bound in the next, is bound on another
// connection (`bind message supplies 2 parameters, but prepared statement
// "" requires 1`). cache_describe sends each statement unnamed, parsed,
// bound and executed in one round trip with the parameter types the
// server described once per client connection: correct there, and still
// one round trip (the server plans each statement anew). exec (types
// guessed from the Go values) and simple_protocol (values interpolated by
// the client) passed the same test (TestBehindPgBouncer, RELIABILITY.md)
// but trust pgx's guesses over the server's types.
const (
	ExecModeAuto           = "auto"
	ExecModeCacheStatement = "cache_statement"
	ExecModeCacheDescribe  = "cache_describe"
	ExecModeDescribeExec   = "describe_exec"
	ExecModeExec           = "exec"
	ExecModeSimpleProtocol = "simple_protocol"
)

// execModes maps Config.ExecMode's values to pgx's modes.
var execModes = map[string]pgx.QueryExecMode{
	ExecModeCacheStatement: pgx.QueryExecModeCacheStatement,
	ExecModeCacheDescribe:  pgx.QueryExecModeCacheDescribe,
	ExecModeDescribeExec:   pgx.QueryExecModeDescribeExec,
	ExecModeExec:           pgx.QueryExecModeExec,
	ExecModeSimpleProtocol: pgx.QueryExecModeSimpleProtocol,
}

// ValidExecMode reports whether mode is "" or one of the ExecMode*
// values.
func ValidExecMode(mode string) bool {
	_, ok := execModes[mode]
	return ok || mode == "" || mode == ExecModeAuto
}

// DefaultConnectTimeout bounds each attempt to open a PostgreSQL
// connection (each host of a multi-host URL) when the URL sets no
// connect_timeout.
const DefaultConnectTimeout = 10 * time.Second

// postgresPool is the connection pool of a PostgreSQL URL in the exec mode
// asked for (ExecModeAuto or "": detected), and whether a pooler was
// detected between it and the server (false when a mode was asked for).
// A default_query_exec_mode in the URL itself counts as asked for.
func postgresPool(ctx context.Context, url, mode string) (*sql.DB, *pgx.ConnConfig, bool, error) {
	pcfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, nil, false, err
	}
	dropReadOnly(&pcfg.Config)
	if pcfg.ConnectTimeout == 0 {
		// Without a bound, a dial to a host that accepts TCP but never
		// answers (a frozen primary, a stuck pooler) or drops packets (a
		// partition) waits for the OS, minutes; a new connection is what
		// an append needs right after its old one was cut (batchTimeout).
		pcfg.ConnectTimeout = DefaultConnectTimeout
	}
	pooled := false
	switch {
	case mode != "" && mode != ExecModeAuto:
		m, ok := execModes[mode]
		if !ok {
			return nil, nil, false, fmt.Errorf("unknown exec mode %q", mode)
		}
		pcfg.DefaultQueryExecMode = m
	case strings.Contains(url, "default_query_exec_mode="):
	default:
		pooled, err = detectPooler(ctx, pcfg)
		if err != nil {
			return nil, nil, false, err
		}
		if pooled {
			pcfg.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
		}
	}
	return stdlib.OpenDB(*pcfg), pcfg, pooled, nil
}

// detectPooler reports whether something stands between this client and
// the PostgreSQL server of cfg: the address this client's socket reached
// is not the address the server's backend was reached at
// (inet_server_addr, inet_server_port). A direct TCP connection has the
// two equal, a direct Unix-socket one has no server address; a pooler's
// connection reaches the pooler's address. A NAT or a container's port
// mapping looks like a pooler too, which costs only the plan cache; a
// pooler reached over a Unix socket that itself uses one to the server
// looks direct: set Config.ExecMode then.
func detectPooler(ctx context.Context, cfg *pgx.ConnConfig) (bool, error) {
	probe := cfg.Copy()
	probe.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol // no prepared statement
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, probe)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	var addr, port *string
	if err := conn.QueryRow(ctx, `SELECT host(inet_server_addr()), inet_server_port()::text`).Scan(&addr, &port); err != nil {
		return false, err
	}
	remote := conn.PgConn().Conn().RemoteAddr()
	tcp, isTCP := remote.(*net.TCPAddr)
	switch {
	case addr == nil || port == nil:
		return isTCP, nil // the backend is on a Unix socket: direct only if we are too
	case !isTCP:
		return true, nil
	}
	ip := net.ParseIP(*addr)
	return ip == nil || !ip.Equal(tcp.IP) || *port != fmt.Sprint(tcp.Port), nil
}

// dropReadOnly makes connections of cfg close themselves when the server
// answers SQLSTATE 25006 (read_only_sql_transaction), besides on FATAL
// errors as pgx's default handler does. Such a connection reached a
// server that takes no writes: a standby, or a primary being demoted in a
// failover or switchover. Closed, it leaves the pool (database/sql drops
// a closed connection), and the next one is made anew, to the host that
// is primary by then when the URL lists several hosts with
// target_session_attrs=read-write. Kept, it would send the writes that
// follow to the same read-only server.
func dropReadOnly(cfg *pgconn.Config) {
	prev := cfg.OnPgError
	cfg.OnPgError = func(c *pgconn.PgConn, pe *pgconn.PgError) bool {
		if pe.Code == pgReadOnlyTransaction {
			return false
		}
		return prev == nil || prev(c, pe)
	}
}

// hostCount is the number of distinct hosts (host and port) a connection
// of cfg may be made to: the URL's hosts, counted once each, whatever
// TLS fallbacks sslmode=prefer adds.
func hostCount(cfg *pgconn.Config) int {
	seen := map[string]bool{net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port)): true}
	for _, f := range cfg.Fallbacks {
		seen[net.JoinHostPort(f.Host, fmt.Sprint(f.Port))] = true
	}
	return len(seen)
}

// errNoPostgres is returned for a Postgres-only setting on SQLite.
var errNoPostgres = errors.New("persistence: ListenURL, MigrateURL, ReadURL and ExecMode need DatabaseURL")
