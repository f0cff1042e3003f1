package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/openpatience/solitaire/domain/app"
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
	res, err := app.Analyse(solverContext(c), s.search, game, evs)
	if err != nil {
		return s.fail(c, givenUp(c, err))
	}
	a := analysisOf(res)
	s.analyses.add(id, a)
	return s.jsonReply(http.StatusOK, a)
}

// analysisOf is the wire form of a.
func analysisOf(a app.Analysis) Analysis {
	return Analysis{Winnable: string(a.Verdict), LosingVersion: a.LosingVersion, Line: moveRequests(a.Line)}
}

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
