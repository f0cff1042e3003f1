// Package apistore adapts persistence.Store to the store interfaces of
// package api, which does not import persistence: the records have the
// same fields on both sides and are converted one to one. The server
// (cmd/solitaire-server) and the api tests wire the store through it.
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

// Competitions is s as an api.Config.Competitions store: duel and daily
// deal records converted to api's, every other method s's own.
func Competitions(s *persistence.Store) api.CompetitionStore { return competitions{s} }

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

type competitions struct{ *persistence.Store }

// CreateDuel is persistence.Store.CreateDuel in api's types.
func (c competitions) CreateDuel(ctx context.Context, d *api.DuelRecord) error {
	r := persistence.Duel(*d)
	return c.Store.CreateDuel(ctx, &r)
}

// Duel is persistence.Store.Duel in api's types.
func (c competitions) Duel(ctx context.Context, id string) (*api.DuelRecord, error) {
	d, err := c.Store.Duel(ctx, id)
	if err != nil {
		return nil, err
	}
	out := api.DuelRecord(*d)
	return &out, nil
}

// EnsureDailyDeal is persistence.Store.EnsureDailyDeal in api's types.
func (c competitions) EnsureDailyDeal(ctx context.Context, d api.DailyDealRecord) (*api.DailyDealRecord, error) {
	r, err := c.Store.EnsureDailyDeal(ctx, persistence.DailyDeal(d))
	if err != nil {
		return nil, err
	}
	out := api.DailyDealRecord(*r)
	return &out, nil
}

// FindDailyDeal is persistence.Store.FindDailyDeal in api's types.
func (c competitions) FindDailyDeal(ctx context.Context, variant, day string) (*api.DailyDealRecord, error) {
	r, err := c.Store.FindDailyDeal(ctx, variant, day)
	if err != nil {
		return nil, err
	}
	out := api.DailyDealRecord(*r)
	return &out, nil
}
