package persistence

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"

	"github.com/openpatience/solitaire/domain"
)

// TestUnavailable pins which failures are an outage (ErrUnavailable, the
// API's 503) and which are not.
func TestUnavailable(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", dial, true},
		{"connect error", &pgconn.ConnectError{}, true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), true},
		{"EOF mid-query", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), true},
		{"bad connection", driver.ErrBadConn, true},
		{"connection done", sql.ErrConnDone, true},
		{"deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), true},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"cannot connect now", &pgconn.PgError{Code: "57P03"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"read-only server", &pgconn.PgError{Code: "25006", Severity: "ERROR"}, true},
		{"sqlite busy", sqlite3.Error{Code: sqlite3.ErrBusy}, true},
		{"sqlite busy snapshot", fmt.Errorf("exec: %w", sqlite3.Error{Code: sqlite3.ErrBusy, ExtendedCode: sqlite3.ErrBusySnapshot}), true},
		{"sqlite locked", sqlite3.Error{Code: sqlite3.ErrLocked, ExtendedCode: sqlite3.ErrLocked.Extend(1)}, true},
		{"already wrapped", fmt.Errorf("x: %w", ErrUnavailable), true},
		{"cancelled by the caller", fmt.Errorf("query: %w", context.Canceled), false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"bad text", &pgconn.PgError{Code: "22021"}, false},
		{"sqlite constraint", sqlite3.Error{Code: sqlite3.ErrConstraint, ExtendedCode: sqlite3.ErrConstraintUnique}, false},
		{"no rows", sql.ErrNoRows, false},
		{"not found", domain.ErrNotFound, false},
		{"other", errors.New("persistence: something"), false},
	} {
		if got := isUnavailable(tc.err); got != tc.want {
			t.Errorf("%s: isUnavailable = %v, want %v", tc.name, got, tc.want)
		}
		w := wrap("op", tc.err)
		if got := errors.Is(w, ErrUnavailable); got != tc.want {
			t.Errorf("%s: wrap is ErrUnavailable = %v, want %v", tc.name, got, tc.want)
		}
		if tc.want && !errors.Is(w, tc.err) {
			t.Errorf("%s: wrap loses the driver's error: %v", tc.name, w)
		}
	}
	var u interface{ Unavailable() bool }
	if !errors.As(wrap("load", dial), &u) || !u.Unavailable() {
		t.Errorf("a wrapped outage does not say Unavailable() (the API's 503 test)")
	}
	// A race is a conflict, not an outage.
	if err := wrap("append", &pgconn.PgError{Code: "23505"}); !errors.Is(err, domain.ErrConflict) || errors.Is(err, ErrUnavailable) {
		t.Errorf("unique violation: %v", err)
	}
}

// TestSQLiteErrorsFromTheDriver: the driver's own errors, not stand-ins,
// are classified as the store needs: another connection's write lock held
// past the busy timeout is an outage, a duplicate key is a conflict.
func TestSQLiteErrorsFromTheDriver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.db")
	open := func(params string) *sql.DB {
		db, err := sql.Open("sqlite3", path+params)
		if err != nil {
			t.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { db.Close() })
		return db
	}
	holder := open("?_journal_mode=WAL&_txlock=immediate")
	other := open("?_journal_mode=WAL&_txlock=immediate&_busy_timeout=1")
	if _, err := holder.ExecContext(t.Context(), `CREATE TABLE t (k INTEGER PRIMARY KEY, u TEXT UNIQUE)`); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.ExecContext(t.Context(), `INSERT INTO t VALUES (1, 'a')`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`INSERT INTO t VALUES (1, 'b')`, `INSERT INTO t VALUES (2, 'a')`} {
		_, err := holder.ExecContext(t.Context(), q)
		if err == nil || !isConflict(err) || isUnavailable(err) {
			t.Errorf("%s: %v: want a conflict", q, err)
		}
		if w := wrap("op", err); !errors.Is(w, domain.ErrConflict) {
			t.Errorf("%s: wrap = %v, want ErrConflict", q, w)
		}
	}
	tx, err := holder.BeginTx(t.Context(), nil) // BEGIN IMMEDIATE: the write lock
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	_, err = other.ExecContext(t.Context(), `INSERT INTO t VALUES (3, 'c')`)
	if err == nil || !isUnavailable(err) || isConflict(err) {
		t.Fatalf("write under another's lock: %v (code %d): want an outage", err, sqliteCode(err))
	}
	if w := wrap("op", err); !errors.Is(w, ErrUnavailable) || !errors.Is(w, err) {
		t.Errorf("wrap = %v, want ErrUnavailable and the driver's error", w)
	}
}
