package api

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// CreateDuelRequest asks for a same-deal duel (POST /v1/duels).
// variant defaults to klassik; options are those of POST /v1/games and
// apply to every game of the duel (any but draw makes them unranked, R3).
// The duel runs for duration_s seconds (60..604800, default 86400) or until
// deadline (RFC 3339, 60 s to 7 days ahead); give at most one of the two.
// max_players (2..100, default 2) is how many may join (RULES R6.6: the duel
// closes early once every seat holds a game that has ended). winnable
// (default true) deals a deal proven winnable (RULES R7.2), in every
// variant; false deals a random one.
type CreateDuelRequest struct {
	Variant    string         `json:"variant,omitempty" example:"klassik" maxLength:"64"`                       // variant id (GET /v1/variants); default klassik
	Options    *CreateOptions `json:"options,omitempty"`                                                        // options of every game of the duel
	DurationS  *int           `json:"duration_s,omitempty" minimum:"60" maximum:"604800" example:"86400"`       // run time in seconds; default 86400
	Deadline   *string        `json:"deadline,omitempty" format:"date-time" example:"2026-12-01T18:00:00.000Z"` // when the duel closes, instead of duration_s
	MaxPlayers *int           `json:"max_players,omitempty" minimum:"2" maximum:"100" example:"2"`              // seats; default 2
	Winnable   *bool          `json:"winnable,omitempty"`                                                       // deal a proven winnable deal (R7.2); default true
} // @name CreateDuelRequest

// Standing is one game's line in a duel's or a daily deal's standings:
// ranked by app.RankStandings (won first, then higher score, then
// shorter time, then fewer moves; equal results share a rank).
type Standing struct {
	Rank       int    `json:"rank" minimum:"1"`                            // 1-based; equal results share a rank
	PlayerID   string `json:"player_id"`                                   // the game's owner
	PlayerName string `json:"player_name"`                                 // the owner's display name
	GameID     string `json:"game_id"`                                     // readable by others once the duel or day is over
	Status     string `json:"status" enums:"in_progress,won,lost,expired"` // the game's status
	Score      *int   `json:"score" extensions:"x-nullable"`               // null for scoring none (R4.1)
	ElapsedMS  int64  `json:"elapsed_ms" minimum:"0"`                      // playing time at the game's latest event, ms (R5.2)
	Moves      int    `json:"moves" minimum:"0"`                           // moves made (R2.5)
} // @name Standing

// Duel is a same-deal duel (RULES R6.3) and its standings. Joining closes at
// the deadline or once max_players have joined. status is open until the
// duel ends: at its deadline (games still running then are resigned by the
// server, R2.7), or earlier once every seat holds a game that has ended
// (R6.6). seed and salt are null until then; afterwards anyone can check
// commitment = domain.Commitment(Deal(rules, seed), salt) (R6.4), and
// create the same deal as a practice game with POST /v1/games {seed}.
type Duel struct {
	ID         string      `json:"id"`                                                                                     // opaque id
	Variant    string      `json:"variant" example:"klassik"`                                                              // variant id (GET /v1/variants)
	Options    GameOptions `json:"options"`                                                                                // the rules every game of the duel is played with
	Ranked     bool        `json:"ranked"`                                                                                 // its games count for statistics (default options, R3)
	Status     string      `json:"status" enums:"open,full,ended"`                                                         // open: seats free; full: every seat taken, games still running; ended
	SeatsTaken int         `json:"seats_taken" minimum:"0" maximum:"100"`                                                  // players who have joined
	CreatedBy  string      `json:"created_by"`                                                                             // player id of the creator
	CreatedAt  string      `json:"created_at" format:"date-time"`                                                          // when the duel was created
	Deadline   string      `json:"deadline" format:"date-time"`                                                            // joining closes; running games are resigned
	MaxPlayers int         `json:"max_players" minimum:"2" maximum:"100"`                                                  // seats: joining closes once all are taken
	EndedAt    *string     `json:"ended_at" format:"date-time" extensions:"x-nullable"`                                    // when the duel ended; null before
	Commitment string      `json:"commitment" example:"sha256:0f1e…"`                                                      // every game of the duel shows this commitment (R6.4)
	Seed       *Seed       `json:"seed" swaggertype:"string" example:"9925980916699881289" extensions:"x-nullable,x-seed"` // the deal's seed (R6.1), a decimal string; null until the duel has ended
	Salt       *string     `json:"salt" extensions:"x-nullable"`                                                           // the commitment's salt, 64 hex digits; null until the duel has ended
	Standings  []Standing  `json:"standings"`                                                                              // one line per joined game, best first

	Winnable           bool    `json:"winnable"`                                                           // the deal was proven winnable (R7.2)
	SolutionCommitment *string `json:"solution_commitment" example:"sha256:7a3c…" extensions:"x-nullable"` // winnable: every game of the duel shows it (R7.2); null otherwise
	Difficulty         *string `json:"difficulty" enums:"easy,medium,hard,expert" extensions:"x-nullable"` // winnable: the deal's band (R7.5); null otherwise
} // @name Duel

// competitionRoutes adds the routes of duels, daily deals, statistics and
// leaderboards to the /v1 group, those whose service is configured.
func (s *server) competitionRoutes(v1 *gin.RouterGroup) {
	if s.cfg.Competitions != nil {
		v1.POST("/duels", s.auth, s.idempotent(s.createDuel))
		v1.GET("/duels/:id", s.handle(s.getDuel))
		v1.POST("/duels/:id/games", s.auth, s.idempotent(s.joinDuel))
		v1.POST("/daily/:variant/games", s.auth, s.idempotent(s.playDaily))
		v1.GET("/daily/:variant", s.handle(s.getDaily))
	}
	if s.cfg.Stats != nil {
		v1.GET("/players/me/stats", s.auth, s.handle(s.myStats))
		v1.GET("/leaderboards/:variant", s.handle(s.leaderboard))
	}
}

// EmptyRequest is the body of a POST that takes no fields (joining a
// duel, playing the daily deal): an object without fields, {}, or no body
// at all (decodeEmpty).
type EmptyRequest struct{} // @name EmptyRequest

// decodeEmpty accepts the body of a POST that takes no fields: empty, or
// a JSON object without fields ({}). Anything else is a 400 problem.
func decodeEmpty(body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var none struct{}
	return decodeStrict(body, &none)
}

// createDuel creates a same-deal duel.
//
//	@Summary		Create a duel
//	@Description	Creates a same-deal duel (RULES R6.3): every player who joins (POST /v1/duels/{id}/games) gets exactly the same cards in the same order, dealt from a seed the server keeps secret until the duel ends; the commitment is published now (R6.4). The deal is proven winnable (RULES R7.2) unless winnable is false: then solution_commitment and difficulty are published too, and each game's audit reveals the winning line once the duel has closed; with no proven deal ready within a short wait the answer is 503 deal_not_ready with Retry-After.
//	@Description	max_players (2..100, default 2) may join; joining closes once every seat is taken or at the deadline. The duel closes at its deadline, or earlier once every seat holds a game that has ended; games still running at the deadline are resigned by the server. Until it closes its games are sealed (R6.6): even an ended one shows its owner only the cards it saw face up, and no seed or salt. Creating a duel does not join it.
//	@Tags			duels
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			Idempotency-Key	header		string				false	"retry key, up to 255 characters"	maxlength(255)
//	@Param			duel			body		CreateDuelRequest	true	"the duel; {} for a klassik duel of 24 hours"
//	@Success		201				{object}	Duel
//	@Header			201				{string}	Location				"the duel's URL"
//	@Failure		400				{object}	Problem					"malformed body"
//	@Failure		401				{object}	Problem					"no or unknown token"
//	@Failure		413				{object}	Problem					"body too large"
//	@Failure		415				{object}	Problem					"body not JSON"
//	@Failure		422				{object}	Problem					"unknown variant, invalid option, duration_s or deadline out of range, reused idempotency key"
//	@Failure		500				{object}	Problem
//	@Failure		503				{object}	Problem					"deal_not_ready: no proven winnable deal (RULES R7.2) was ready within the supply's short wait; nothing was written, and a retry after Retry-After seconds finds one. Also database_unavailable: the database is unavailable; a change answered so was made whole or not at all"
//	@Header			503				{integer}	Retry-After				"whole seconds to wait before trying again (RFC 9110 §10.2.3)"
//	@ID		createDuel
//	@Router			/v1/duels [post]
func (s *server) createDuel(c *gin.Context, body []byte) reply {
	var req CreateDuelRequest
	if err := decodeStrict(body, &req); err != nil {
		return s.fail(c, err)
	}
	nd := app.NewDuel{Creator: playerOf(c).ID, Variant: req.Variant, Options: req.Options.options(), Winnable: req.Winnable}
	if req.MaxPlayers != nil {
		nd.MaxPlayers = *req.MaxPlayers
		if nd.MaxPlayers == 0 { // 0 is the service's "default"; the field's range starts at 2
			nd.MaxPlayers = -1
		}
	}
	if req.DurationS != nil {
		d := time.Duration(*req.DurationS) * time.Second
		nd.Duration = &d
	}
	if req.Deadline != nil {
		t, err := time.Parse(time.RFC3339Nano, *req.Deadline)
		if err != nil {
			return s.fail(c, badField("deadline", "deadline must be an RFC 3339 time, e.g. 2026-12-01T18:00:00Z"))
		}
		nd.Deadline = &t
	}
	d, err := s.cfg.Competitions.CreateDuel(c.Request.Context(), nd)
	if err != nil {
		return s.fail(c, err)
	}
	return s.jsonReply(http.StatusCreated, newDuel(d, app.Results{})).with("Location", "/v1/duels/"+d.ID)
}

// duelIDParam is the {id} path parameter of a duel route ("" if it cannot
// name a duel: the service answers app.ErrNoDuel for it).
func duelIDParam(c *gin.Context) string {
	id := c.Param("id")
	if len(id) > maxIDLen {
		return ""
	}
	return id
}

// getDuel shows a duel and its standings.
//
//	@Summary		Get a duel
//	@Description	The duel and its standings, best first (won first, then higher score, then shorter time, then fewer moves). Needs no auth.
//	@Description	Once the duel has ended (its deadline passed, or every seat holds a game that has ended) it shows the seed and salt, which match the commitment (R6.4, R6.6); before, never.
//	@Tags			duels
//	@Produce		json
//	@Param			id	path		string	true	"duel id"
//	@Success		200	{object}	Duel
//	@Failure		404	{object}	Problem	"no such duel"
//	@Failure		500	{object}	Problem
//	@ID		getDuel
//	@Router			/v1/duels/{id} [get]
func (s *server) getDuel(c *gin.Context) reply {
	d, res, err := s.cfg.Competitions.DuelStandings(c.Request.Context(), duelIDParam(c))
	if err != nil {
		return s.fail(c, err)
	}
	return s.jsonReply(http.StatusOK, newDuel(d, res))
}

// newStandings renders ranked standings with their players' names.
func newStandings(res app.Results) []Standing {
	out := []Standing{}
	for _, st := range res.Standings {
		out = append(out, Standing{Rank: st.Rank, PlayerID: st.Player, PlayerName: res.Names[st.Player], GameID: st.GameID,
			Status: string(st.Status), Score: st.Score, ElapsedMS: st.ElapsedMS, Moves: st.Moves})
	}
	return out
}

// newDuel renders a duel; its seed and salt only once it has ended.
func newDuel(d *app.Duel, res app.Results) Duel {
	out := Duel{ID: d.ID, Variant: d.Variant, Options: newGameOptions(d.Rules), Ranked: d.Ranked, Status: "open",
		CreatedBy: d.CreatedBy, CreatedAt: domain.FormatTime(d.CreatedAt), Deadline: domain.FormatTime(d.Deadline),
		MaxPlayers: d.MaxPlayers, SeatsTaken: res.Joined, Commitment: d.Commitment, Standings: newStandings(res),
		Winnable: d.Winnable, Difficulty: nonEmpty(d.Difficulty)}
	if d.Winnable {
		sc := domain.SolutionCommitment(d.Solution, d.Salt)
		out.SolutionCommitment = &sc
	}
	if res.Joined >= d.MaxPlayers {
		out.Status = "full"
	}
	if d.EndedAt != nil {
		out.Status = "ended"
		out.EndedAt = timePtr(d.EndedAt)
		salt := hex.EncodeToString(d.Salt)
		out.Seed, out.Salt = seedPtr(d.Seed), &salt
	}
	return out
}

// joinDuel deals the caller's game of a duel.
//
//	@Summary		Join a duel
//	@Description	Deals the caller's game on the duel's secret deal: the same cards in the same order as every other participant's (RULES R6.3), with the duel's commitment. One game per player and duel.
//	@Description	Until the duel closes its games (even ended ones) are readable only by their owners, and show them only the cards they saw face up, no seed or salt (RULES R6.6); once it has closed, everything, to anyone. A full duel (status full) answers 409 duel_full; an ended one, or one past its deadline, 409 duel_ended. The body is empty or {}.
//	@Tags			duels
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id				path		string			true	"duel id"
//	@Param			include			query		string			false	"legal_moves: add the moves the new game accepts (game.legal_moves)"	Enums(legal_moves)
//	@Param			Idempotency-Key	header		string			false	"retry key, up to 255 characters"	maxlength(255)
//	@Param			join			body		EmptyRequest	false	"{}, or no body"
//	@Success		201				{object}	Game
//	@Header			201				{string}	ETag				"the game's version in quotes"
//	@Header			201				{string}	Location			"the game's URL"
//	@Failure		400				{object}	Problem				"a body other than {}, or include other than legal_moves"
//	@Failure		401				{object}	Problem				"no or unknown token"
//	@Failure		404				{object}	Problem				"no such duel"
//	@Failure		409				{object}	Problem				"duel_already_joined (Location names your game), or duel_full (every seat taken), or duel_ended (ended, or past its deadline)"
//	@Header			409				{string}	Location			"duel_already_joined: your game in this duel"
//	@Failure		413				{object}	Problem				"body too large"
//	@Failure		415				{object}	Problem				"body not JSON"
//	@Failure		422				{object}	Problem				"reused idempotency key"
//	@Failure		500				{object}	Problem
//	@ID		joinDuel
//	@Router			/v1/duels/{id}/games [post]
func (s *server) joinDuel(c *gin.Context, body []byte) reply {
	if err := decodeEmpty(body); err != nil {
		return s.fail(c, err)
	}
	if _, err := includeLegal(c); err != nil {
		return s.fail(c, err)
	}
	g, st, err := s.cfg.Competitions.JoinDuel(c.Request.Context(), *playerOf(c), duelIDParam(c))
	if err != nil {
		return s.fail(c, err)
	}
	return s.createReply(c, g, st)
}

// joinFromCreate is POST /v1/games with duel_id: the same as
// POST /v1/duels/{id}/games, for a request that names the duel's variant
// and no seed, layout or options (422 invalid_field otherwise, and for a
// duel that does not exist).
func (s *server) joinFromCreate(c *gin.Context, req CreateGameRequest) reply {
	noDuel := badField("duel_id", "no duel with that id")
	switch {
	case s.cfg.Competitions == nil || *req.DuelID == "" || len(*req.DuelID) > maxIDLen:
		return s.fail(c, noDuel)
	case req.Seed != nil || req.Layout != nil:
		return s.fail(c, badField("duel_id", "a duel's game is dealt from the duel's deal: give no seed or layout"))
	case req.Options != nil:
		return s.fail(c, badField("options", "a duel's game takes the duel's options: give none"))
	}
	ctx := c.Request.Context()
	d, err := s.cfg.Competitions.Duel(ctx, *req.DuelID)
	if err == nil && d.Variant != req.Variant {
		err = badField("variant", "the duel is a "+d.Variant+" duel")
	}
	var g *app.Game
	var st *domain.State
	if err == nil {
		g, st, err = s.cfg.Competitions.JoinDuel(ctx, *playerOf(c), d.ID)
	}
	if errors.Is(err, app.ErrNoDuel) {
		err = noDuel
	}
	if err != nil {
		return s.fail(c, err)
	}
	return s.createReply(c, g, st)
}
