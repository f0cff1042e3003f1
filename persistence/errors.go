package persistence

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/openpatience/solitaire/domain"
)

// SQLite extended result codes (sqlite.org/rescode.html).
const (
	sqliteConstraintPrimaryKey = 1555
	sqliteConstraintUnique     = 2067
)

// PostgreSQL SQLSTATE codes (postgresql.org/docs/current/errcodes-appendix.html).
const (
	pgUniqueViolation      = "23505"
	pgSerializationFailure = "40001"
	pgDeadlockDetected     = "40P01"
)

// isConflict reports whether err is the database refusing a write because
// another one got there first: a unique or primary key violation on either
// dialect, or a serialization failure on PostgreSQL.
func isConflict(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case pgUniqueViolation, pgSerializationFailure, pgDeadlockDetected:
			return true
		}
		return false
	}
	switch sqliteCode(err) {
	case sqliteConstraintPrimaryKey, sqliteConstraintUnique:
		return true
	}
	return false
}

// wrap turns a database error into what callers may see: ErrNotFound and
// ErrConflict pass through, races become domain.ErrConflict, an outage
// (isUnavailable) is wrapped with ErrUnavailable as well as the driver's
// error, anything else is wrapped as "persistence: op: ..." (still
// matchable with errors.Is).
func wrap(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, domain.ErrNotFound), errors.Is(err, domain.ErrConflict):
		return err
	case isConflict(err):
		return fmt.Errorf("persistence: %s: %w", op, domain.ErrConflict)
	case errors.Is(err, ErrUnavailable):
		return err
	case isUnavailable(err):
		return fmt.Errorf("persistence: %s: %w: %w", op, ErrUnavailable, err)
	}
	return fmt.Errorf("persistence: %s: %w", op, err)
}
