package api

import (
	"context"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// Audit is the verdict on a game's log (GET /v1/games/{id}/audit), as
// domain.Audit finds it, checked against the stored game record:
//
//   - chain_ok: the hash chain holds from the first event to the head, and
//     the log has exactly as many events as the record counts;
//   - replay_ok: every command in the log, re-decided by the rules from the
//     state before it, gives exactly the logged events;
//   - projection_ok: the record's version, status, moves and score are
//     those of the replayed state;
//   - commitment_ok: once the game has ended, the commitment published at
//     creation matches the deal in the log and the revealed salt (RULES
//     R6.4); null while it is in progress.
//
// first_broken_version is the lowest version any check found broken (null
// if none); chain_broken_at and replay_broken_at say which check. seed
// (null for a custom layout), salt and problem are null while the game is
// in progress (RULES R6.4).
//
// sealed is true for a game on a shared deal (a duel or a daily deal) whose
// competition has not closed (RULES R6.6): chain, replay and projection are
// checked at once, but commitment_ok, seed, salt and problem stay null
// even after the game has ended, and commitment_checked_after is when the
// competition closes at the latest (a duel's deadline, the end of a daily
// deal's UTC day); from then on the audit checks the commitment too.
// commitment_checked_after is null for a game that is not sealed.
//
// A game on a proven winnable deal (RULES R7.2) has winnable true and the
// solution_commitment published at creation. Once its deal may be
// revealed (when seed and salt are shown) solution is the committed
// winning line as move requests and solution_ok says whether that line,
// played through the rules from the deal in the log, wins, and matches
// the solution commitment under the salt; before that, and for other
// games, both are null.
type Audit struct {
	ChainOK                bool    `json:"chain_ok"`                                                                               // the hash chain holds and the log is as long as the record says
	ReplayOK               bool    `json:"replay_ok"`                                                                              // the rules re-decide every command to exactly the logged events
	HeadHash               string  `json:"head_hash"`                                                                              // hash of the last event, 64 hex digits ("" for an empty log, and while a deal without salt is hidden, R6.8)
	Events                 int     `json:"events" minimum:"0"`                                                                     // events in the log
	Commitment             string  `json:"commitment" example:"sha256:0f1e…"`                                                      // the commitment in the first event (RULES R6.4)
	CommitmentOK           *bool   `json:"commitment_ok" extensions:"x-nullable"`                                                  // the commitment matches the deal and salt; null while in progress
	Seed                   *Seed   `json:"seed" swaggertype:"string" example:"9925980916699881289" extensions:"x-nullable,x-seed"` // the deal's seed (R6.1), a decimal string; null while in progress and for a custom layout
	FirstBrokenVersion     *int    `json:"first_broken_version" minimum:"1" extensions:"x-nullable"`                               // the lowest version any check found broken; null if all hold
	ProjectionOK           bool    `json:"projection_ok"`                                                                          // the stored version, status, moves and score are the replay's
	Salt                   *string `json:"salt" example:"5e2b…" extensions:"x-nullable"`                                           // the commitment's secret salt, hex; null while in progress
	ChainBrokenAt          *int    `json:"chain_broken_at" minimum:"1" extensions:"x-nullable"`                                    // first version where the chain breaks; null if it holds
	ReplayBrokenAt         *int    `json:"replay_broken_at" minimum:"1" extensions:"x-nullable"`                                   // first version the rules do not give; null if all do
	Problem                *string `json:"problem" extensions:"x-nullable"`                                                        // what the replay found wrong, for people; null while in progress or sealed, or if nothing
	Sealed                 bool    `json:"sealed"`                                                                                 // a shared deal whose competition has not closed (R6.6): no commitment check, seed or salt yet
	CommitmentCheckedAfter *string `json:"commitment_checked_after" format:"date-time" extensions:"x-nullable"`                    // sealed: when the competition closes at the latest and the commitment is checked; null otherwise

	Winnable           bool          `json:"winnable"`                                                           // dealt from a proven winnable deal (R7.2)
	SolutionCommitment *string       `json:"solution_commitment" example:"sha256:7a3c…" extensions:"x-nullable"` // the commitment to the winning line in the first event; null for other games
	Solution           []MoveRequest `json:"solution" extensions:"x-nullable"`                                   // the committed winning line; null until the deal may be revealed, and for other games
	SolutionOK         *bool         `json:"solution_ok" extensions:"x-nullable"`                                // the line wins the committed deal and matches solution_commitment; null when solution is
} // @name Audit

// audit checks a game's log.
//
//	@Summary		Audit a game
//	@Description	Verifies the game's log from the first event: the hash chain (chain_ok), the rules by replay, every command re-decided from the state before it giving exactly the logged events (replay_ok), and the stored record (version, status, moves, score) against the replayed state (projection_ok). first_broken_version names the first version found broken.
//	@Description	Once the game has ended the audit also reveals seed and salt and checks the commitment published at creation against the deal in the log (commitment_ok); anyone may then audit it. While it is in progress only its owner may, and commitment_ok, seed, salt and problem are null (RULES R6.4).
//	@Description	A game on a shared deal (a duel or a daily deal) is sealed until its competition closes (R6.6): sealed is true, only its owner may audit it, commitment_ok, seed, salt and problem stay null even after it has ended, and commitment_checked_after says when the competition closes at the latest; from then on the commitment is checked too.
//	@Description	A game on a proven winnable deal (RULES R7.2) shows solution_commitment; once its deal may be revealed the audit also gives the winning line (solution) and checks it (solution_ok: it wins the committed deal through the rules and matches the commitment). Before that neither appears.
//	@Description	The same checks run offline on the NDJSON export: `solitaire audit FILE -salt SALT [-solution AUDIT.json]`.
//	@Tags			games
//	@Produce		json
//	@Security		BearerAuth
//	@Param			id	path		string	true	"game id"
//	@Success		200	{object}	Audit
//	@Header			200	{string}	ETag	"the version of the audited game record in quotes"
//	@Failure		401	{object}	Problem	"no or unknown token"
//	@Failure		404	{object}	Problem	"no such game, or not yours"
//	@Failure		500	{object}	Problem
//	@ID		auditGame
//	@Router			/v1/games/{id}/audit [get]
func (s *server) audit(c *gin.Context) reply {
	id, err := gameID(c)
	if err != nil {
		return s.fail(c, err)
	}
	ctx := c.Request.Context()
	caller := playerOf(c).ID
	game, recs, err := s.auditRead(ctx, caller, id)
	if err != nil {
		return s.fail(c, err)
	}
	seal, err := s.cfg.Games.Seal(ctx, game)
	if err != nil {
		return s.fail(c, err)
	}
	ended := game.Status.Ended() && !seal.Sealed
	var salt []byte
	if ended {
		salt = game.Salt
		if salt == nil {
			salt = []byte{}
		}
	}
	a := domain.Audit(id, recs, salt)
	out := Audit{HeadHash: a.HeadHash, Events: a.Events, Commitment: a.Commitment, Sealed: seal.Sealed}
	if seal.Sealed && !seal.ClosesAt.IsZero() {
		out.CommitmentCheckedAfter = timePtr(&seal.ClosesAt)
	}
	if out.Commitment == "" {
		out.Commitment = game.Commitment
	}
	if !domain.ChainShown(ended, a.State) {
		out.HeadHash = "" // R6.8: the head of a chain keyed by the cards alone
	}

	chainAt := a.ChainBrokenAt
	if chainAt == 0 && len(recs) != game.Version {
		// A missing or extra tail event: the record counts otherwise.
		chainAt = min(len(recs), game.Version) + 1
	}
	out.ChainOK = chainAt == 0
	out.ReplayOK = a.ReplayOK
	out.ProjectionOK = a.ReplayOK && a.State != nil && projects(game, a.State)
	broken := 0
	for _, v := range []int{chainAt, a.ReplayBrokenAt} {
		if v > 0 && (broken == 0 || v < broken) {
			broken = v
		}
	}
	if !out.ProjectionOK && broken == 0 {
		broken = max(game.Version, 1) // the record describes the head
	}
	out.ChainBrokenAt = positive(chainAt)
	out.ReplayBrokenAt = positive(a.ReplayBrokenAt)
	out.FirstBrokenVersion = positive(broken)
	if ended {
		// RULES R6.4, R6.6: after the end (and the close of a shared deal)
		// the deal, seed and salt are public.
		ok := a.CommitmentOK != nil && *a.CommitmentOK && a.Commitment == game.Commitment
		out.CommitmentOK = &ok
		if game.HasSeed {
			out.Seed = seedPtr(game.Seed)
		}
		h := hex.EncodeToString(game.Salt)
		out.Salt = &h
		if a.ReplayProblem != "" {
			p := a.ReplayProblem
			out.Problem = &p
		}
	}
	s.auditSolution(&out, game, recs, ended)
	return s.jsonReply(http.StatusOK, out).with("ETag", etag(game.Version))
}

// auditSolution fills the winnable deal's part of an audit (R7.2): the
// flag and the commitment always, the line and its check only once the
// deal may be revealed (reveal).
func (s *server) auditSolution(out *Audit, game *app.Game, recs []domain.RecordedEvent, reveal bool) {
	out.Winnable = game.Winnable
	var dealt domain.Event
	if len(recs) > 0 {
		if e, err := domain.DecodeEvent(recs[0].Version, recs[0].Type, recs[0].OccurredAt, recs[0].Payload); err == nil {
			dealt = e
		}
	}
	out.SolutionCommitment = nonEmpty(dealt.Data.SolutionCommitment)
	if out.SolutionCommitment == nil {
		out.SolutionCommitment = nonEmpty(game.SolutionCommitment)
	}
	if !game.Winnable || !reveal {
		return
	}
	out.Solution = make([]MoveRequest, len(game.Solution))
	for i, m := range game.Solution {
		out.Solution[i] = newMoveRequest(m)
	}
	r := domain.CheckSolution(dealt, game.Solution, game.Salt)
	ok := r.OK && r.Commitment == game.SolutionCommitment
	out.SolutionOK = &ok
}

// auditReads bounds how often the audit re-reads a game that moves while
// it reads the record and the log.
const auditReads = 3

// auditRead reads game id's record and whole log as of one moment: if a
// move lands between reading the record and the log, it reads again, so
// that a log longer or shorter than the record counts is a real fault.
func (s *server) auditRead(ctx context.Context, caller, id string) (*app.Game, []domain.RecordedEvent, error) {
	for attempt := 1; ; attempt++ {
		game, _, err := s.readable(ctx, caller, id)
		if err != nil {
			return nil, nil, err
		}
		recs, err := s.wholeLog(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		if len(recs) == game.Version || game.Status.Ended() || attempt == auditReads {
			return game, recs, nil
		}
		again, _, err := s.readable(ctx, caller, id)
		if err != nil {
			return nil, nil, err
		}
		if again.Version == game.Version {
			return game, recs, nil
		}
	}
}

// wholeLog reads every recorded event of game id, in version order.
func (s *server) wholeLog(ctx context.Context, id string) ([]domain.RecordedEvent, error) {
	var out []domain.RecordedEvent
	after := 0
	for {
		recs, err := s.cfg.Games.Log(ctx, id, after, ndjsonBatch)
		if err != nil {
			return nil, err
		}
		out = append(out, recs...)
		if len(recs) < ndjsonBatch {
			return out, nil
		}
		after = recs[len(recs)-1].Version
	}
}

// projects reports whether game's stored projection is that of state s:
// version, status, moves and score (app.Game.Project).
func projects(game *app.Game, s *domain.State) bool {
	var p app.Game
	p.Project(s)
	sameScore := (p.Score == nil) == (game.Score == nil) && (p.Score == nil || *p.Score == *game.Score)
	return p.Version == game.Version && p.Status == game.Status && p.Moves == game.Moves && sameScore
}

// readable loads game id for caller as every read does, with
// app.Games.Get (visibility, expiry on read). When the game exists but
// its log no longer loads (an event changed in the database, say), Get
// fails; then the record alone (app.Games.Record) is returned with a
// nil state under the same visibility rule, so the audit can name the
// broken version and the export can show the log as stored. Errors:
// domain.ErrNotFound, or Get's error.
func (s *server) readable(ctx context.Context, caller, id string) (*app.Game, *domain.State, error) {
	game, st, err := s.cfg.Games.Get(ctx, caller, id)
	if err == nil || errors.Is(err, domain.ErrNotFound) {
		return game, st, err
	}
	rec, rerr := s.cfg.Games.Record(ctx, id)
	if rerr != nil {
		return nil, nil, err
	}
	if ok, verr := s.cfg.Games.CanRead(ctx, rec, caller); verr != nil {
		return nil, nil, verr
	} else if !ok {
		return nil, nil, domain.ErrNotFound
	}
	s.log.WarnContext(ctx, "game log does not load; serving it as stored", "game", id, "err", err)
	return rec, nil, nil
}
