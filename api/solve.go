package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/solver"
)

// SolveRequest asks whether a layout is winnable (POST /v1/solve,
// RULES R7.1): variant, options and layout as POST /v1/games takes them
// (R6.5), and the most time the search may take in milliseconds, 1 up to
// the server's maximum (README "Limits": 10000 by default); without it the
// search may take solver.DefaultTime or that maximum, whichever is less.
type SolveRequest struct {
	Variant  string         `json:"variant" example:"relaxed" minLength:"1" maxLength:"64"` // variant id (GET /v1/variants)
	Options  *CreateOptions `json:"options,omitempty"`                                      // options; absent ones keep the variant's defaults
	Layout   *Layout        `json:"layout"`                                                 // the deal to solve (R6.5)
	BudgetMS *int           `json:"budget_ms,omitempty" minimum:"1" example:"2000"`         // most milliseconds the search may take; above the server's maximum: 422
} // @name SolveRequest

// SolveResult is the solver's answer (RULES R7.1). verdict is winnable
// (line wins), unwinnable (the search was exhaustive) or unknown (the
// budget ran out first). line is, when winnable, the moves as move
// requests that win a game created from the same variant, options and
// layout with POST /v1/games, played in order from its deal (foundations
// by index, draws and recycles as draw, flips where flip is player); it is
// empty otherwise. nodes counts the positions the search expanded.
type SolveResult struct {
	Verdict   string        `json:"verdict" enums:"winnable,unwinnable,unknown"` // R7.1
	Line      []MoveRequest `json:"line"`                                        // a winning line from the deal; empty unless winnable
	Nodes     int64         `json:"nodes" minimum:"0"`                           // positions expanded
	ElapsedMS int64         `json:"elapsed_ms" minimum:"0"`                      // time of the search in milliseconds
} // @name SolveResult

// postSolve solves a layout.
//
//	@Summary		Solve a layout
//	@Description	Says whether a layout (RULES R6.5) is winnable under a variant's rules with every card known (R7.1), and if so gives a winning line: move requests that win a game created with POST /v1/games from the same variant, options and layout. Nothing is stored.
//	@Description	The search runs on a bounded pool of solver workers shared fairly between players and client addresses: each player may have one search running and one waiting, and all the players of one address together two of each (README "Limits"); one more gets 429 too_many_searches with Retry-After, and the waiting searches are served round-robin by address, then by player; when every worker is busy and the queue is full the answer is 503 solver_busy with Retry-After. budget_ms bounds the search's time (at most the server's maximum, 10000 by default; a larger one gets 422 invalid_field); the search also stops after solver's node budget, answering unknown.
//	@Tags			solver
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			solve	body		SolveRequest	true	"the layout to solve"
//	@Success		200		{object}	SolveResult
//	@Failure		400		{object}	Problem	"malformed body, or no variant or layout"
//	@Failure		401		{object}	Problem	"no or unknown token"
//	@Failure		413		{object}	Problem	"body too large"
//	@Failure		415		{object}	Problem	"body not JSON"
//	@Failure		422		{object}	Problem	"unknown variant, invalid option or layout (as POST /v1/games), budget_ms out of range"
//	@Failure		429		{object}	Problem	"rate_limited, or too_many_searches: the caller, or its client address, already has its share of the solver pool (by default one search running and one waiting per player, two of each per address)"
//	@Header			429		{integer}	Retry-After	"seconds after which to try again"
//	@Failure		500		{object}	Problem
//	@Failure		503		{object}	Problem	"solver_busy: every solver worker is busy and the queue is full, or the search was given up; retry after Retry-After seconds. Also database_unavailable: the database is unavailable (nothing was written)"
//	@Header			503		{integer}	Retry-After	"whole seconds to wait before trying again (RFC 9110 §10.2.3)"
//	@ID		solveLayout
//	@Router			/v1/solve [post]
func (s *server) postSolve(c *gin.Context) reply {
	var req SolveRequest
	if err := s.readJSON(c, &req); err != nil {
		return s.fail(c, err)
	}
	if req.Variant == "" {
		return s.fail(c, invalidBody("variant", "variant is required; GET /v1/variants lists them"))
	}
	if req.Layout == nil {
		return s.fail(c, invalidBody("layout", "layout is required: the tableau piles and the stock to solve"))
	}
	budget := min(solver.DefaultTime, s.maxBudget)
	if req.BudgetMS != nil {
		maxMS := s.maxBudget.Milliseconds()
		if *req.BudgetMS < 1 || int64(*req.BudgetMS) > maxMS {
			return s.fail(c, badField("budget_ms", "budget_ms must be 1.."+strconv.FormatInt(maxMS, 10)+
				" milliseconds (the server's maximum)"))
		}
		budget = time.Duration(*req.BudgetMS) * time.Millisecond
	}
	pos, err := req.Layout.position()
	if err != nil {
		return s.fail(c, err)
	}
	st, err := domain.LayoutState(req.Variant, req.Options.options(), pos, s.now())
	if err != nil {
		return s.fail(c, err)
	}
	res, err := s.solve(solverContext(c), st, solver.Budget{Time: budget})
	if err != nil {
		return s.fail(c, err)
	}
	out := SolveResult{Verdict: string(res.Verdict), Line: moveRequests(res.Line), Nodes: res.Nodes,
		ElapsedMS: res.Elapsed.Milliseconds()}
	return s.jsonReply(http.StatusOK, out)
}

// moveRequests renders a line of moves as move requests; never nil.
func moveRequests(line []domain.Move) []MoveRequest {
	out := make([]MoveRequest, len(line))
	for i, m := range line {
		out[i] = newMoveRequest(m)
	}
	return out
}
