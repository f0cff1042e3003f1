// Package apistore adapts persistence.Store's idempotency records to
// api.IdempotencyStore, which package api declares in its own types (api
// does not import persistence). Everything else persistence implements
// directly: domain.Store, domain.PlayerStore, domain.CompetitionStore and
// api.StatsStore. The server (cmd/solitaire-server) and the api tests wire
// it.
package apistore

import (
	"context"
	"time"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/persistence"
)

// Idempotency is s as an api.Config.Idempotency store: the idempotency
// records of persistence (idempotency.go) in api's types.
func Idempotency(s *persistence.Store) api.IdempotencyStore { return idempotency{s} }

type idempotency struct{ s *persistence.Store }

// GetIdempotency is persistence.Store.GetIdempotency in api's types.
func (a idempotency) GetIdempotency(ctx context.Context, owner, key string, now time.Time) (*api.IdempotencyRecord, error) {
	r, err := a.s.GetIdempotency(ctx, owner, key, now)
	if err != nil {
		return nil, err
	}
	out := api.IdempotencyRecord(*r)
	return &out, nil
}

// PutIdempotency is persistence.Store.PutIdempotency in api's types.
func (a idempotency) PutIdempotency(ctx context.Context, r api.IdempotencyRecord) error {
	return a.s.PutIdempotency(ctx, persistence.IdempotencyRecord(r))
}
