package api

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
)

// Problem codes of duels and daily deals (Problem.code; never rename one).
const (
	CodeDuelEnded          = "duel_ended"           // 409: the duel has ended or its deadline has passed; no more joins
	CodeDuelAlreadyJoined  = "duel_already_joined"  // 409: the caller already has a game in the duel (Location names it)
	CodeDailyAlreadyPlayed = "daily_already_played" // 409: the caller already has today's daily game (Location names it)
)

// Bounds of a duel's run time (POST /v1/duels duration_s), in seconds.
const (
	MinDuelSeconds     = 60
	MaxDuelSeconds     = 7 * 24 * 3600 // 604800
	DefaultDuelSeconds = 24 * 3600     // 86400
)

// DefaultDuelVariant is the variant of a duel that names none: seed 002's
// 5-minute game with its time bonus (RULES R3, R4.2).
const DefaultDuelVariant = "klassik"

// DuelRecord is a stored same-deal duel (RULES R6.3): every game joined to
// it is dealt from Seed and Salt, so all participants get the same cards in
// the same order and the same Commitment. Seed and Salt are secret until
// EndedAt is set. Field for field it is persistence.Duel (cmd converts).
type DuelRecord struct {
	ID         string         // opaque id, 32 hex digits
	Variant    string         // variant id (R3)
	Rules      domain.Rules   // the variant's rules with Options applied
	Options    domain.Options // options as the creator gave them
	Ranked     bool           // default options (R3): its games count for statistics
	CreatedBy  string         // player id
	Seed       uint64         // the deal's seed (R6.1)
	Salt       []byte         // 32 bytes of the commitment (R6.4)
	Commitment string         // domain.Commitment(domain.Deal(Rules, Seed), Salt)
	CreatedAt  time.Time      // UTC, ms
	Deadline   time.Time      // UTC, ms: joining closes, running games are resigned
	EndedAt    *time.Time     // nil until the duel has ended
}

// DuelStore keeps duels (persistence implements it; see its methods of the
// same names for the details).
type DuelStore interface {
	// CreateDuel stores d; domain.ErrConflict if the id exists.
	CreateDuel(ctx context.Context, d *DuelRecord) error
	// Duel returns a duel; domain.ErrNotFound if none.
	Duel(ctx context.Context, id string) (*DuelRecord, error)
	// TakeDuelSeat seats player in the duel before the game is dealt,
	// under the duel's lock. false: the duel has ended or its deadline is
	// at or before now. domain.ErrNotFound: no such duel;
	// domain.ErrConflict: the player already has a seat.
	TakeDuelSeat(ctx context.Context, duelID, player string, now time.Time) (bool, error)
	// LeaveDuelSeat gives up a seat whose game could not be dealt.
	LeaveDuelSeat(ctx context.Context, duelID, player string) error
	// DuelGameOf is the id of player's game with that duel id (a duel's
	// or a daily deal's); domain.ErrNotFound if none.
	DuelGameOf(ctx context.Context, duelID, player string) (string, error)
	// DuelGames returns the games with that duel id, oldest first.
	DuelGames(ctx context.Context, duelID string) ([]domain.Game, error)
	// DuelOver reports whether the duel (or daily deal) has ended at now,
	// recording a duel's end when it is due: the domain.Games.DuelOver
	// hook with the clock bound.
	DuelOver(ctx context.Context, duelID string, now time.Time) (bool, error)
	// PlayerNames maps player ids to display names; unknown ids are left out.
	PlayerNames(ctx context.Context, ids []string) (map[string]string, error)
}

// CompetitionStore is everything duels, daily deals, statistics and
// leaderboards need from the database (Config.Competitions).
type CompetitionStore interface {
	DuelStore
	DailyStore
	StatsStore
}

// CreateDuelRequest asks for a same-deal duel (API.md POST /v1/duels).
// variant defaults to klassik; options are those of POST /v1/games and
// apply to every game of the duel (any but draw makes them unranked, R3).
// The duel runs for duration_s seconds (60..604800, default 86400) or until
// deadline (RFC 3339, 60 s to 7 days ahead); give at most one of the two.
type CreateDuelRequest struct {
	Variant   string         `json:"variant,omitempty" example:"klassik" maxLength:"64"`                       // variant id (GET /v1/variants); default klassik
	Options   *CreateOptions `json:"options,omitempty"`                                                        // options of every game of the duel
	DurationS *int           `json:"duration_s,omitempty" minimum:"60" maximum:"604800" example:"86400"`       // run time in seconds; default 86400
	Deadline  *string        `json:"deadline,omitempty" format:"date-time" example:"2026-12-01T18:00:00.000Z"` // when the duel closes, instead of duration_s
} // @name CreateDuelRequest

// Standing is one game's line in a duel's or a daily deal's standings:
// ranked by domain.RankStandings (won first, then higher score, then
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

// Duel is a same-deal duel (RULES R6.3) and its standings. status is open
// until the duel ends: when every joined game has ended (at least one), or
// at its deadline (games still running then are resigned by the server,
// R2.7). seed and salt are null until then; afterwards anyone can check
// commitment = domain.Commitment(Deal(rules, seed), salt) (R6.4), and
// create the same deal as a practice game with POST /v1/games {seed}.
type Duel struct {
	ID         string      `json:"id"`                                                       // opaque id
	Variant    string      `json:"variant" example:"klassik"`                                // variant id (GET /v1/variants)
	Options    GameOptions `json:"options"`                                                  // the rules every game of the duel is played with
	Ranked     bool        `json:"ranked"`                                                   // its games count for statistics (default options, R3)
	Status     string      `json:"status" enums:"open,ended"`                                // open until the duel ends
	CreatedBy  string      `json:"created_by"`                                               // player id of the creator
	CreatedAt  string      `json:"created_at" format:"date-time"`                            // when the duel was created
	Deadline   string      `json:"deadline" format:"date-time"`                              // joining closes; running games are resigned
	EndedAt    *string     `json:"ended_at" format:"date-time" extensions:"x-nullable"`      // when the duel ended; null before
	Commitment string      `json:"commitment" example:"sha256:0f1e…"`                        // every game of the duel shows this commitment (R6.4)
	Seed       *uint64     `json:"seed" format:"uint64" minimum:"0" extensions:"x-nullable"` // the deal's seed (R6.1); null until the duel has ended
	Salt       *string     `json:"salt" extensions:"x-nullable"`                             // the commitment's salt, 64 hex digits; null until the duel has ended
	Standings  []Standing  `json:"standings"`                                                // one line per joined game, best first
} // @name Duel

// competitionRoutes adds the routes of duels, daily deals, statistics and
// leaderboards (issue 5) to the /v1 group.
func (s *server) competitionRoutes(v1 *gin.RouterGroup) {
	v1.POST("/duels", s.auth, s.idempotent(s.createDuel))
	v1.GET("/duels/:id", s.handle(s.getDuel))
	v1.POST("/duels/:id/games", s.auth, s.idempotent(s.joinDuel))
	v1.POST("/daily/:variant/games", s.auth, s.idempotent(s.playDaily))
	v1.GET("/daily/:variant", s.handle(s.getDaily))
	v1.GET("/players/me/stats", s.auth, s.handle(s.myStats))
	v1.GET("/leaderboards/:variant", s.handle(s.leaderboard))
}

// competitionProblem is a problem of the codes of this file and the
// daily, stats files, which problemFor does not know.
func (s *server) competitionProblem(c *gin.Context, status int, code, title, detail string) reply {
	p := Problem{Type: problemTypeBase + code, Title: title, Status: status, Detail: detail, Code: code,
		RequestID: requestIDOf(c)}
	return s.problemReply(p)
}

// notFound answers 404 for a missing thing other than a game.
func (s *server) notFound(c *gin.Context, what string) reply {
	p := newProblem(http.StatusNotFound, CodeNotFound, "no such "+what)
	p.RequestID = requestIDOf(c)
	return s.problemReply(p)
}

// decodeEmpty accepts the body of a POST that takes no fields: empty, or
// a JSON object without fields ({}). Anything else is a 400 problem.
func decodeEmpty(body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var none struct{}
	return decodeStrict(body, &none)
}

// secretDeal draws a fresh secret deal from the service's random source
// (domain.Games.Random): a 32-byte salt, then an 8-byte seed.
func (s *server) secretDeal() (uint64, []byte, error) {
	salt := make([]byte, 32)
	var seed [8]byte
	for _, b := range [][]byte{salt, seed[:]} {
		if _, err := io.ReadFull(s.cfg.Games.Random, b); err != nil {
			return 0, nil, fmt.Errorf("api: random source: %w", err)
		}
	}
	return binary.BigEndian.Uint64(seed[:]), salt, nil
}

// createDuel creates a same-deal duel.
//
//	@Summary		Create a duel
//	@Description	Creates a same-deal duel (RULES R6.3): every player who joins (POST /v1/duels/{id}/games) gets exactly the same cards in the same order, dealt from a seed the server keeps secret until the duel ends; the commitment is published now (R6.4).
//	@Description	The duel ends when every joined game has ended (at least one), or at its deadline; games still running then are resigned by the server. Creating a duel does not join it.
//	@Tags			duels
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			Idempotency-Key	header		string				false	"retry key, up to 255 characters"	maxlength(255)
//	@Param			duel			body		CreateDuelRequest	true	"the duel; {} for a klassik duel of 24 hours"
//	@Success		201				{object}	Duel
//	@Header			201				{string}	Location				"the duel's URL"
//	@Header			201				{string}	Idempotent-Replayed		"true when this is a replay of an earlier response"
//	@Failure		400				{object}	Problem					"malformed body"
//	@Failure		401				{object}	Problem					"no or unknown token"
//	@Failure		413				{object}	Problem					"body too large"
//	@Failure		415				{object}	Problem					"body not JSON"
//	@Failure		422				{object}	Problem					"unknown variant, invalid option, duration_s or deadline out of range, reused idempotency key"
//	@Failure		500				{object}	Problem
//	@ID		createDuel
//	@Router			/v1/duels [post]
func (s *server) createDuel(c *gin.Context, body []byte) reply {
	var req CreateDuelRequest
	if err := decodeStrict(body, &req); err != nil {
		return s.fail(c, err)
	}
	if req.Variant == "" {
		req.Variant = DefaultDuelVariant
	}
	v, err := domain.LookupVariant(req.Variant)
	if err != nil {
		return s.fail(c, err)
	}
	opts := req.Options.options()
	rules, ranked, err := v.Resolve(opts)
	if err != nil {
		return s.fail(c, err)
	}
	now := domain.Millis(s.now())
	deadline, err := duelDeadline(req, now)
	if err != nil {
		return s.fail(c, err)
	}
	seed, salt, err := s.secretDeal()
	if err != nil {
		return s.fail(c, err)
	}
	var idb [16]byte
	if _, err := io.ReadFull(s.cfg.Games.Random, idb[:]); err != nil {
		return s.fail(c, err)
	}
	d := &DuelRecord{ID: hex.EncodeToString(idb[:]), Variant: v.ID, Rules: rules, Options: opts, Ranked: ranked,
		CreatedBy: playerOf(c).ID, Seed: seed, Salt: salt, Commitment: domain.Commitment(domain.Deal(rules, seed), salt),
		CreatedAt: now, Deadline: deadline}
	if err := s.cfg.Competitions.CreateDuel(c.Request.Context(), d); err != nil {
		return s.fail(c, err)
	}
	return s.jsonReply(http.StatusCreated, newDuel(d, nil, nil)).with("Location", "/v1/duels/"+d.ID)
}

// duelDeadline is when a requested duel closes: duration_s or deadline
// from now (422 invalid_field when out of range, or both given).
func duelDeadline(req CreateDuelRequest, now time.Time) (time.Time, error) {
	switch {
	case req.DurationS != nil && req.Deadline != nil:
		return time.Time{}, badField("deadline", "give duration_s or deadline, not both")
	case req.Deadline != nil:
		t, err := time.Parse(time.RFC3339Nano, *req.Deadline)
		if err != nil {
			return time.Time{}, badField("deadline", "deadline must be an RFC 3339 time, e.g. 2026-12-01T18:00:00Z")
		}
		t = domain.Millis(t)
		if d := t.Sub(now); d < MinDuelSeconds*time.Second || d > MaxDuelSeconds*time.Second {
			return time.Time{}, badField("deadline", fmt.Sprintf("deadline must be %d seconds to %d days from now",
				MinDuelSeconds, MaxDuelSeconds/(24*3600)))
		}
		return t, nil
	case req.DurationS != nil:
		if n := *req.DurationS; n < MinDuelSeconds || n > MaxDuelSeconds {
			return time.Time{}, badField("duration_s", fmt.Sprintf("duration_s must be %d..%d seconds", MinDuelSeconds, MaxDuelSeconds))
		}
		return now.Add(time.Duration(*req.DurationS) * time.Second), nil
	}
	return now.Add(DefaultDuelSeconds * time.Second), nil
}

// duelIDParam is the {id} path parameter of a duel route ("" if it cannot
// name a duel).
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
//	@Description	Once the duel has ended (every joined game ended, or the deadline passed) it shows the seed and salt, which match the commitment (R6.4); before, never.
//	@Tags			duels
//	@Produce		json
//	@Param			id	path		string	true	"duel id"
//	@Success		200	{object}	Duel
//	@Failure		404	{object}	Problem	"no such duel"
//	@Failure		500	{object}	Problem
//	@ID		getDuel
//	@Router			/v1/duels/{id} [get]
func (s *server) getDuel(c *gin.Context) reply {
	ctx := c.Request.Context()
	id := duelIDParam(c)
	if id == "" {
		return s.notFound(c, "duel")
	}
	d, err := s.cfg.Competitions.Duel(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return s.notFound(c, "duel")
	}
	if err != nil {
		return s.fail(c, err)
	}
	games, err := s.settleDuel(ctx, d)
	if err != nil {
		return s.fail(c, err)
	}
	names, err := s.namesOf(ctx, games)
	if err != nil {
		return s.fail(c, err)
	}
	return s.jsonReply(http.StatusOK, newDuel(d, games, names))
}

// settleDuel brings a duel up to date before it is shown: games past their
// own time limit are expired (R5.3, as reading them would), games still
// running after the deadline are closed (resigned), and the end is
// recorded once due (d.EndedAt is updated). It returns the duel's games.
func (s *server) settleDuel(ctx context.Context, d *DuelRecord) ([]domain.Game, error) {
	games, err := s.cfg.Competitions.DuelGames(ctx, d.ID)
	if err != nil || d.EndedAt != nil {
		return games, err
	}
	now := s.now()
	changed := false
	for _, g := range games {
		if g.Status != domain.StatusInProgress {
			continue
		}
		if now.Before(d.Deadline) {
			// Reading as the owner appends a due expiry (R5.3).
			_, st, err := s.cfg.Games.Get(ctx, g.Owner, g.ID)
			if err != nil {
				return nil, err
			}
			changed = changed || st.Status.Ended()
			continue
		}
		ended, err := s.cfg.Games.CloseGame(ctx, g.ID)
		if err != nil {
			return nil, err
		}
		changed = changed || ended
	}
	if changed {
		if games, err = s.cfg.Competitions.DuelGames(ctx, d.ID); err != nil {
			return nil, err
		}
	}
	over, err := s.cfg.Competitions.DuelOver(ctx, d.ID, now)
	if err != nil || !over {
		return games, err
	}
	fresh, err := s.cfg.Competitions.Duel(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	*d = *fresh
	return games, nil
}

// namesOf maps the owners of games to their display names.
func (s *server) namesOf(ctx context.Context, games []domain.Game) (map[string]string, error) {
	ids := make([]string, 0, len(games))
	seen := map[string]bool{}
	for _, g := range games {
		if !seen[g.Owner] {
			seen[g.Owner] = true
			ids = append(ids, g.Owner)
		}
	}
	return s.cfg.Competitions.PlayerNames(ctx, ids)
}

// newStandings ranks games with domain.RankStandings.
func newStandings(games []domain.Game, names map[string]string) []Standing {
	out := []Standing{}
	for _, st := range domain.RankStandings(games) {
		out = append(out, Standing{Rank: st.Rank, PlayerID: st.Player, PlayerName: names[st.Player], GameID: st.GameID,
			Status: string(st.Status), Score: st.Score, ElapsedMS: st.ElapsedMS, Moves: st.Moves})
	}
	return out
}

// newDuel renders a duel; its seed and salt only once it has ended.
func newDuel(d *DuelRecord, games []domain.Game, names map[string]string) Duel {
	out := Duel{ID: d.ID, Variant: d.Variant, Options: newGameOptions(d.Rules), Ranked: d.Ranked, Status: "open",
		CreatedBy: d.CreatedBy, CreatedAt: domain.FormatTime(d.CreatedAt), Deadline: domain.FormatTime(d.Deadline),
		Commitment: d.Commitment, Standings: newStandings(games, names)}
	if d.EndedAt != nil {
		out.Status = "ended"
		out.EndedAt = timePtr(d.EndedAt)
		seed, salt := d.Seed, hex.EncodeToString(d.Salt)
		out.Seed, out.Salt = &seed, &salt
	}
	return out
}

// joinDuel deals the caller's game of a duel.
//
//	@Summary		Join a duel
//	@Description	Deals the caller's game on the duel's secret deal: the same cards in the same order as every other participant's (RULES R6.3), with the duel's commitment. One game per player and duel.
//	@Description	While the duel runs, its games (even ended ones) are readable only by their owners; once it has ended, by anyone. The body is empty or {}.
//	@Tags			duels
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id				path		string	true	"duel id"
//	@Param			Idempotency-Key	header		string	false	"retry key, up to 255 characters"	maxlength(255)
//	@Success		201				{object}	Game
//	@Header			201				{string}	ETag				"the game's version in quotes"
//	@Header			201				{string}	Location			"the game's URL"
//	@Header			201				{string}	Idempotent-Replayed	"true when this is a replay of an earlier response"
//	@Failure		400				{object}	Problem				"a body other than {}"
//	@Failure		401				{object}	Problem				"no or unknown token"
//	@Failure		404				{object}	Problem				"no such duel"
//	@Failure		409				{object}	Problem				"duel_already_joined (Location names your game), or duel_ended"
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
	id := duelIDParam(c)
	if id == "" {
		return s.notFound(c, "duel")
	}
	return s.enterDuel(c, id, func() reply { return s.notFound(c, "duel") })
}

// joinFromCreate is POST /v1/games with duel_id (API.md): the same as
// POST /v1/duels/{id}/games, for a request that names the duel's variant
// and no seed, layout or options (422 invalid_field otherwise, and for a
// duel that does not exist).
func (s *server) joinFromCreate(c *gin.Context, req CreateGameRequest) reply {
	noDuel := func() reply { return s.fail(c, badField("duel_id", "no duel with that id")) }
	switch {
	case s.cfg.Competitions == nil || *req.DuelID == "" || len(*req.DuelID) > maxIDLen:
		return noDuel()
	case req.Seed != nil || req.Layout != nil:
		return s.fail(c, badField("duel_id", "a duel's game is dealt from the duel's deal: give no seed or layout"))
	case req.Options != nil:
		return s.fail(c, badField("options", "a duel's game takes the duel's options: give none"))
	}
	d, err := s.cfg.Competitions.Duel(c.Request.Context(), *req.DuelID)
	if errors.Is(err, domain.ErrNotFound) {
		return noDuel()
	}
	if err != nil {
		return s.fail(c, err)
	}
	if d.Variant != req.Variant {
		return s.fail(c, badField("variant", "the duel is a "+d.Variant+" duel"))
	}
	return s.enterDuel(c, d.ID, noDuel)
}

// enterDuel deals the caller's game of duel id: a seat first (409 if the
// caller has one, or the duel is closed), then the game on the duel's deal.
// missing answers a duel that does not exist.
func (s *server) enterDuel(c *gin.Context, id string, missing func() reply) reply {
	ctx := c.Request.Context()
	player := playerOf(c).ID
	d, err := s.cfg.Competitions.Duel(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return missing()
	}
	if err != nil {
		return s.fail(c, err)
	}
	taken, err := s.cfg.Competitions.TakeDuelSeat(ctx, id, player, s.now())
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return missing()
	case errors.Is(err, domain.ErrConflict):
		r := s.competitionProblem(c, http.StatusConflict, CodeDuelAlreadyJoined, "Already joined",
			"you already have a game in this duel; one game per player")
		if gid, err := s.cfg.Competitions.DuelGameOf(ctx, id, player); err == nil {
			r = r.with("Location", "/v1/games/"+gid)
		}
		return r
	case err != nil:
		return s.fail(c, err)
	case !taken:
		return s.competitionProblem(c, http.StatusConflict, CodeDuelEnded, "Duel has ended",
			"the duel has ended or its deadline has passed; nobody can join it any more")
	}
	g, st, err := s.cfg.Games.Create(ctx, domain.NewGame{Owner: player, Variant: d.Variant, Options: d.Options,
		ServerSeed: &d.Seed, Salt: d.Salt, DuelID: d.ID})
	if err != nil {
		if lerr := s.cfg.Competitions.LeaveDuelSeat(context.WithoutCancel(ctx), id, player); lerr != nil {
			s.log.ErrorContext(ctx, "giving up a duel seat", "request_id", requestIDOf(c), "err", lerr)
		}
		return s.fail(c, err)
	}
	return s.jsonReply(http.StatusCreated, newGame(g, st, st.LastAt, false)).
		with("ETag", etag(st.Version)).
		with("Location", "/v1/games/"+g.ID)
}
