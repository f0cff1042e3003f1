package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// Paging of listings (limit and cursor of GET /v1/games).
const (
	defaultLimit = 50
	maxLimit     = 500
)

// etag is the entity tag of a game at a version: the version in quotes.
func etag(version int) string { return `"` + strconv.Itoa(version) + `"` }

// maxIDLen bounds ids in paths; longer ones name nothing.
const maxIDLen = 64

// gameID is the {id} path parameter.
func gameID(c *gin.Context) (string, error) {
	id := c.Param("id")
	if id == "" || len(id) > maxIDLen {
		return "", domain.ErrNotFound
	}
	return id, nil
}

// createGame deals a new game for the caller.
//
//	@Summary		Create a game
//	@Description	Deals a new game of a variant, optionally with options, from a seed, from a custom layout (RULES R6.5) or from a PySolFC game number (deal "pysolfc:<number>", R6.7); seed, layout and deal make it unranked.
//	@Description	winnable: true deals a deal the solver proved winnable (RULES R7.2; every variant): the game stays ranked, publishes solution_commitment and difficulty, and reveals the line in its audit once the deal may be revealed. Proofs are made in the background; when none is ready within a short wait the answer is 503 deal_not_ready with Retry-After.
//	@Description	Send Idempotency-Key to retry safely: the same key and body return the first response again.
//	@Tags			games
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			include			query		string				false	"legal_moves: add the moves the new game accepts (game.legal_moves)"	Enums(legal_moves)
//	@Param			Idempotency-Key	header		string				false	"retry key, up to 255 characters"	maxlength(255)
//	@Param			game			body		CreateGameRequest	true	"the game to create"
//	@Success		201				{object}	Game
//	@Header			201				{string}	ETag					"the game's version in quotes"
//	@Header			201				{string}	Location				"the game's URL"
//	@Failure		400				{object}	Problem					"malformed body"
//	@Failure		401				{object}	Problem					"no or unknown token"
//	@Failure		413				{object}	Problem					"body too large"
//	@Failure		415				{object}	Problem					"body not JSON"
//	@Failure		409				{object}	Problem					"too_many_games (the player's bound of games in progress), or with duel_id: duel_already_joined (Location names your game), duel_full or duel_ended"
//	@Header			409				{string}	Location				"duel_already_joined: your game in this duel"
//	@Failure		422				{object}	Problem					"unknown variant, invalid option, layout or deal, winnable with seed, layout or deal, reused idempotency key"
//	@Failure		500				{object}	Problem
//	@Failure		503				{object}	Problem					"deal_not_ready: no proven winnable deal (RULES R7.2) was ready within the supply's short wait; nothing was written, and a retry after Retry-After seconds finds one. Also database_unavailable: the database is unavailable; a change answered so was made whole or not at all"
//	@Header			503				{integer}	Retry-After				"whole seconds to wait before trying again (RFC 9110 §10.2.3)"
//	@ID		createGame
//	@Router			/v1/games [post]
func (s *server) createGame(c *gin.Context, body []byte) reply {
	var req CreateGameRequest
	if err := decodeStrict(body, &req); err != nil {
		return s.fail(c, err)
	}
	if _, err := includeLegal(c); err != nil {
		return s.fail(c, err)
	}
	if req.Variant == "" {
		return s.fail(c, invalidBody("variant", "variant is required; GET /v1/variants lists them"))
	}
	if req.Deal != nil && (req.Seed != nil || req.Layout != nil || req.DuelID != nil) {
		return s.fail(c, badField("deal", "give deal alone: not with seed, layout or duel_id"))
	}
	winnable := req.Winnable != nil && *req.Winnable
	if winnable && (req.Seed != nil || req.Layout != nil || req.Deal != nil || req.DuelID != nil) {
		return s.fail(c, badField("winnable", "winnable: true deals a proven deal of the server's; not with seed, layout, deal or duel_id"))
	}
	if req.Winnable != nil && req.DuelID != nil {
		return s.fail(c, badField("winnable", "a duel's games are dealt its deal; give winnable when creating the duel"))
	}
	if req.DuelID != nil {
		return s.joinFromCreate(c, req) // duels.go
	}
	unlock, err := s.belowGameBound(c)
	if err != nil {
		return s.fail(c, err)
	}
	defer unlock()
	ng := app.NewGame{Owner: playerOf(c).ID, Variant: req.Variant, Options: req.Options.options(), Winnable: winnable}
	if req.Seed != nil {
		seed := uint64(*req.Seed)
		ng.Seed = &seed
	}
	if req.Deal != nil {
		if *req.Deal == "" {
			return s.fail(c, badField("deal", `deal must be "pysolfc:<number>", e.g. "pysolfc:12345"`))
		}
		ng.Deal = *req.Deal
	}
	if req.Layout != nil {
		pos, err := req.Layout.position()
		if err != nil {
			return s.fail(c, err)
		}
		ng.Layout = pos
	}
	ng.Receipt = receiptOf(c)
	g, st, err := s.cfg.Games.Create(c.Request.Context(), ng)
	if errors.Is(err, app.ErrReceiptTaken) {
		return s.replayKey(c)
	}
	if err != nil {
		return s.fail(c, err)
	}
	return s.createReply(c, g, st)
}

// listGames lists the caller's games.
//
//	@Summary		List my games
//	@Description	The caller's games, newest first, one page at a time.
//	@Tags			games
//	@Produce		json
//	@Security		BearerAuth
//	@Param			status	query		string	false	"only games with this status"	Enums(in_progress, won, lost, expired)
//	@Param			variant	query		string	false	"only games of this variant"
//	@Param			limit	query		int		false	"page size"	minimum(1)	maximum(500)	default(50)
//	@Param			cursor	query		string	false	"next_cursor of the previous page"
//	@Success		200		{object}	GameList
//	@Failure		400		{object}	Problem	"bad parameter"
//	@Failure		401		{object}	Problem	"no or unknown token"
//	@Failure		422		{object}	Problem	"unknown variant"
//	@Failure		500		{object}	Problem
//	@ID		listGames
//	@Router			/v1/games [get]
func (s *server) listGames(c *gin.Context) reply {
	f := app.GameFilter{Owner: playerOf(c).ID, Limit: defaultLimit}
	if st, ok := c.GetQuery("status"); ok {
		switch domain.Status(st) {
		case domain.StatusInProgress, domain.StatusWon, domain.StatusLost, domain.StatusExpired:
			f.Status = domain.Status(st)
		default:
			return s.fail(c, badParam("status", "status must be in_progress, won, lost or expired"))
		}
	}
	if v, ok := c.GetQuery("variant"); ok {
		if _, err := domain.LookupVariant(v); err != nil {
			return s.fail(c, err)
		}
		f.Variant = v
	}
	limit, err := intQuery(c, "limit", defaultLimit, 1, maxLimit)
	if err != nil {
		return s.fail(c, err)
	}
	f.Limit = limit
	if cur, ok := c.GetQuery("cursor"); ok {
		if cur == "" || len(cur) > 512 {
			return s.fail(c, badParam("cursor", "cursor is not one this server made"))
		}
		f.Cursor = cur
	}
	games, next, err := s.cfg.Games.List(c.Request.Context(), f)
	if err != nil {
		return s.fail(c, err)
	}
	out := GameList{Games: make([]GameSummary, len(games))}
	for i := range games {
		out.Games[i] = newGameSummary(&games[i])
	}
	if next != "" {
		out.NextCursor = &next
	}
	return s.jsonReply(http.StatusOK, out)
}

// intQuery reads an integer query parameter in lo..hi, def if absent.
func intQuery(c *gin.Context, name string, def, lo, hi int) (int, error) {
	v, ok := c.GetQuery(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, badParam(name, name+" must be an integer in "+strconv.Itoa(lo)+".."+strconv.Itoa(hi))
	}
	return n, nil
}

// getGame is the current state of a game.
//
//	@Summary		Get a game
//	@Description	The game's current state. While it is in progress only its owner may read it, and face-down cards and the stock show only as counts.
//	@Description	If-None-Match with the current ETag answers 304.
//	@Tags			games
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id				path		string	true	"game id"
//	@Param			include			query		string	false	"legal_moves: add the moves the game accepts now (legal_moves)"	Enums(legal_moves)
//	@Param			If-None-Match	header		string	false	"an ETag the client has"
//	@Success		200				{object}	Game
//	@Header			200				{string}	ETag	"the game's version in quotes"
//	@Success		304				"not modified"
//	@Header			304				{string}	ETag	"the game's version in quotes"
//	@Failure		400				{object}	Problem	"include other than legal_moves"
//	@Failure		401				{object}	Problem	"no or unknown token"
//	@Failure		404				{object}	Problem	"no such game, or not yours"
//	@Failure		500				{object}	Problem
//	@ID		getGame
//	@Router			/v1/games/{id} [get]
func (s *server) getGame(c *gin.Context) reply {
	id, err := gameID(c)
	if err != nil {
		return s.fail(c, err)
	}
	legal, err := includeLegal(c)
	if err != nil {
		return s.fail(c, err)
	}
	ctx := c.Request.Context()
	g, st, err := s.cfg.Games.Get(ctx, playerOf(c).ID, id)
	if err != nil {
		return s.fail(c, err)
	}
	tag := etag(st.Version)
	if inm := c.GetHeader("If-None-Match"); inm != "" && etagListHas(inm, tag) {
		return reply{status: http.StatusNotModified}.with("ETag", tag)
	}
	reveal, _, err := s.cfg.Games.Reveal(ctx, g)
	if err != nil {
		return s.fail(c, err)
	}
	out := newGame(g, st, s.now(), reveal)
	if legal {
		out.LegalMoves = legalOf(st)
	}
	return s.jsonReply(http.StatusOK, out).with("ETag", tag)
}

// etagListHas reports whether an If-None-Match value (a list of entity
// tags, or *) matches tag under weak comparison (RFC 9110 §13.1.2).
func etagListHas(list, tag string) bool {
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == tag {
			return true
		}
	}
	return false
}

// includeLegal reads the include query parameter: "legal_moves" (the one
// value defined; a comma-separated list, or the parameter repeated, is
// read as one list) adds the game's legal moves to the answer
// (Game.LegalMoves). Absent: false. Any other value, in any of the
// parameter's occurrences: 400 invalid_parameter, so that a client never
// takes an ignored value for an honoured one. A request without a query
// string (most moves) is answered without parsing one: gin's parse
// allocates a map.
func includeLegal(c *gin.Context) (bool, error) {
	if c.Request.URL.RawQuery == "" {
		return false, nil
	}
	qs, ok := c.GetQueryArray("include")
	if !ok {
		return false, nil
	}
	for _, q := range qs {
		for _, v := range strings.Split(q, ",") {
			if v != "legal_moves" {
				return false, badParam("include", "include must be legal_moves")
			}
		}
	}
	return true, nil
}

// legalOf is every move the game in state st accepts now, as move
// requests; empty once it has ended.
func legalOf(st *domain.State) []MoveRequest {
	out := []MoveRequest{}
	if !st.Status.Ended() {
		for _, m := range domain.LegalMoves(st) {
			out = append(out, newMoveRequest(m))
		}
	}
	return out
}

// legalMoves lists every move the game accepts now.
//
//	@Summary		List the legal moves
//	@Description	Every move the game accepts now, in the shape of a move request (empty once the game has ended).
//	@Tags			games
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id	path		string	true	"game id"
//	@Success		200	{object}	LegalMoves
//	@Header			200	{string}	ETag	"the game's version in quotes"
//	@Failure		401	{object}	Problem	"no or unknown token"
//	@Failure		404	{object}	Problem	"no such game, or not yours"
//	@Failure		500	{object}	Problem
//	@ID		listLegalMoves
//	@Router			/v1/games/{id}/legal-moves [get]
func (s *server) legalMoves(c *gin.Context) reply {
	id, err := gameID(c)
	if err != nil {
		return s.fail(c, err)
	}
	_, st, err := s.cfg.Games.Get(c.Request.Context(), playerOf(c).ID, id)
	if err != nil {
		return s.fail(c, err)
	}
	out := LegalMoves{Version: st.Version, Moves: legalOf(st)}
	return s.jsonReply(http.StatusOK, out).with("ETag", etag(st.Version))
}

// ifMatch reads If-Match: one entity tag (the version in quotes, strong),
// or * or absent for "any version" (-1).
func ifMatch(c *gin.Context) (int, error) {
	v := strings.TrimSpace(c.GetHeader("If-Match"))
	if v == "" || v == "*" {
		return -1, nil
	}
	bad := badParam("If-Match", `If-Match must be one ETag of the game, e.g. "12"`)
	unq, ok := strings.CutPrefix(v, `"`)
	if !ok {
		return 0, bad
	}
	unq, ok = strings.CutSuffix(unq, `"`)
	if !ok {
		return 0, bad
	}
	n, err := strconv.Atoi(unq)
	if err != nil || n < 0 || strconv.Itoa(n) != unq {
		return 0, bad
	}
	return n, nil
}

// postMove plays one move.
//
//	@Summary		Play a move
//	@Description	Plays one move and returns the new state and the events appended.
//	@Description	If-Match makes it conditional on the game's version (412 if stale); Idempotency-Key makes retries safe.
//	@Description	A rejected move appends nothing; problem.reason says why. A move on a game that has ended gets 409 (reason game_over or time_expired).
//	@Tags			games
//	@Accept			json
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id				path		string		true	"game id"
//	@Param			include			query		string		false	"legal_moves: add the moves the game accepts after this one (game.legal_moves), saving a request"	Enums(legal_moves)
//	@Param			If-Match		header		string		false	"the ETag (version) the move is meant for"
//	@Param			Idempotency-Key	header		string		false	"retry key, up to 255 characters"	maxlength(255)
//	@Param			move			body		MoveRequest	true	"the move"
//	@Success		200				{object}	MoveResult
//	@Header			200				{string}	ETag				"the game's new version in quotes"
//	@Failure		400				{object}	Problem				"malformed body or header"
//	@Failure		401				{object}	Problem				"no or unknown token"
//	@Failure		404				{object}	Problem				"no such game, or not yours"
//	@Failure		409				{object}	Problem				"the game has ended, or a concurrent write won"
//	@Failure		412				{object}	Problem				"If-Match is stale"
//	@Header			412				{string}	ETag				"the game's current version in quotes"
//	@Failure		413				{object}	Problem				"body too large"
//	@Failure		415				{object}	Problem				"body not JSON"
//	@Failure		422				{object}	Problem				"illegal move, or reused idempotency key"
//	@Failure		500				{object}	Problem
//	@ID		playMove
//	@Router			/v1/games/{id}/moves [post]
func (s *server) postMove(c *gin.Context, body []byte) reply {
	id, err := gameID(c)
	if err != nil {
		return s.fail(c, err)
	}
	expected, err := ifMatch(c)
	if err != nil {
		return s.fail(c, err)
	}
	if _, err := includeLegal(c); err != nil {
		return s.fail(c, err) // before the move: a bad parameter changes nothing
	}
	var req MoveRequest
	if err := decodeStrict(body, &req); err != nil {
		return s.fail(c, err)
	}
	if req.Type == "" {
		return s.fail(c, invalidBody("type", "type is required: draw, move, take-back, flip, undo, redo, autocomplete or resign"))
	}
	m, err := req.move()
	if err != nil {
		return s.fail(c, err)
	}
	g, st, recs, err := s.cfg.Games.Play(c.Request.Context(), playerOf(c).ID, id, m, expected, receiptOf(c))
	if errors.Is(err, app.ErrReceiptTaken) {
		return s.replayKey(c)
	}
	if err != nil {
		r := s.fail(c, err)
		if st != nil && r.status == http.StatusPreconditionFailed {
			r = r.with("ETag", etag(st.Version))
		}
		return r
	}
	return s.moveReply(c, g, st, recs, true)
}

// moveReply is the answer to a move that appended recs, leaving game g in
// state st: the same bytes whether rendered at once (fresh: recs are what
// the append returned) or again from the log for a retry (replayFromLog),
// as long as the game's seal (R6.6) has not been lifted in between.
// Hidden cards show only once the game may be revealed (Games.Reveal) and
// st, the state shown, has ended: a retry shows the state its move left,
// even once the game has ended.
func (s *server) moveReply(c *gin.Context, g *app.Game, st *domain.State, recs []domain.RecordedEvent, fresh bool) reply {
	reveal := false
	if st.Status.Ended() {
		var err error
		if reveal, _, err = s.cfg.Games.Reveal(c.Request.Context(), g); err != nil {
			return s.fail(c, err)
		}
	}
	view := viewOf(reveal, st)
	view.fresh = fresh
	out := MoveResult{Game: newGame(g, st, st.LastAt, reveal), Events: moveEvents(recs, view)}
	if legal, _ := includeLegal(c); legal { // checked before the move
		out.Game.LegalMoves = legalOf(st)
	}
	// out's own writer, called on its type: boxed in jsonReply's interface,
	// the whole answer would first be copied to the heap.
	buf := answerBuffers.Get().(*[]byte)
	return pooledReply(http.StatusOK, buf, out.appendJSON((*buf)[:0])).with("ETag", etag(st.Version))
}

// createReply is the 201 of game g just dealt (a new game, a duel's, a
// daily deal's), in state st after its deal: the same bytes whether
// rendered at once or again from the log, with the legal moves when the
// request asks (include=legal_moves, checked before the game was dealt).
func (s *server) createReply(c *gin.Context, g *app.Game, st *domain.State) reply {
	out := newGame(g, st, st.LastAt, false)
	if legal, _ := includeLegal(c); legal {
		out.LegalMoves = legalOf(st)
	}
	return s.jsonReply(http.StatusCreated, out).
		with("ETag", etag(st.Version)).
		with("Location", "/v1/games/"+g.ID)
}

// stateAt replays a game to a version.
//
//	@Summary		Get the game at a version
//	@Description	The game as it was right after event `version` (1 is the deal), replayed from the log. Once the game has ended it lists the face-down and stock cards too.
//	@Tags			games
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id		path		string	true	"game id"
//	@Param			version	path		int		true	"event version, 1..current"	minimum(1)
//	@Success		200		{object}	Game
//	@Header			200		{string}	ETag	"the version in quotes"
//	@Failure		400		{object}	Problem	"version is not a number"
//	@Failure		401		{object}	Problem	"no or unknown token"
//	@Failure		404		{object}	Problem	"no such game (or not yours), or no such version"
//	@Failure		500		{object}	Problem
//	@ID		getState
//	@Router			/v1/games/{id}/states/{version} [get]
func (s *server) stateAt(c *gin.Context) reply {
	id, err := gameID(c)
	if err != nil {
		return s.fail(c, err)
	}
	v, err := strconv.Atoi(c.Param("version"))
	if err != nil || v < 1 {
		return s.fail(c, badParam("version", "version must be a whole number from 1"))
	}
	ctx := c.Request.Context()
	g, st, err := s.cfg.Games.StateAt(ctx, playerOf(c).ID, id, v)
	if err != nil {
		return s.fail(c, err)
	}
	reveal, _, err := s.cfg.Games.Reveal(ctx, g)
	if err != nil {
		return s.fail(c, err)
	}
	return s.jsonReply(http.StatusOK, newGame(g, st, st.LastAt, reveal)).with("ETag", etag(st.Version))
}
