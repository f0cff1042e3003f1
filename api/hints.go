package api

import (
	"bytes"
	"context"
	"net/http"

	"github.com/gin-gonic/gin"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/domain/solver"
)

// HintRequest asks for a hint (POST /v1/games/{id}/hints): an empty
// object (the body may also be left out).
type HintRequest struct{} // @name HintRequest

// HintResult is a hint (RULES R7.3): the verdict on the game's position
// with every card known, and, only when it is winnable, one move (a move
// request to send as it is) after which it still is. A hint is never more
// than that one move: the rest of the line stays on the server.
type HintResult struct {
	Verdict string       `json:"verdict" enums:"winnable,unwinnable,unknown"` // R7.1
	Move    *MoveRequest `json:"move,omitempty"`                              // only when winnable: a move that keeps the position winnable
	Version int          `json:"version" minimum:"2"`                         // the game's version after the hint_given event (its ETag, for the next If-Match)
} // @name HintResult

// postHint gives a hint.
//
//	@Summary		Get a hint
//	@Description	Answers one move that keeps the game's position winnable, or says it is unwinnable or unknown (RULES R7.3), searched with every card known. The request is appended to the log as a hint_given event (not a move: no move number, not undoable) and makes the game unranked from then on (the statistics and leaderboards leave it out).
//	@Description	Following the hints from any winnable position wins the game: after the hinted move the next hint continues the same winning line without a new search; after any other move the server searches again.
//	@Description	Only the game's owner may ask; games on shared deals (duels, daily deals) get 403 hints_not_allowed and a game that has ended 409 (reason game_over), with nothing appended. The search runs on the bounded solver pool, shared fairly between players and client addresses: beyond the caller's share (one search running and one waiting) or its address's (two of each) 429 too_many_searches, and when the pool is full 503 solver_busy, both with Retry-After and nothing appended.
//	@Tags			games
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		string		true	"game id"
//	@Param			hint	body		HintRequest	false	"an empty object"
//	@Success		200		{object}	HintResult
//	@Header			200		{string}	ETag	"the game's new version in quotes"
//	@Failure		400		{object}	Problem	"malformed body"
//	@Failure		401		{object}	Problem	"no or unknown token"
//	@Failure		403		{object}	Problem	"hints_not_allowed: a shared deal's game"
//	@Failure		404		{object}	Problem	"no such game, or not yours"
//	@Failure		409		{object}	Problem	"the game has ended (reason game_over or time_expired), or a concurrent move won"
//	@Failure		413		{object}	Problem	"body too large"
//	@Failure		415		{object}	Problem	"body not JSON"
//	@Failure		429		{object}	Problem	"rate_limited, or too_many_searches: the caller, or its client address, already has its share of the solver pool (by default one search running and one waiting per player, two of each per address)"
//	@Header			429		{integer}	Retry-After	"seconds after which to try again"
//	@Failure		500		{object}	Problem
//	@Failure		503		{object}	Problem	"solver_busy: every solver worker is busy and the queue is full, or the search was given up; retry after Retry-After seconds. Also database_unavailable: the database is unavailable (nothing was written)"
//	@Header			503		{integer}	Retry-After	"whole seconds to wait before trying again (RFC 9110 §10.2.3)"
//	@ID		getHint
//	@Router			/v1/games/{id}/hints [post]
func (s *server) postHint(c *gin.Context) reply {
	id, err := gameID(c)
	if err != nil {
		return s.fail(c, err)
	}
	body, err := s.readBody(c)
	if err != nil {
		return s.fail(c, err)
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var req HintRequest
		if err := decodeStrict(body, &req); err != nil {
			return s.fail(c, err)
		}
	}
	_, st, _, h, err := s.cfg.Games.Hint(solverContext(c), playerOf(c).ID, id, s.hints.Advise)
	if err != nil {
		return s.fail(c, givenUp(c, err))
	}
	out := HintResult{Verdict: string(h.Verdict), Version: st.Version}
	if h.Move != nil {
		m := newMoveRequest(*h.Move)
		out.Move = &m
	}
	return s.jsonReply(http.StatusOK, out).with("ETag", etag(st.Version))
}

// givenUp is err, or, when the request's context is done (the client
// left, or the server is shutting down, while a search or the append after
// it ran), a *solverBusyError: 503 with Retry-After, never a 500 (a
// hint's append is one transaction: it went in whole or not at all).
func givenUp(c *gin.Context, err error) error {
	if ctxErr := c.Request.Context().Err(); ctxErr != nil {
		return &solverBusyError{cause: ctxErr}
	}
	return err
}

// hintCacheGames bounds the games whose hinted line is kept: each entry is
// a line of at most a few hundred moves (a few KiB).
const hintCacheGames = 4096

// newHints is the hint rule (app.Hints) over an LRU cache of at most
// games lines (a few KiB each), searching with the server's maximum
// budget on the solver pool.
func (s *server) newHints(games int) *app.Hints {
	c, _ := lru.New[string, app.HintLine](games) // only a size below 1 fails
	return app.NewHints(c, s.search)
}

// search is the app.Search of hints and analyses: one search of st with
// the server's maximum budget, on the caller's share of the pool (ctx is
// a solverContext).
func (s *server) search(ctx context.Context, st *domain.State) (domain.Verdict, []domain.Move, error) {
	res, err := s.solve(ctx, st, solver.Budget{Time: s.maxBudget})
	return res.Verdict, res.Line, err
}
