package api

import (
	"bytes"
	"context"
	"net/http"
	"sync"

	"github.com/gin-gonic/gin"
	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/openpatience/solitaire/domain"
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
	_, st, _, h, err := s.cfg.Games.Hint(solverContext(c), playerOf(c).ID, id, s.advise)
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

// advise is the domain.Advisor of hints: the next move of the line cached
// for the game when st is where that line stands, else a new search whose
// line is cached. st is the caller's own copy; ctx is a solverContext.
func (s *server) advise(ctx context.Context, g *domain.Game, st *domain.State) (domain.Hint, error) {
	if m, ok := s.hints.next(g.ID, st); ok {
		return domain.Hint{Verdict: domain.VerdictWinnable, Move: &m}, nil
	}
	res, err := s.solve(ctx, st, solver.Budget{Time: s.maxBudget})
	if err != nil {
		return domain.Hint{}, err
	}
	switch {
	case res.Verdict == solver.Winnable && len(res.Line) > 0:
		s.hints.keep(g.ID, st, res.Line)
		m := res.Line[0]
		return domain.Hint{Verdict: domain.VerdictWinnable, Move: &m}, nil
	case res.Verdict == solver.Unwinnable:
		return domain.Hint{Verdict: domain.VerdictUnwinnable}, nil
	}
	return domain.Hint{Verdict: domain.VerdictUnknown}, nil
}

// hintCacheGames bounds the games whose hinted line is kept: each entry is
// a line of at most a few hundred moves (a few KiB).
const hintCacheGames = 4096

// hintCache keeps, per game, the winning line of its last hint, so that
// following the hints is following one line and wins (R7.3): a second
// search from the next position might find a line that starts otherwise,
// and none at all within its budget. Positions are compared by
// positionKey; the line is kept only in memory (another server process,
// or a restart, searches again). Safe for concurrent use.
type hintCache struct {
	mu  sync.Mutex // orders a game's lookups and updates
	lru *lru.Cache[string, hintLine]
}

// hintLine is a game's cached line: line wins from the position at, and
// after line[0] the position is next ("" when line[0] is the last move).
type hintLine struct {
	at, next string
	line     []domain.Move
}

func newHintCache(games int) *hintCache {
	c, _ := lru.New[string, hintLine](games) // only a size below 1 fails
	return &hintCache{lru: c}
}

// keep caches line, which wins from st, for game id.
func (c *hintCache) keep(id string, st *domain.State, line []domain.Move) {
	e, ok := lineFrom(st, line)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Add(id, e)
}

// next is the hint for game id in state st from its cached line: its
// first move again if st is where the line starts (a hint asked twice),
// its second if st is the position after the first (the hint was
// followed), in which case the line advances. false if neither (the
// player went another way, or nothing is cached).
func (c *hintCache) next(id string, st *domain.State) (domain.Move, bool) {
	key := positionKey(st)
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.lru.Get(id)
	switch {
	case !ok:
		return domain.Move{}, false
	case e.at == key:
		return e.line[0], true
	case e.next != "" && e.next == key:
		if n, ok := lineFrom(st, e.line[1:]); ok {
			c.lru.Add(id, n)
			return n.line[0], true
		}
	}
	c.lru.Remove(id)
	return domain.Move{}, false
}

// lineFrom is the cache entry of line from st: where it stands and where
// its first move leads (played through domain.Decide, which leaves st as
// it is). false if
// the line is empty or its first move is refused.
func lineFrom(st *domain.State, line []domain.Move) (hintLine, bool) {
	if len(line) == 0 {
		return hintLine{}, false
	}
	_, after, err := domain.Decide(st, line[0], st.LastAt)
	if err != nil {
		return hintLine{}, false
	}
	e := hintLine{at: positionKey(st), line: line}
	if len(line) > 1 && !after.Status.Ended() {
		e.next = positionKey(after)
	}
	return e, true
}

// positionKey identifies what the solver's line depends on in st: every
// pile's cards in order (face-down ones marked), the passes used and
// whether the game is over; not times, scores or move counts.
func positionKey(st *domain.State) string {
	b := make([]byte, 0, 160)
	pile := func(tag byte, cards []domain.Card) {
		b = append(b, tag, byte(len(cards)))
		for _, c := range cards {
			b = append(b, byte(c))
		}
	}
	pile('s', st.Stock)
	pile('w', st.Waste)
	for _, f := range st.Foundations {
		pile('f', f)
	}
	for _, t := range st.Tableau {
		b = append(b, 'd', byte(t.Down))
		pile('t', t.Cards)
	}
	b = append(b, 'r', byte(st.Recycles>>8), byte(st.Recycles), 'e')
	return string(append(b, st.Status...))
}
