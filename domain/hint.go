package domain

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Verdict is an answer about a position (R7.1): the solver's (package
// solver names these same values), a hint_given event's and the API's.
// Persisted and API words: never rename one.
type Verdict string

// The three verdicts of R7.1.
const (
	// VerdictWinnable: a line was found and replayed through Decide to a
	// win; a hint gives a move that keeps the position winnable.
	VerdictWinnable Verdict = "winnable"
	// VerdictUnwinnable: the search was exhaustive and found no win.
	VerdictUnwinnable Verdict = "unwinnable"
	// VerdictUnknown: the search's budget ran out first (or a line failed
	// its replay: a solver bug costs an unknown, never a false answer).
	VerdictUnknown Verdict = "unknown"
)

var hintVerdicts = map[Verdict]bool{VerdictWinnable: true, VerdictUnwinnable: true, VerdictUnknown: true}

// ErrHintsNotAllowed: hints are refused on shared deals (R7.3, R6.6): a
// duel's or a daily deal's game. Nothing was written.
var ErrHintsNotAllowed = errors.New("hints are not allowed on a shared deal (a duel or a daily deal)")

// ErrGameInProgress: the view needs a game that has ended (R7.4 analysis).
var ErrGameInProgress = errors.New("the game is still in progress")

// ErrSealed: the game is on a shared deal whose competition has not closed
// (R6.6); what the view shows would reveal the deal.
var ErrSealed = errors.New("the game is on a shared deal that stays secret until its competition closes")

// Hint is the answer to a hint request (R7.3): the verdict on the position
// and, only when it is winnable, one legal move after which it still is.
type Hint struct {
	Verdict Verdict
	Move    *Move // set exactly when Verdict is VerdictWinnable
}

// Advisor finds a hint for state s of game (the solver, which package
// domain does not know). It may keep s; it must not change it. An error
// is the request's answer (the solver is busy, ctx is done).
type Advisor func(ctx context.Context, game *Game, s *State) (Hint, error)

// HintEvent is the hint_given event of h on state s at instant now: not a
// move (it carries the number of the last command and is not undoable).
// A winnable hint whose move Decide refuses on s is recorded as unknown:
// a faulty advisor costs an unknown, never an illegal hint (R7.1).
func HintEvent(s *State, h Hint, now time.Time) (Event, Hint) {
	now = monotonic(s, now)
	if h.Verdict == VerdictWinnable {
		if h.Move == nil {
			h = Hint{Verdict: VerdictUnknown}
		} else if _, _, err := Decide(s, *h.Move, now); err != nil {
			h = Hint{Verdict: VerdictUnknown}
		}
	} else if !hintVerdicts[h.Verdict] {
		h = Hint{Verdict: VerdictUnknown}
	}
	if h.Verdict != VerdictWinnable {
		h.Move = nil
	}
	d := EventData{V: PayloadVersion, Move: s.Moves, Verdict: h.Verdict}
	if h.Move != nil {
		m := *h.Move
		d.Hint = &m
	}
	return Event{Version: s.Version + 1, Type: EventHintGiven, OccurredAt: now, Data: d}, h
}

// Hint asks advise for a hint on game id for caller, its owner, and
// appends it as a hint_given event (R7.3), which makes the game unranked
// from then on. It returns the game, the state after the event (the board
// unchanged), the record of the event and the hint as recorded. A game
// past its deadline is expired first (R5.3), as a move would be.
//
// Errors: ErrNotFound (no such game, or not the caller's),
// ErrHintsNotAllowed (a shared deal), *MoveError with ReasonGameOver
// (matches ErrGameOver) for a game that has ended or ReasonTimeExpired for
// one that just did, ErrConflict after repeated lost races with moves,
// advise's errors, or the store's. On any error nothing was appended but
// the expiry.
func (g *Games) Hint(ctx context.Context, caller, id string, advise Advisor) (*Game, *State, []RecordedEvent, Hint, error) {
	retries := g.Retries
	if retries <= 0 {
		retries = 3
	}
	for n := 0; ; n++ {
		game, s, err := g.Store.Load(ctx, id)
		if err != nil {
			return nil, nil, nil, Hint{}, err
		}
		if game.Owner != caller {
			return nil, nil, nil, Hint{}, ErrNotFound
		}
		if game.CompetitionID != "" {
			return nil, nil, nil, Hint{}, ErrHintsNotAllowed
		}
		now := g.Now()
		if ev := Expire(s, now); ev != nil {
			v := s.Version
			if _, err := g.Store.Append(ctx, id, v, ev, applied(s, ev), nil); err != nil {
				if errors.Is(err, ErrConflict) && n < retries {
					continue
				}
				return nil, nil, nil, Hint{}, err
			}
			return nil, nil, nil, Hint{}, &MoveError{Reason: ReasonTimeExpired, Detail: "the time limit has run out (R5.3)"}
		}
		if s.Status.Ended() {
			return nil, nil, nil, Hint{}, &MoveError{Reason: ReasonGameOver,
				Detail: fmt.Sprintf("the game is %s: hints are for games in progress", s.Status)}
		}
		h, err := advise(ctx, game, s.Clone())
		if err != nil {
			return nil, nil, nil, Hint{}, err
		}
		ev, h := HintEvent(s, h, now)
		v := s.Version
		after := applied(s, []Event{ev})
		recs, err := g.Store.Append(ctx, id, v, []Event{ev}, after, nil)
		switch {
		case err == nil:
			game.Project(after)
			return game, after, recs, h, nil
		case errors.Is(err, ErrConflict) && n < retries:
			continue // a move came first: the hint is for a position gone
		}
		return nil, nil, nil, Hint{}, err
	}
}

// EndedLog is the log of game id for an analysis (R7.4) by caller: the
// game and its events, decoded, once the game has ended and may be
// revealed. Errors: ErrNotFound (no such game, or caller may not read it),
// ErrGameInProgress, ErrSealed (a shared deal before its competition
// closes, R6.6), a log that does not decode, or the store's.
func (g *Games) EndedLog(ctx context.Context, caller, id string) (*Game, []Event, error) {
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
	evs := make([]Event, len(recs))
	for i, r := range recs {
		if evs[i], err = DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload); err != nil {
			return nil, nil, err
		}
	}
	return game, evs, nil
}

// hintFits says why hint_given event e cannot follow s, "" if it can: it
// must fit (Apply), and the move it names must be legal on s. The rules
// cannot re-derive a hint (the solver chose it), so the audit checks only
// that.
func hintFits(s *State, e Event) string {
	c := s.Clone()
	c.Apply(e)
	if c.Fault != "" {
		return c.Fault
	}
	if e.Data.Hint != nil {
		if _, _, err := Decide(s, *e.Data.Hint, e.OccurredAt); err != nil {
			return fmt.Sprintf("the hinted %v is not legal here: %v", *e.Data.Hint, err)
		}
	}
	return ""
}
