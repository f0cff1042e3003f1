package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/solver"
)

// Analysis is the analysis of an ended game (RULES R7.4). winnable is the
// solver's verdict on the deal (R7.1). losing_version is the first version
// after which the position was no longer winnable: the event of the losing
// move (for a resignation in a winnable position, the resignation; for a
// game that ran out of time, the expiry); null when the game was won, when
// the deal was not proven winnable, or when a search along the way could
// not decide (unknown). line is a winning line from the deal as move
// requests (as POST /v1/solve gives it) when the deal is winnable, else
// empty.
type Analysis struct {
	Winnable      string        `json:"winnable" enums:"winnable,unwinnable,unknown"`       // the verdict on the deal (R7.1)
	LosingVersion *int          `json:"losing_version" minimum:"2" extensions:"x-nullable"` // first version no longer winnable; null if won, not winnable from the deal, or unknown
	Line          []MoveRequest `json:"line"`                                               // a winning line from the deal; empty unless winnable
} // @name Analysis

// getAnalysis analyses an ended game.
//
//	@Summary		Analyse an ended game
//	@Description	For a game that has ended, whoever may read it gets whether its deal was winnable with every card known (RULES R7.4, R7.1), the first version after which its position was no longer winnable (the losing move), and a winning line from the deal.
//	@Description	A game in progress gets 409 game_in_progress. A game on a shared deal (duel, daily deal) gets 403 game_sealed until its competition closes (R6.6), its owner included. The searches run one after the other on the bounded solver pool, shared fairly between players and client addresses (beyond the caller's share, one search running and one waiting, or its address's, two of each, 429 too_many_searches; when the pool is full 503 solver_busy; both with Retry-After); an analysis, once made, is kept and answered again at once.
//	@Tags			games
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id	path		string	true	"game id"
//	@Success		200	{object}	Analysis
//	@Failure		401	{object}	Problem	"no or unknown token"
//	@Failure		403	{object}	Problem	"game_sealed: a shared deal before its competition closes"
//	@Failure		404	{object}	Problem	"no such game, or not one you may read"
//	@Failure		409	{object}	Problem	"game_in_progress"
//	@Failure		429	{object}	Problem	"rate_limited, or too_many_searches: the caller, or its client address, already has its share of the solver pool (by default one search running and one waiting per player, two of each per address)"
//	@Header			429	{integer}	Retry-After	"seconds after which to try again"
//	@Failure		500	{object}	Problem
//	@Failure		503	{object}	Problem	"solver_busy: every solver worker is busy and the queue is full, or the search was given up; retry after Retry-After seconds. Also database_unavailable: the database is unavailable (nothing was written)"
//	@Header			503	{integer}	Retry-After	"whole seconds to wait before trying again (RFC 9110 §10.2.3)"
//	@ID		analyseGame
//	@Router			/v1/games/{id}/analysis [get]
func (s *server) getAnalysis(c *gin.Context) reply {
	id, err := gameID(c)
	if err != nil {
		return s.fail(c, err)
	}
	ctx := c.Request.Context()
	game, evs, err := s.cfg.Games.EndedLog(ctx, playerOf(c).ID, id)
	if err != nil {
		return s.fail(c, err)
	}
	if a, ok := s.analyses.get(id); ok {
		return s.jsonReply(http.StatusOK, a)
	}
	a, err := s.analyse(solverContext(c), game, evs)
	if err != nil {
		return s.fail(c, givenUp(c, err))
	}
	s.analyses.add(id, a)
	return s.jsonReply(http.StatusOK, a)
}

// analyse makes the analysis of an ended game from its log evs.
//
// Winnability along the played line is monotone (a position that no line
// wins stays so after any move), except where an undo goes back to an
// earlier position; so losing_version is found by bisection on versions:
// the deal (version 1) is winnable, the final state (ended) is not, and
// each step searches the state at the middle version, keeping a winnable
// lower and an unwinnable upper bound. The answer is a version after
// which the position is unwinnable and before which it was winnable; with
// no undo in the log it is the first. An unknown at any step ends the
// bisection without an answer (losing_version null): a guess either way
// could name a move that did not lose. Each search has the server's
// maximum budget; about log2(versions) of them run, one after the other
// (ctx is a solverContext: they take one place of the caller's share).
func (s *server) analyse(ctx context.Context, game *domain.Game, evs []domain.Event) (Analysis, error) {
	deal, err := replayTo(evs, 1)
	if err != nil {
		return Analysis{}, err
	}
	res, err := s.solve(ctx, deal, solver.Budget{Time: s.maxBudget})
	if err != nil {
		return Analysis{}, err
	}
	out := Analysis{Winnable: string(res.Verdict), Line: moveRequests(res.Line)}
	if res.Verdict != solver.Winnable || game.Status == domain.StatusWon {
		return out, nil
	}
	lo, hi := 1, len(evs) // winnable at lo, not at hi (the game has ended, R7.1)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		st, err := replayTo(evs, mid)
		if err != nil {
			return Analysis{}, err
		}
		r, err := s.solve(ctx, st, solver.Budget{Time: s.maxBudget})
		if err != nil {
			return Analysis{}, err
		}
		switch r.Verdict {
		case solver.Winnable:
			lo = mid
		case solver.Unwinnable:
			hi = mid
		default:
			return out, nil // unknown: no losing version (see above)
		}
	}
	out.LosingVersion = &hi
	return out, nil
}

// replayTo is the state after the first v events of evs.
func replayTo(evs []domain.Event, v int) (*domain.State, error) {
	st := &domain.State{}
	for _, e := range evs[:v] {
		st.Apply(e)
	}
	if st.Fault != "" || st.Version != v {
		return nil, &replayError{fault: st.Fault}
	}
	return st, nil
}

// replayError is a log that does not replay (a corrupt log: the audit
// says where); an internal error here.
type replayError struct{ fault string }

func (e *replayError) Error() string { return "api: analysis replay: " + e.fault }

// analysisCacheGames bounds the analyses kept: each holds a line of at
// most a few hundred moves.
const analysisCacheGames = 4096

// analysisCache keeps the analysis of each ended game: its log never
// changes again, so neither does its analysis. Safe for concurrent use.
type analysisCache struct{ lru *lru.Cache[string, Analysis] }

func newAnalysisCache(games int) *analysisCache {
	c, _ := lru.New[string, Analysis](games) // only a size below 1 fails
	return &analysisCache{lru: c}
}

func (c *analysisCache) get(id string) (Analysis, bool) { return c.lru.Get(id) }

func (c *analysisCache) add(id string, a Analysis) { c.lru.Add(id, a) }
