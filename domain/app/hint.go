package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/openpatience/solitaire/domain"
)

// ErrHintsNotAllowed: hints are refused on shared deals (R7.3, R6.6): a
// duel's or a daily deal's game. Nothing was written.
var ErrHintsNotAllowed = errors.New("hints are not allowed on a shared deal (a duel or a daily deal)")

// ErrGameInProgress: the view needs a game that has ended (R7.4 analysis).
var ErrGameInProgress = errors.New("the game is still in progress")

// ErrSealed: the game is on a shared deal whose competition has not closed
// (R6.6); what the view shows would reveal the deal.
var ErrSealed = errors.New("the game is on a shared deal that stays secret until its competition closes")

// Advisor finds a hint for state s of game (the solver, which package
// app does not know). It may keep s; it must not change it. An error
// is the request's answer (the solver is busy, ctx is done).
type Advisor func(ctx context.Context, game *Game, s *domain.State) (domain.Hint, error)

// Hint asks advise for a hint on game id for caller, its owner, and
// appends it as a hint_given event (R7.3), which makes the game unranked
// from then on. It returns the game, the state after the event (the board
// unchanged; the store's from then on: read it, do not change it), the
// record of the event and the hint as recorded. A game
// past its deadline is expired first (R5.3), as a move would be.
//
// Errors: domain.ErrNotFound (no such game, or not the caller's),
// ErrHintsNotAllowed (a shared deal), *domain.MoveError with domain.ReasonGameOver
// (matches domain.ErrGameOver) for a game that has ended or domain.ReasonTimeExpired for
// one that just did, domain.ErrConflict after repeated lost races with moves,
// advise's errors, or the store's. On any error nothing was appended but
// the expiry.
func (g *Games) Hint(ctx context.Context, caller, id string, advise Advisor) (*Game, *domain.State, []domain.RecordedEvent, domain.Hint, error) {
	retries := g.Retries
	if retries <= 0 {
		retries = 3
	}
	for n := 0; ; n++ {
		game, s, err := g.Store.Load(ctx, id)
		if err != nil {
			return nil, nil, nil, domain.Hint{}, err
		}
		if game.Owner != caller {
			return nil, nil, nil, domain.Hint{}, domain.ErrNotFound
		}
		if game.CompetitionID != "" {
			return nil, nil, nil, domain.Hint{}, ErrHintsNotAllowed
		}
		now := g.Now()
		if ev := domain.Expire(s, now); ev != nil {
			v := s.Version
			if _, err := g.Store.Append(ctx, id, v, ev, applied(s, ev), nil); err != nil {
				if errors.Is(err, domain.ErrConflict) && n < retries {
					continue
				}
				return nil, nil, nil, domain.Hint{}, err
			}
			return nil, nil, nil, domain.Hint{}, &domain.MoveError{Reason: domain.ReasonTimeExpired, Detail: "the time limit has run out (R5.3)"}
		}
		if s.Status.Ended() {
			return nil, nil, nil, domain.Hint{}, &domain.MoveError{Reason: domain.ReasonGameOver,
				Detail: fmt.Sprintf("the game is %s: hints are for games in progress", s.Status)}
		}
		h, err := advise(ctx, game, s.Clone())
		if err != nil {
			return nil, nil, nil, domain.Hint{}, err
		}
		ev, h := domain.HintEvent(s, h, now)
		v := s.Version
		after := applied(s, []domain.Event{ev})
		recs, err := g.Store.Append(ctx, id, v, []domain.Event{ev}, after, nil)
		switch {
		case err == nil:
			game.project(after)
			return game, after.State, recs, h, nil
		case errors.Is(err, domain.ErrConflict) && n < retries:
			continue // a move came first: the hint is for a position gone
		}
		return nil, nil, nil, domain.Hint{}, err
	}
}

// EndedLog is the log of game id for an analysis (R7.4) by caller: the
// game and its events, decoded, once the game has ended and may be
// revealed. Errors: domain.ErrNotFound (no such game, or caller may not read it),
// ErrGameInProgress, ErrSealed (a shared deal before its competition
// closes, R6.6), a log that does not decode, or the store's.
func (g *Games) EndedLog(ctx context.Context, caller, id string) (*Game, []domain.Event, error) {
	game, s, err := g.Get(ctx, caller, id)
	if err != nil {
		return nil, nil, err
	}
	if !s.Status.Ended() {
		return nil, nil, ErrGameInProgress
	}
	reveal, _, err := g.Reveal(ctx, game)
	if err != nil {
		return nil, nil, err
	}
	if !reveal {
		return nil, nil, ErrSealed
	}
	recs, err := g.Store.Events(ctx, id, 0, s.Version)
	if err != nil {
		return nil, nil, err
	}
	evs := make([]domain.Event, len(recs))
	for i, r := range recs {
		if evs[i], err = domain.DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload); err != nil {
			return nil, nil, err
		}
	}
	return game, evs, nil
}
