package persistence

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/openpatience/solitaire/domain"
)

// IdempotencyTTL is the shortest time an idempotency key is kept (API.md
// "Retries": at least 24 h).
const IdempotencyTTL = 24 * time.Hour

// IdempotencyRecord is the first response to a request that carried an
// Idempotency-Key (API.md "Retries"): for Owner (a player id) and Key (the
// header, up to 255 characters), a Fingerprint of the request (e.g. the
// SHA-256 of method, path and body) to tell a retry from a reuse, and the
// Status code and Body answered. Kept from CreatedAt until ExpiresAt.
type IdempotencyRecord struct {
	Owner, Key  string
	Fingerprint []byte
	Status      int
	Body        []byte
	CreatedAt   time.Time // UTC, stored in milliseconds
	ExpiresAt   time.Time // UTC, stored in milliseconds; see PutIdempotency
}

// GetIdempotency returns the record of (owner, key) if it has not expired
// at now (ExpiresAt after now). Errors: domain.ErrNotFound when absent or
// expired.
func (s *Store) GetIdempotency(ctx context.Context, owner, key string, now time.Time) (*IdempotencyRecord, error) {
	r := IdempotencyRecord{Owner: owner, Key: key}
	var created, expires int64
	err := s.db.WithContext(ctx).Raw(`SELECT fingerprint, status, body, created_at, expires_at
		FROM idempotency_keys WHERE owner = ? AND "key" = ? AND expires_at > ?`, owner, key, millis(now)).
		Row().Scan(&r.Fingerprint, &r.Status, &r.Body, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, wrap("get idempotency key", err)
	}
	r.CreatedAt, r.ExpiresAt = fromMillis(created), fromMillis(expires)
	return &r, nil
}

// PutIdempotency stores r. A zero CreatedAt means now; ExpiresAt is raised
// to at least CreatedAt + IdempotencyTTL (so a zero one means exactly
// that). A record of the same (owner, key) that has expired by CreatedAt
// is replaced. Errors: domain.ErrConflict if (owner, key) is stored and
// not expired (a racing request with the same key got there first).
func (s *Store) PutIdempotency(ctx context.Context, r IdempotencyRecord) error {
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now()
	}
	if floor := r.CreatedAt.Add(IdempotencyTTL); r.ExpiresAt.Before(floor) {
		r.ExpiresAt = floor
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Exec(`DELETE FROM idempotency_keys WHERE owner = ? AND "key" = ? AND expires_at <= ?`,
			r.Owner, r.Key, millis(r.CreatedAt)).Error
		if err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO idempotency_keys (owner, "key", fingerprint, status, body, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, r.Owner, r.Key, nonNil(r.Fingerprint), r.Status, nonNil(r.Body),
			millis(r.CreatedAt), millis(r.ExpiresAt)).Error
	})
	return wrap("put idempotency key", err)
}

// PurgeIdempotency deletes the records expired at now (ExpiresAt at or
// before now) and returns how many it deleted. Run it periodically.
func (s *Store) PurgeIdempotency(ctx context.Context, now time.Time) (int64, error) {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM idempotency_keys WHERE expires_at <= ?`, millis(now))
	if res.Error != nil {
		return 0, wrap("purge idempotency keys", res.Error)
	}
	return res.RowsAffected, nil
}
