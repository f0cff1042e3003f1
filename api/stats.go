package api

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// StatsStore reads what statistics and leaderboards are made of
// (persistence implements it).
type StatsStore interface {
	// PlayedGames returns owner's ranked games with at least one move, of
	// variant unless "", with draw count draw unless 0, on winnable deals
	// or on random ones as winnable says (R7.2).
	PlayedGames(ctx context.Context, owner, variant string, draw int, winnable bool) ([]app.Game, error)
	// Leaderboard returns each player's best ranked win of variant and
	// draw, on winnable deals or on random ones as winnable says (R7.2),
	// that finished in [from, to) (zero: unbounded), best first in the
	// order of app.RankStandings, at most limit.
	Leaderboard(ctx context.Context, variant string, draw int, winnable bool, from, to time.Time, limit int) ([]app.Game, error)
	// PlayerNames maps player ids to display names; unknown ids are left out.
	PlayerNames(ctx context.Context, ids []string) (map[string]string, error)
}

// VariantStats are a player's statistics in one variant and draw count, on
// random deals or on winnable ones (RULES R3: kept per variant and draw;
// R7.2: winnable and random deals apart; ranked games only, so games from a
// client's seed or layout, or with changed options, count nowhere). A game
// counts as played once its first move is made; a resigned or expired game
// is a loss. Times are milliseconds.
type VariantStats struct {
	Variant       string `json:"variant" example:"klondike"`             // variant id
	Draw          int    `json:"draw" enums:"1,3"`                       // cards per draw (R2.1)
	Winnable      bool   `json:"winnable"`                               // games on proven winnable deals (R7.2), else on random deals
	Played        int    `json:"played" minimum:"0"`                     // ranked games with at least one move
	Won           int    `json:"won" minimum:"0"`                        // of them won
	WinRatePct    int    `json:"win_rate_pct" minimum:"0" maximum:"100"` // round(100 × won / played); 0 when none played
	CurrentStreak int    `json:"current_streak" minimum:"0"`             // wins in a row up to the latest finished game
	LongestStreak int    `json:"longest_streak" minimum:"0"`             // most wins in a row ever
	BestTimeMS    *int64 `json:"best_time_ms" extensions:"x-nullable"`   // fastest win; null before the first
	FewestMoves   *int   `json:"fewest_moves" extensions:"x-nullable"`   // fewest moves in a win; null before the first
	BestScore     *int   `json:"best_score" extensions:"x-nullable"`     // highest score of a finished game; null where the variant does not score
	VegasBalance  *int   `json:"vegas_balance" extensions:"x-nullable"`  // sum of the scores of vegas games (R4.4); null without any
} // @name VariantStats

// PlayerStats are the caller's statistics: one entry per variant and draw
// asked for, or, without variant, per variant and draw the player has
// played (in the order of GET /v1/variants, then draw).
type PlayerStats struct {
	PlayerID string         `json:"player_id"` // the caller
	Stats    []VariantStats `json:"stats"`
} // @name PlayerStats

// LeaderboardEntry is one player's best ranked win on a leaderboard. Every
// entry is a verified fact (docs/transparency.md "Boards"): its game has a
// leaf in the transparency log (proof links to it) and its result is the
// one the game's replayed log gives, which `solitaire verify-leaderboard`
// checks from outside.
type LeaderboardEntry struct {
	Rank       int    `json:"rank" minimum:"1"`                      // 1-based; equal results share a rank
	PlayerID   string `json:"player_id"`                             // the winner
	PlayerName string `json:"player_name"`                           // the winner's display name
	GameID     string `json:"game_id"`                               // the winning game (public: it has ended)
	Score      *int   `json:"score" extensions:"x-nullable"`         // null where the variant does not score
	ElapsedMS  int64  `json:"elapsed_ms" minimum:"0"`                // playing time, ms (R5.2)
	Moves      int    `json:"moves" minimum:"0"`                     // moves made (R2.5)
	FinishedAt string `json:"finished_at" format:"date-time"`        // when the game was won
	Proof      string `json:"proof" example:"/v1/games/5f0c…/proof"` // the game's leaf in the transparency log and its inclusion proof, to check the entry against (docs/transparency.md)
} // @name LeaderboardEntry

// Leaderboard ranks each player's best ranked win of a variant and draw
// count: by score where the variant scores (order_by score), else by time
// then moves (order_by time); ties share a rank. period all covers every
// game, day the games finished on the current UTC date (date).
type Leaderboard struct {
	Variant  string             `json:"variant" example:"klondike"`                 // variant id
	Draw     int                `json:"draw" enums:"1,3"`                           // cards per draw
	Winnable bool               `json:"winnable"`                                   // wins on proven winnable deals (R7.2), else on random deals
	Period   string             `json:"period" enums:"all,day"`                     // all time, or today (UTC)
	Date     *string            `json:"date" format:"date" extensions:"x-nullable"` // the UTC date of period day; null for all
	OrderBy  string             `json:"order_by" enums:"score,time"`                // score (then time, moves) or time (then moves)
	Entries  []LeaderboardEntry `json:"entries"`                                    // best first
} // @name Leaderboard

// winnableQuery reads the winnable query parameter: true or false (or
// another spelling strconv.ParseBool takes), false if absent (the random deals, which every game was dealt from before
// winnable deals existed: R7.2 keeps the two apart, and a client that
// does not ask sees what it always saw).
func winnableQuery(c *gin.Context) (bool, error) {
	q, ok := c.GetQuery("winnable")
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(q) // the spelling of a boolean query parameter the spec's validators take
	if err != nil {
		return false, badParam("winnable", "winnable must be true or false")
	}
	return b, nil
}

// drawQuery reads the draw query parameter: 0 if absent, else 1 or 3 (400
// otherwise), and one variant v deals unless v is nil (422 otherwise).
func drawQuery(c *gin.Context, v *domain.Variant) (int, error) {
	q, ok := c.GetQuery("draw")
	if !ok {
		return 0, nil
	}
	choices := []int{1, 3}
	if v != nil {
		choices = v.DrawChoices
	}
	n, err := strconv.Atoi(q)
	if err != nil || n != 1 && n != 3 {
		return 0, badParam("draw", "draw must be 1 or 3")
	}
	if !slices.Contains(choices, n) {
		// Well-formed but refused: 422, as for a field's value.
		return 0, badField("draw", v.ID+" deals "+v.DrawChoiceText())
	}
	return n, nil
}

// myStats shows the caller's statistics.
//
//	@Summary		Get my statistics
//	@Description	The caller's statistics per variant and draw count: played, won, win rate, current and longest winning streak, best time, fewest moves, best score, vegas balance. Ranked games only (RULES R3); a game counts once its first move is made.
//	@Description	With variant: that variant, for draw or else every draw count it deals (even if not played). Without: every variant and draw the caller has played.
//	@Description	Games on proven winnable deals (RULES R7.2: winnable games, and daily deals and duels by default) count apart from games on random deals: winnable=true shows those, winnable=false (the default) the random deals.
//	@Tags			players
//	@Produce		json
//	@Security		BearerAuth
//	@Param			variant	query		string	false	"only this variant"
//	@Param			draw	query		int		false	"only this draw count"	Enums(1, 3)
//	@Param			winnable	query		bool	false	"games on winnable deals (true) or on random deals (false)"	default(false)
//	@Success		200		{object}	PlayerStats
//	@Failure		400		{object}	Problem	"draw not 1 or 3, winnable not true or false"
//	@Failure		401		{object}	Problem	"no or unknown token"
//	@Failure		422		{object}	Problem	"unknown variant, or a draw it does not deal"
//	@Failure		500		{object}	Problem
//	@ID		getMyStats
//	@Router			/v1/players/me/stats [get]
func (s *server) myStats(c *gin.Context) reply {
	var v *domain.Variant
	if q, ok := c.GetQuery("variant"); ok {
		found, err := domain.LookupVariant(q)
		if err != nil {
			return s.fail(c, err)
		}
		v = &found
	}
	draw, err := drawQuery(c, v)
	if err != nil {
		return s.fail(c, err)
	}
	winnable, err := winnableQuery(c)
	if err != nil {
		return s.fail(c, err)
	}
	variant := ""
	if v != nil {
		variant = v.ID
	}
	player := playerOf(c).ID
	games, err := s.cfg.Stats.PlayedGames(c.Request.Context(), player, variant, draw, winnable)
	if err != nil {
		return s.fail(c, err)
	}
	type key struct {
		variant string
		draw    int
	}
	var keys []key
	if v != nil {
		for _, d := range v.DrawChoices {
			if draw == 0 || d == draw {
				keys = append(keys, key{v.ID, d})
			}
		}
	} else {
		played := map[key]bool{}
		for _, g := range games {
			played[key{g.Variant, g.Rules.Draw}] = true
		}
		for _, vv := range domain.Variants() {
			for _, d := range []int{1, 3} {
				if played[key{vv.ID, d}] {
					keys = append(keys, key{vv.ID, d})
				}
			}
		}
	}
	out := PlayerStats{PlayerID: player, Stats: []VariantStats{}}
	for _, k := range keys {
		st := app.ComputeStats(k.variant, k.draw, games)
		out.Stats = append(out.Stats, VariantStats{Variant: st.Variant, Draw: st.Draw, Winnable: winnable, Played: st.Played, Won: st.Won,
			WinRatePct: st.WinRatePct, CurrentStreak: st.CurrentStreak, LongestStreak: st.LongestStreak,
			BestTimeMS: st.BestTimeMS, FewestMoves: st.FewestMoves, BestScore: st.BestScore, VegasBalance: st.VegasBalance})
	}
	return s.jsonReply(http.StatusOK, out)
}

// leaderboard ranks the best wins of a variant.
//
//	@Summary		Get a leaderboard
//	@Description	Each player's best ranked win of the variant and draw count, best first: by score where the variant scores, else by time then moves; equal results share a rank. period=day counts only games won on the current UTC date. Wins on proven winnable deals (RULES R7.2) rank apart from wins on random deals: winnable=true, or false (the default). Needs no auth.
//	@Description	Only verified facts rank: a win appears once its game has a leaf in the transparency log (within about a second of its end; a game on a shared deal once its competition closes) and while its stored result is the one its replayed log gave; each entry links to its proof, and `solitaire verify-leaderboard` checks every entry against the log.
//	@Tags			players
//	@Produce		json
//	@Param			variant	path		string	true	"variant id (GET /v1/variants)"
//	@Param			period	query		string	false	"all time or today (UTC)"	Enums(all, day)	default(all)
//	@Param			draw	query		int		false	"draw count; default the variant's"	Enums(1, 3)
//	@Param			winnable	query		bool	false	"wins on winnable deals (true) or on random deals (false)"	default(false)
//	@Param			limit	query		int		false	"number of entries"	minimum(1)	maximum(500)	default(50)
//	@Success		200		{object}	Leaderboard
//	@Failure		400		{object}	Problem	"bad parameter"
//	@Failure		404		{object}	Problem	"a path that is not valid text"
//	@Failure		422		{object}	Problem	"unknown variant, or a draw it does not deal"
//	@Failure		500		{object}	Problem
//	@ID		getLeaderboard
//	@Router			/v1/leaderboards/{variant} [get]
func (s *server) leaderboard(c *gin.Context) reply {
	v, err := domain.LookupVariant(c.Param("variant"))
	if err != nil {
		return s.fail(c, err)
	}
	draw, err := drawQuery(c, &v)
	if err != nil {
		return s.fail(c, err)
	}
	if draw == 0 {
		draw = v.Defaults.Draw
	}
	winnable, err := winnableQuery(c)
	if err != nil {
		return s.fail(c, err)
	}
	limit, err := intQuery(c, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		return s.fail(c, err)
	}
	out := Leaderboard{Variant: v.ID, Draw: draw, Winnable: winnable, Period: "all", OrderBy: "time", Entries: []LeaderboardEntry{}}
	if v.Defaults.Scoring != domain.ScoringNone {
		out.OrderBy = "score"
	}
	var from, to time.Time
	switch p, _ := c.GetQuery("period"); p {
	case "", "all":
	case "day":
		day := app.UTCDay(s.now())
		from, _ = time.Parse(time.DateOnly, day)
		to = from.Add(24 * time.Hour)
		out.Period, out.Date = "day", &day
	default:
		return s.fail(c, badParam("period", "period must be all or day"))
	}
	ctx := c.Request.Context()
	games, err := s.cfg.Stats.Leaderboard(ctx, v.ID, draw, winnable, from, to, limit)
	if err != nil {
		return s.fail(c, err)
	}
	names, err := s.namesOf(ctx, games)
	if err != nil {
		return s.fail(c, err)
	}
	finished := make(map[string]*time.Time, len(games))
	for _, g := range games {
		finished[g.ID] = g.FinishedAt
	}
	for _, st := range app.RankStandings(games) {
		e := LeaderboardEntry{Rank: st.Rank, PlayerID: st.Player, PlayerName: names[st.Player], GameID: st.GameID,
			Score: st.Score, ElapsedMS: st.ElapsedMS, Moves: st.Moves, Proof: "/v1/games/" + st.GameID + "/proof"}
		if t := finished[st.GameID]; t != nil {
			e.FinishedAt = domain.FormatTime(*t)
		}
		out.Entries = append(out.Entries, e)
	}
	return s.jsonReply(http.StatusOK, out)
}

// namesOf maps the owners of games to their display names.
func (s *server) namesOf(ctx context.Context, games []app.Game) (map[string]string, error) {
	ids := make([]string, 0, len(games))
	for _, g := range games {
		ids = append(ids, g.Owner)
	}
	return s.cfg.Stats.PlayerNames(ctx, slices.Compact(slices.Sorted(slices.Values(ids))))
}
