package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// DueFinder finds the games a sweep must expire (R5.3). The event store
// implements it next to Store; Games.ExpireDue uses it when Games.Store
// does.
type DueFinder interface {
	// DueForExpiry returns the ids of up to limit games in progress whose
	// deadline (State.Deadline) is at or before now, earliest first.
	DueForExpiry(ctx context.Context, now time.Time, limit int) ([]string, error)
}

// ClosingFinder finds the games a sweep must close: games still in
// progress when the competition they belong to closed (a duel past its
// deadline, a daily deal after its UTC day). Games.CloseDue uses it when
// Games.Store implements it.
type ClosingFinder interface {
	// DueForClosing returns the ids of up to limit such games.
	DueForClosing(ctx context.Context, now time.Time, limit int) ([]string, error)
}

// SweepBatch is how many games one query of a sweep asks for.
const SweepBatch = 100

// ErrNoFinder: Games.Store does not implement the finder a sweep needs
// (DueFinder for ExpireDue, ClosingFinder for CloseDue).
var ErrNoFinder = errors.New("domain: the store cannot find due games")

// Sweep is one round of the background sweeper: ExpireDue, then CloseDue,
// both at now. It returns how many games each ended. Run it every few
// seconds, so rankings and statistics are right even for games nobody
// touches again (a client that disappears mid-game).
func (g *Games) Sweep(ctx context.Context, now time.Time) (expired, closed int, err error) {
	expired, err1 := g.ExpireDue(ctx, now)
	closed, err2 := g.CloseDue(ctx, now)
	return expired, closed, errors.Join(err1, err2)
}

// ExpireDue records the expiry (R5.3) of every game in progress whose time
// limit ran out at or before now, as reading or moving in it would
// (domain.Expire): one game_expired event each, the score as it was at the
// deadline. A game that a concurrent request changes meanwhile is
// re-examined, up to Retries times; one still contended is left for the
// next sweep. It returns how many games it expired. Errors: ErrNoFinder if
// Store is not a DueFinder; otherwise the finder's or the store's, joined,
// after the other games were still tried.
func (g *Games) ExpireDue(ctx context.Context, now time.Time) (int, error) {
	f, ok := g.Store.(DueFinder)
	if !ok {
		return 0, ErrNoFinder
	}
	return g.sweep(ctx, now, f.DueForExpiry, func(id string) (bool, error) { return g.expireOne(ctx, id, now) })
}

// CloseDue ends every game still in progress whose competition closed at
// or before now (ClosingFinder): the server resigns it on its owner's
// behalf (R2.7; a game already past its own time limit expires instead,
// R5.3), at the time of Now. Until then a duel cannot end nor a daily deal
// be revealed without showing a running game its own cards (R6.4). It
// returns how many games it ended. Errors: ErrNoFinder if Store is not a
// ClosingFinder; otherwise the finder's or the store's, joined, after the
// other games were still tried.
func (g *Games) CloseDue(ctx context.Context, now time.Time) (int, error) {
	f, ok := g.Store.(ClosingFinder)
	if !ok {
		return 0, ErrNoFinder
	}
	return g.sweep(ctx, now, f.DueForClosing, func(id string) (bool, error) { return g.CloseGame(ctx, id) })
}

// sweep ends the games find lists, batch after batch, until a batch is
// short or ends nothing (a game that cannot be ended must not loop).
func (g *Games) sweep(ctx context.Context, now time.Time,
	find func(context.Context, time.Time, int) ([]string, error), end func(id string) (bool, error)) (int, error) {
	total := 0
	var errs []error
	for {
		ids, err := find(ctx, now, SweepBatch)
		if err != nil {
			return total, errors.Join(append(errs, err)...)
		}
		n := 0
		for _, id := range ids {
			if ctx.Err() != nil {
				return total + n, errors.Join(append(errs, ctx.Err())...)
			}
			ok, err := end(id)
			if err != nil {
				errs = append(errs, fmt.Errorf("game %s: %w", id, err))
			}
			if ok {
				n++
			}
		}
		total += n
		if len(ids) < SweepBatch || n == 0 {
			return total, errors.Join(errs...)
		}
	}
}

// expireOne appends game id's expiry if it is due at now; false if it is
// not (any more), or if concurrent writers won every retry.
func (g *Games) expireOne(ctx context.Context, id string, now time.Time) (bool, error) {
	for attempt := 0; attempt <= g.retries(); attempt++ {
		_, s, err := g.Store.Load(ctx, id)
		if errors.Is(err, domain.ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		ev := domain.Expire(s, now)
		if ev == nil {
			return false, nil
		}
		v := s.Version // read before applied advances s (argument order is unspecified)
		_, err = g.Store.Append(ctx, id, v, ev, applied(s, ev), nil)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, domain.ErrConflict) {
			return false, err
		}
	}
	return false, nil
}

// CloseGame ends game id if it is still in progress: the server resigns it
// on its owner's behalf (R2.7), or records its expiry if its own time limit
// has run out (R5.3). It is for a game whose competition has closed (a
// duel past its deadline, a daily deal after its day); the caller decides
// that. It reports whether it ended the game (false: it had already
// ended). Errors: domain.ErrNotFound, domain.ErrConflict after repeated lost races, or
// the store's.
func (g *Games) CloseGame(ctx context.Context, id string) (bool, error) {
	game, s, err := g.Store.Load(ctx, id)
	if err != nil {
		return false, err
	}
	if s.Status.Ended() {
		return false, nil
	}
	_, _, _, err = g.Play(ctx, game.Owner, id, domain.Move{Type: domain.MoveResign}, -1, nil)
	switch {
	case err == nil, errors.Is(err, domain.ErrTimeExpired):
		return true, nil // resigned, or expired on the way (Play appended it)
	case errors.Is(err, domain.ErrGameOver):
		return false, nil // a racing request ended it first
	}
	return false, err
}

func (g *Games) retries() int {
	if g.Retries <= 0 {
		return 3
	}
	return g.Retries
}
