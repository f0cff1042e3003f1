package persistence

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/openpatience/solitaire/domain"
)

// sqliteErr stands in for the driver's error type (matched by its Code).
type sqliteErr int

func (e sqliteErr) Error() string { return fmt.Sprintf("sqlite error %d", int(e)) }
func (e sqliteErr) Code() int     { return int(e) }

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
		{"sqlite busy", sqliteErr(5), true},
		{"sqlite busy snapshot", sqliteErr(5 | 2<<8), true},
		{"already wrapped", fmt.Errorf("x: %w", ErrUnavailable), true},
		{"cancelled by the caller", fmt.Errorf("query: %w", context.Canceled), false},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"bad text", &pgconn.PgError{Code: "22021"}, false},
		{"sqlite constraint", sqliteErr(2067), false},
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
