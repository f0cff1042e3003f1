package persistence

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnavailable: the database could not be reached or dropped the
// connection (refused, reset, closed, shutting down, too many
// connections, locked for longer than the busy timeout), or the server
// reached is read-only (SQLSTATE 25006: a standby, or a primary being
// demoted in a failover or switchover; nothing was written). The store wraps it
// around such failures, together with the driver's error, so callers can
// answer "try again later" (the API's 503) with errors.Is. For a write it
// means the outcome is unknown: the transaction either committed whole or
// not at all (Append is one transaction), and a reader finds out which.
//
// The error also has a method Unavailable() bool that returns true, for
// callers that classify errors by behaviour without importing this package.
var ErrUnavailable error = unavailableError{}

// unavailableError is the type of ErrUnavailable.
type unavailableError struct{}

// Error is the sentinel's text.
func (unavailableError) Error() string { return "persistence: database unavailable" }

// Unavailable reports that the error means a database outage.
func (unavailableError) Unavailable() bool { return true }

// PostgreSQL SQLSTATE codes of a server that cannot serve right now
// (postgresql.org/docs/current/errcodes-appendix.html). Class 08,
// connection exception, counts whole.
const (
	pgConnectionExceptionClass = "08"
	pgTooManyConnections       = "53300"
	pgAdminShutdown            = "57P01"
	pgCrashShutdown            = "57P02"
	pgCannotConnectNow         = "57P03"
	// pgReadOnlyTransaction (read_only_sql_transaction) is a write sent
	// to a server that takes none: a hot standby, or a primary that a
	// failover manager (pg_auto_failover, Patroni) is demoting. The
	// primary is elsewhere or on its way: an outage, not a refusal.
	pgReadOnlyTransaction = "25006"
)

// SQLite primary result codes of a database locked by another process for
// longer than the busy timeout (sqlite.org/rescode.html).
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)

// isUnavailable reports whether err means the database is out of reach
// rather than that it refused the statement. A caller's cancelled context
// is not an outage (the caller went away); a deadline that ran out is (the
// database did not answer in time).
func isUnavailable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, ErrUnavailable) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case pgTooManyConnections, pgAdminShutdown, pgCrashShutdown, pgCannotConnectNow, pgReadOnlyTransaction:
			return true
		}
		return strings.HasPrefix(pe.Code, pgConnectionExceptionClass)
	}
	var (
		connect *pgconn.ConnectError
		netErr  net.Error
	)
	switch {
	case errors.As(err, &connect), errors.As(err, &netErr),
		errors.Is(err, driver.ErrBadConn), errors.Is(err, sql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, context.DeadlineExceeded),
		pgconn.Timeout(err):
		return true
	}
	// pgx reports a connection it has closed after a failure as "conn
	// closed" (an unexported type whose SafeToRetry is true: nothing was
	// sent, so nothing was written).
	if pgconn.SafeToRetry(err) {
		return true
	}
	switch sqliteCode(err) & 0xff {
	case sqliteBusy, sqliteLocked:
		return true
	}
	return false
}
