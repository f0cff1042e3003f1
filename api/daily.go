package api

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
)

// DailyDealRecord is the stored deal of a variant on a UTC day: every
// player's daily game of that variant and day is dealt from Seed and Salt
// under the variant's default rules. Field for field it is
// persistence.DailyDeal (cmd converts).
type DailyDealRecord struct {
	Variant    string    // variant id (R3)
	Day        string    // "2006-01-02", UTC
	Seed       uint64    // the deal's seed (R6.1); secret until the day is over
	Salt       []byte    // 32 bytes; secret until the day is over
	Commitment string    // domain.Commitment(deal, Salt)
	CreatedAt  time.Time // UTC, ms
}

// DailyStore keeps the daily deals (persistence implements it).
type DailyStore interface {
	// EnsureDailyDeal returns the stored deal of d's variant and day,
	// storing d first if there is none (race-safe: one row wins).
	EnsureDailyDeal(ctx context.Context, d DailyDealRecord) (*DailyDealRecord, error)
	// FindDailyDeal returns a day's deal; domain.ErrNotFound if nobody has
	// played it.
	FindDailyDeal(ctx context.Context, variant, day string) (*DailyDealRecord, error)
	// DailyGameOf is the id of owner's daily game of variant on day;
	// domain.ErrNotFound if none.
	DailyGameOf(ctx context.Context, owner, variant, day string) (string, error)
	// DailyGames returns the daily games of variant on day, oldest first.
	DailyGames(ctx context.Context, variant, day string) ([]domain.Game, error)
}

// Daily is a variant's daily deal on a UTC date and its standings. status
// is open during the day and ended once the day is over (and no game of it
// still runs: the server resigns those after midnight UTC, R2.7). seed and
// salt are null until it has ended; commitment is null until someone has
// played the deal.
type Daily struct {
	Variant    string      `json:"variant" example:"klondike"`                               // variant id (GET /v1/variants)
	Date       string      `json:"date" format:"date" example:"2026-11-29"`                  // the UTC date
	Options    GameOptions `json:"options"`                                                  // the rules of the daily games: the variant's defaults
	Status     string      `json:"status" enums:"open,ended"`                                // open during the day
	Commitment *string     `json:"commitment" extensions:"x-nullable"`                       // every daily game of the day shows it (R6.4); null before the first
	Seed       *uint64     `json:"seed" format:"uint64" minimum:"0" extensions:"x-nullable"` // the day's seed (R6.1); null until the day has ended
	Salt       *string     `json:"salt" extensions:"x-nullable"`                             // the commitment's salt, 64 hex digits; null until the day has ended
	Standings  []Standing  `json:"standings"`                                                // one line per daily game, best first
} // @name Daily

// dailyDuelID is the duel id a daily game carries, so that domain.Games
// keeps it private until its day is over, as a duel's games are until the
// duel ends: it shows the deal every other player of the day gets.
func dailyDuelID(variant, day string) string { return "daily:" + variant + ":" + day }

// utcDay is the UTC date of t as "2006-01-02".
func utcDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// playDaily deals the caller's daily game.
//
//	@Summary		Play today's daily deal
//	@Description	Deals the caller's game on today's (UTC) daily deal of the variant, with the variant's default rules: the same deal for every player that day. One per player, variant and day: a second request gets 409 daily_already_played, with Location naming the game.
//	@Description	A daily game is readable by others only after its day is over; games still running then are resigned by the server. The body is empty or {}.
//	@Tags			daily
//	@Produce		json
//	@Security		BearerAuth
//	@Param			variant			path		string	true	"variant id (GET /v1/variants)"
//	@Param			Idempotency-Key	header		string	false	"retry key, up to 255 characters"	maxlength(255)
//	@Success		201				{object}	Game
//	@Header			201				{string}	ETag				"the game's version in quotes"
//	@Header			201				{string}	Location			"the game's URL"
//	@Header			201				{string}	Idempotent-Replayed	"true when this is a replay of an earlier response"
//	@Failure		400				{object}	Problem				"a body other than {}"
//	@Failure		401				{object}	Problem				"no or unknown token"
//	@Failure		404				{object}	Problem				"a path that is not valid text"
//	@Failure		409				{object}	Problem				"daily_already_played: Location names today's game"
//	@Header			409				{string}	Location			"your daily game of today"
//	@Failure		413				{object}	Problem				"body too large"
//	@Failure		415				{object}	Problem				"body not JSON"
//	@Failure		422				{object}	Problem				"unknown variant, reused idempotency key"
//	@Failure		500				{object}	Problem
//	@ID		playDaily
//	@Router			/v1/daily/{variant}/games [post]
func (s *server) playDaily(c *gin.Context, body []byte) reply {
	if err := decodeEmpty(body); err != nil {
		return s.fail(c, err)
	}
	ctx := c.Request.Context()
	v, err := domain.LookupVariant(c.Param("variant"))
	if err != nil {
		return s.fail(c, err)
	}
	player := playerOf(c).ID
	now := domain.Millis(s.now())
	day := utcDay(now)
	if r, played := s.alreadyPlayed(c, player, v.ID, day); played {
		return r
	}
	deal, err := s.cfg.Competitions.FindDailyDeal(ctx, v.ID, day)
	if errors.Is(err, domain.ErrNotFound) {
		deal, err = s.newDailyDeal(ctx, v, day, now)
	}
	if err != nil {
		return s.fail(c, err)
	}
	g, st, err := s.cfg.Games.Create(ctx, domain.NewGame{Owner: player, Variant: v.ID, ServerSeed: &deal.Seed,
		Salt: deal.Salt, DailyDate: day, DuelID: dailyDuelID(v.ID, day)})
	if errors.Is(err, domain.ErrConflict) {
		if r, played := s.alreadyPlayed(c, player, v.ID, day); played {
			return r // a racing request of the same player dealt it
		}
	}
	if err != nil {
		return s.fail(c, err)
	}
	return s.jsonReply(http.StatusCreated, newGame(g, st, st.LastAt, false)).
		with("ETag", etag(st.Version)).
		with("Location", "/v1/games/"+g.ID)
}

// alreadyPlayed answers 409 daily_already_played if player has a daily
// game of variant on day.
func (s *server) alreadyPlayed(c *gin.Context, player, variant, day string) (reply, bool) {
	id, err := s.cfg.Competitions.DailyGameOf(c.Request.Context(), player, variant, day)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return reply{}, false
	case err != nil:
		return s.fail(c, err), true
	}
	return s.competitionProblem(c, http.StatusConflict, CodeDailyAlreadyPlayed, "Daily deal already played",
		"you already have today's "+variant+" daily game: "+id+"; one per player and day").
		with("Location", "/v1/games/"+id), true
}

// newDailyDeal draws the deal of variant v on day and stores it, unless a
// racing first player stored one first (then that one is returned).
func (s *server) newDailyDeal(ctx context.Context, v domain.Variant, day string, now time.Time) (*DailyDealRecord, error) {
	rules, _, err := v.Resolve(domain.Options{})
	if err != nil {
		return nil, err
	}
	seed, salt, err := s.secretDeal()
	if err != nil {
		return nil, err
	}
	return s.cfg.Competitions.EnsureDailyDeal(ctx, DailyDealRecord{Variant: v.ID, Day: day, Seed: seed, Salt: salt,
		Commitment: domain.Commitment(domain.Deal(rules, seed), salt), CreatedAt: now})
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
	ctx := c.Request.Context()
	v, err := domain.LookupVariant(c.Param("variant"))
	if err != nil {
		return s.fail(c, err)
	}
	now := s.now()
	today := utcDay(now)
	day := today
	if q, ok := c.GetQuery("date"); ok {
		if t, err := time.Parse(time.DateOnly, q); err != nil || utcDay(t) != q {
			return s.fail(c, badParam("date", "date must be a UTC date as YYYY-MM-DD, e.g. 2026-11-29"))
		}
		if q > today { // well-formed but refused: 422, as for a field's value
			return s.fail(c, badField("date", "date must not be after today ("+today+" UTC)"))
		}
		day = q
	}
	games, err := s.settleDaily(ctx, v.ID, day, day < today)
	if err != nil {
		return s.fail(c, err)
	}
	names, err := s.namesOf(ctx, games)
	if err != nil {
		return s.fail(c, err)
	}
	rules, _, err := v.Resolve(domain.Options{})
	if err != nil {
		return s.fail(c, err)
	}
	out := Daily{Variant: v.ID, Date: day, Options: newGameOptions(rules), Status: "open",
		Standings: newStandings(games, names)}
	running := false
	for _, g := range games {
		running = running || g.Status == domain.StatusInProgress
	}
	if day < today && !running {
		out.Status = "ended"
	}
	deal, err := s.cfg.Competitions.FindDailyDeal(ctx, v.ID, day)
	switch {
	case errors.Is(err, domain.ErrNotFound):
	case err != nil:
		return s.fail(c, err)
	default:
		out.Commitment = &deal.Commitment
		if out.Status == "ended" {
			seed, salt := deal.Seed, hex.EncodeToString(deal.Salt)
			out.Seed, out.Salt = &seed, &salt
		}
	}
	return s.jsonReply(http.StatusOK, out)
}

// settleDaily returns the daily games of variant on day; once the day is
// over it first closes (resigns) those still running, so the deal can be
// revealed (the sweeper does the same in the background).
func (s *server) settleDaily(ctx context.Context, variant, day string, over bool) ([]domain.Game, error) {
	games, err := s.cfg.Competitions.DailyGames(ctx, variant, day)
	if err != nil || !over {
		return games, err
	}
	changed := false
	for _, g := range games {
		if g.Status != domain.StatusInProgress {
			continue
		}
		ended, err := s.cfg.Games.CloseGame(ctx, g.ID)
		if err != nil {
			return nil, err
		}
		changed = changed || ended
	}
	if !changed {
		return games, nil
	}
	return s.cfg.Competitions.DailyGames(ctx, variant, day)
}
