package persistence

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// IdempotencyTTL is the shortest time an idempotency key is kept (README
// "Limits": 24 h).
const IdempotencyTTL = 24 * time.Hour

// GetIdempotency returns the record of (owner, key) if it has not expired
// at now (ExpiresAt after now). A record that has expired is deleted, so
// that a receipt written with events (receiptSQL) may take its key.
// Errors: domain.ErrNotFound when absent or expired.
func (s *Store) GetIdempotency(ctx context.Context, owner, key string, now time.Time) (*app.IdempotencyRecord, error) {
	r := app.IdempotencyRecord{Owner: owner, Key: key}
	var created, expires int64
	db := s.db.WithContext(ctx)
	err := db.Raw(`SELECT fingerprint, status, body, created_at, expires_at, game_id, first_version, last_version
		FROM idempotency_keys WHERE owner = ? AND "key" = ?`, owner, key).
		Row().Scan(&r.Fingerprint, &r.Status, &r.Body, &created, &expires, &r.GameID, &r.FirstVersion, &r.LastVersion)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, wrap("get idempotency key", err)
	}
	if expires <= millis(now) {
		err := db.Exec(`DELETE FROM idempotency_keys WHERE owner = ? AND "key" = ? AND expires_at <= ?`,
			owner, key, millis(now)).Error
		if err != nil {
			return nil, wrap("get idempotency key", err)
		}
		return nil, domain.ErrNotFound
	}
	r.CreatedAt, r.ExpiresAt = fromMillis(created), fromMillis(expires)
	return &r, nil
}

// receiptSQL writes an app.Receipt (Append, Create) in the transaction of
// its events: a new row, or one replacing a record of the same key that
// has expired by the receipt's CreatedAt. It affects no row when the key
// is taken by a record still alive (app.ErrReceiptTaken).
const receiptSQL = `INSERT INTO idempotency_keys (owner, "key", fingerprint, status, body, created_at, expires_at,
		game_id, first_version, last_version) VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (owner, "key") DO UPDATE SET fingerprint = excluded.fingerprint, status = 0, body = excluded.body,
		created_at = excluded.created_at, expires_at = excluded.expires_at, game_id = excluded.game_id,
		first_version = excluded.first_version, last_version = excluded.last_version
	WHERE idempotency_keys.expires_at <= excluded.created_at`

// writeReceipt stores r in tx for game gameID's versions first..last.
// Errors: app.ErrReceiptTaken, or the database's.
func writeReceipt(tx *gorm.DB, r *app.Receipt, gameID string, first, last int) error {
	created, expires := receiptTimes(r)
	res := tx.Exec(receiptSQL, r.Owner, r.Key, nonNil(r.Fingerprint), []byte{}, created, expires, gameID, first, last)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return app.ErrReceiptTaken
	}
	return nil
}

// receiptTimes are r's CreatedAt (now if zero) and ExpiresAt (raised to
// at least IdempotencyTTL later) in milliseconds.
func receiptTimes(r *app.Receipt) (created, expires int64) {
	c := r.CreatedAt
	if c.IsZero() {
		c = time.Now()
	}
	e := r.ExpiresAt
	if floor := c.Add(IdempotencyTTL); e.Before(floor) {
		e = floor
	}
	return millis(c), millis(e)
}

// PutIdempotency stores r. A zero CreatedAt means now; ExpiresAt is raised
// to at least CreatedAt + IdempotencyTTL (so a zero one means exactly
// that). A record of the same (owner, key) that has expired by CreatedAt
// is replaced. Errors: domain.ErrConflict if (owner, key) is stored and
// not expired (a racing request with the same key got there first).
func (s *Store) PutIdempotency(ctx context.Context, r app.IdempotencyRecord) error {
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

// MaxIdempotencyKeysPerPlayer caps the idempotency records kept per
// player: beyond it, PurgeIdempotency deletes a player's oldest records
// before they expire. Ten thousand keys are more requests than a player
// sends in a day at the default rate limit of honest use; a client that
// sends more loses the retry guarantee of its oldest keys first (a retry
// of a deleted key is a new request), and the table stays bounded.
const MaxIdempotencyKeysPerPlayer = 10_000

// PurgeIdempotency deletes the records expired at now (ExpiresAt at or
// before now), then each player's oldest records beyond
// MaxIdempotencyKeysPerPlayer, and returns how many it deleted. Run it
// periodically (the server: every few minutes).
func (s *Store) PurgeIdempotency(ctx context.Context, now time.Time) (int64, error) {
	return s.PurgeIdempotencyBeyond(ctx, now, MaxIdempotencyKeysPerPlayer)
}

// PurgeIdempotencyBeyond is PurgeIdempotency with a cap of perPlayer
// records per owner (the newest by CreatedAt are kept; at least 1).
func (s *Store) PurgeIdempotencyBeyond(ctx context.Context, now time.Time, perPlayer int) (int64, error) {
	db := s.db.WithContext(ctx)
	res := db.Exec(`DELETE FROM idempotency_keys WHERE expires_at <= ?`, millis(now))
	if res.Error != nil {
		return 0, wrap("purge idempotency keys", res.Error)
	}
	n := res.RowsAffected
	res = db.Exec(`DELETE FROM idempotency_keys WHERE (owner, "key") IN (
		SELECT owner, "key" FROM (
			SELECT owner, "key", row_number() OVER (PARTITION BY owner ORDER BY created_at DESC, "key" DESC) AS rn
			FROM idempotency_keys
			WHERE owner IN (SELECT owner FROM idempotency_keys GROUP BY owner HAVING count(*) > ?)
		) AS ranked WHERE rn > ?)`, max(perPlayer, 1), max(perPlayer, 1))
	if res.Error != nil {
		return n, wrap("purge idempotency keys", res.Error)
	}
	return n + res.RowsAffected, nil
}
