package api

import (
	"encoding/hex"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// Daily is a variant's daily deal on a UTC date and its standings. status
// is open during the day and ended once the day is over (and no game of it
// still runs: the server resigns those after midnight UTC, R2.7). seed and
// salt are null until it has ended (RULES R6.6); commitment is null until
// someone has played the deal.
type Daily struct {
	Variant    string      `json:"variant" example:"klondike"`                                                             // variant id (GET /v1/variants)
	Date       string      `json:"date" format:"date" example:"2026-11-29"`                                                // the UTC date
	Options    GameOptions `json:"options"`                                                                                // the rules of the daily games: the variant's defaults
	Status     string      `json:"status" enums:"open,ended"`                                                              // open during the day
	Commitment *string     `json:"commitment" extensions:"x-nullable"`                                                     // every daily game of the day shows it (R6.4); null before the first
	Seed       *Seed       `json:"seed" swaggertype:"string" example:"9925980916699881289" extensions:"x-nullable,x-seed"` // the day's seed (R6.1), a decimal string; null until the day has ended
	Salt       *string     `json:"salt" extensions:"x-nullable"`                                                           // the commitment's salt, 64 hex digits; null until the day has ended
	Standings  []Standing  `json:"standings"`                                                                              // one line per daily game, best first

	Winnable           bool    `json:"winnable"`                                                           // the day's deal was proven winnable (R7.2): always so while the server proves deals
	SolutionCommitment *string `json:"solution_commitment" example:"sha256:7a3c…" extensions:"x-nullable"` // winnable: every daily game of the day shows it (R7.2); null otherwise or before the first game
	Difficulty         *string `json:"difficulty" enums:"easy,medium,hard,expert" extensions:"x-nullable"` // winnable: the day's band (R7.5); null otherwise or before the first game
} // @name Daily

// playDaily deals the caller's daily game.
//
//	@Summary		Play today's daily deal
//	@Description	Deals the caller's game on today's (UTC) daily deal of the variant, with the variant's default rules: the same deal for every player that day, proven winnable (RULES R7.2: the game shows solution_commitment and difficulty; with no proven deal ready within a short wait the day's first game answers 503 deal_not_ready with Retry-After). One per player, variant and day: a second request gets 409 daily_already_played, with Location naming the game.
//	@Description	A daily game is sealed until its day is over (RULES R6.6): readable only by its owner, and showing it only the cards it saw face up, no seed or salt, even once it has ended; after the day, everything, to anyone. Games still running then are resigned by the server. The body is empty or {}.
//	@Tags			daily
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			variant			path		string			true	"variant id (GET /v1/variants)"
//	@Param			include			query		string			false	"legal_moves: add the moves the new game accepts (game.legal_moves)"	Enums(legal_moves)
//	@Param			Idempotency-Key	header		string			false	"retry key, up to 255 characters"	maxlength(255)
//	@Param			play			body		EmptyRequest	false	"{}, or no body"
//	@Success		201				{object}	Game
//	@Header			201				{string}	ETag				"the game's version in quotes"
//	@Header			201				{string}	Location			"the game's URL"
//	@Failure		400				{object}	Problem				"a body other than {}, or include other than legal_moves"
//	@Failure		401				{object}	Problem				"no or unknown token"
//	@Failure		404				{object}	Problem				"a path that is not valid text"
//	@Failure		409				{object}	Problem				"daily_already_played: Location names today's game"
//	@Header			409				{string}	Location			"your daily game of today"
//	@Failure		413				{object}	Problem				"body too large"
//	@Failure		415				{object}	Problem				"body not JSON"
//	@Failure		422				{object}	Problem				"unknown variant, reused idempotency key"
//	@Failure		500				{object}	Problem
//	@Failure		503				{object}	Problem				"deal_not_ready: no proven winnable deal (RULES R7.2) was ready within the supply's short wait; nothing was written, and a retry after Retry-After seconds finds one. Also database_unavailable: the database is unavailable; a change answered so was made whole or not at all"
//	@Header			503				{integer}	Retry-After			"whole seconds to wait before trying again (RFC 9110 §10.2.3)"
//	@ID		playDaily
//	@Router			/v1/daily/{variant}/games [post]
func (s *server) playDaily(c *gin.Context, body []byte) reply {
	if err := decodeEmpty(body); err != nil {
		return s.fail(c, err)
	}
	if _, err := includeLegal(c); err != nil {
		return s.fail(c, err)
	}
	g, st, err := s.cfg.Competitions.PlayDaily(c.Request.Context(), *playerOf(c), c.Param("variant"))
	if err != nil {
		return s.fail(c, err)
	}
	return s.createReply(c, g, st)
}

// getDaily shows a daily deal and its standings.
//
//	@Summary		Get a daily deal's standings
//	@Description	The variant's daily deal of a UTC date (default today) and its standings, best first (won first, then higher score, then shorter time, then fewer moves). Needs no auth.
//	@Description	The day's seed and salt appear only once the day is over (and none of its games still runs); they match the commitment (R6.4).
//	@Tags			daily
//	@Produce		json
//	@Param			variant	path		string	true	"variant id (GET /v1/variants)"
//	@Param			date	query		string	false	"a UTC date, YYYY-MM-DD, not after today; default today"	format(date)
//	@Success		200		{object}	Daily
//	@Failure		400		{object}	Problem	"date not a YYYY-MM-DD date"
//	@Failure		404		{object}	Problem	"a path that is not valid text"
//	@Failure		422		{object}	Problem	"unknown variant, or a date after today"
//	@Failure		500		{object}	Problem
//	@ID		getDaily
//	@Router			/v1/daily/{variant} [get]
func (s *server) getDaily(c *gin.Context) reply {
	if _, err := domain.LookupVariant(c.Param("variant")); err != nil {
		return s.fail(c, err) // before the date, as ever: 422 unknown_variant wins over a bad date
	}
	day := ""
	if q, ok := c.GetQuery("date"); ok {
		if t, err := time.Parse(time.DateOnly, q); err != nil || app.UTCDay(t) != q {
			return s.fail(c, badParam("date", "date must be a UTC date as YYYY-MM-DD, e.g. 2026-11-29"))
		}
		day = q
	}
	r, err := s.cfg.Competitions.Daily(c.Request.Context(), c.Param("variant"), day)
	if err != nil {
		return s.fail(c, err)
	}
	out := Daily{Variant: r.Variant.ID, Date: r.Day, Options: newGameOptions(r.Rules), Status: "open",
		Standings: newStandings(r.Results)}
	if r.Ended {
		out.Status = "ended"
	}
	if r.Deal != nil {
		out.Commitment = &r.Deal.Commitment
		out.Winnable, out.Difficulty = r.Deal.Winnable, nonEmpty(r.Deal.Difficulty)
		if r.Deal.Winnable {
			sc := domain.SolutionCommitment(r.Deal.Solution, r.Deal.Salt)
			out.SolutionCommitment = &sc
		}
		if r.Ended {
			salt := hex.EncodeToString(r.Deal.Salt)
			out.Seed, out.Salt = seedPtr(r.Deal.Seed), &salt
		}
	}
	return s.jsonReply(http.StatusOK, out)
}
