package persistence

import (
	"context"
	"database/sql"
	"errors"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// CreatePlayer stores p. Errors: domain.ErrConflict if p.ID or
// p.TokenHash is already stored; "persistence: create player: ..." for an
// empty id or token hash and for database failures.
func (s *Store) CreatePlayer(ctx context.Context, p *app.Player) error {
	if p == nil || p.ID == "" || len(p.TokenHash) == 0 {
		return errors.New("persistence: create player: missing id or token hash")
	}
	err := s.db.WithContext(ctx).Exec(`INSERT INTO players (id, name, token_hash, created_at) VALUES (?, ?, ?, ?)`,
		p.ID, p.Name, p.TokenHash, millis(p.CreatedAt)).Error
	return wrap("create player", err)
}

// PlayerByTokenHash returns the player whose token hashes to hash (the
// SHA-256 of the bearer token). Errors: domain.ErrNotFound.
func (s *Store) PlayerByTokenHash(ctx context.Context, hash []byte) (*app.Player, error) {
	var p app.Player
	var created int64
	err := s.db.WithContext(ctx).Raw(`SELECT id, name, token_hash, created_at FROM players WHERE token_hash = ?`,
		nonNil(hash)).Row().Scan(&p.ID, &p.Name, &p.TokenHash, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, wrap("player by token", err)
	}
	p.CreatedAt = fromMillis(created)
	return &p, nil
}
