package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// Problem is an error response, RFC 9457 "Problem Details for HTTP APIs",
// served as application/problem+json. code is a stable machine word (see
// the constants Code*); reason, for a rejected move or layout, is the
// domain's stable word (e.g. card_does_not_fit, only_king_on_empty,
// game_over); param names the request part at fault; request_id is the
// X-Request-Id of the request, to quote when reporting a problem. detail
// never contains hidden information or server internals.
type Problem struct {
	Type      string `json:"type" example:"tag:openpatience.github.io,2026:problem/illegal_move"` // identifies the problem type (RFC 9457 §3.1.1)
	Title     string `json:"title" example:"Illegal move"`                                        // short summary of the problem type
	Status    int    `json:"status" example:"422"`                                                // the HTTP status code
	Detail    string `json:"detail" example:"a 7 of spades does not go on a 9 of hearts"`         // what went wrong with this request, for people
	Code      string `json:"code" example:"illegal_move"`                                         // stable machine word
	Reason    string `json:"reason,omitempty" example:"card_does_not_fit"`                        // illegal_move and invalid_layout: why, a stable word
	Param     string `json:"param,omitempty" example:"from"`                                      // the request part at fault: a field, query or header name
	RequestID string `json:"request_id,omitempty"`                                                // the X-Request-Id of the request

	location string // sent as the Location header: the caller's game a 409 names
} // @name Problem

// The stable problem codes (Problem.code). Clients switch on these: never
// rename one.
const (
	CodeInvalidBody          = "invalid_body"           // 400: malformed JSON, wrong type, unknown field, trailing data
	CodeInvalidParameter     = "invalid_parameter"      // 400: bad query, path or header value
	CodeUnauthorized         = "unauthorized"           // 401: no or unknown bearer token
	CodeNotFound             = "not_found"              // 404: no such game (or not visible to the caller), or route
	CodeVersionNotFound      = "version_not_found"      // 404: states/{version} outside 1..current
	CodeMethodNotAllowed     = "method_not_allowed"     // 405
	CodeIllegalMove          = "illegal_move"           // 422 (409 for reasons game_over, time_expired), with reason
	CodeConflict             = "conflict"               // 409: another write got there first; retry
	CodeStaleVersion         = "stale_version"          // 412: If-Match is not the game's version
	CodeBodyTooLarge         = "body_too_large"         // 413
	CodeUnsupportedMedia     = "unsupported_media_type" // 415: body not application/json
	CodeUnknownVariant       = "unknown_variant"        // 422
	CodeInvalidOption        = "invalid_option"         // 422: with param options.<name>
	CodeInvalidLayout        = "invalid_layout"         // 422: with reason (bad_card, pile_count, card_count, not_a_run, face_down_top, bad_syntax)
	CodeInvalidField         = "invalid_field"          // 422: a field's value is refused, with param
	CodeIdempotencyKeyReused = "idempotency_key_reused" // 422: same Idempotency-Key, different request
	CodeRateLimited          = "rate_limited"           // 429: too many requests; Retry-After says when to try again
	CodeNotReady             = "not_ready"              // 503: the database does not answer
	CodeDatabaseUnavailable  = "database_unavailable"   // 503: the database did not answer this request; Retry-After, then retry
	CodeDealNotReady         = "deal_not_ready"         // 503: no proven winnable deal was ready (R7.2); Retry-After, then retry
	CodeInternal             = "internal"               // 500
	CodeDuelEnded            = "duel_ended"             // 409: the duel takes no more players (ended, or past its deadline)
	CodeDuelFull             = "duel_full"              // 409: every seat of the duel is taken (it still runs)
	CodeDuelAlreadyJoined    = "duel_already_joined"    // 409: the caller already has a game in the duel (Location names it)
	CodeDailyAlreadyPlayed   = "daily_already_played"   // 409: the caller already has today's daily game (Location names it)
	CodeHintsNotAllowed      = "hints_not_allowed"      // 403: no hints on a shared deal, a duel's or a daily deal's game (R7.3)
	CodeGameSealed           = "game_sealed"            // 403: a shared deal's game before its competition closes (R6.6)
	CodeGameInProgress       = "game_in_progress"       // 409: the view is of ended games only (analysis, R7.4)
	CodeSolverBusy           = "solver_busy"            // 503: every solver worker is busy; Retry-After, then retry
	CodeTooManySearches      = "too_many_searches"      // 429: the caller's share of the solver (README "Limits") is in use; Retry-After, then retry
	CodeClientClosed         = "client_closed_request"  // 499: the client left before the answer (never seen by it; logs and metrics)
)

var titles = map[string]string{
	CodeClientClosed:         "Client closed request",
	CodeInvalidBody:          "Invalid request body",
	CodeInvalidParameter:     "Invalid parameter",
	CodeUnauthorized:         "Unauthorized",
	CodeNotFound:             "Not found",
	CodeVersionNotFound:      "No such version",
	CodeMethodNotAllowed:     "Method not allowed",
	CodeIllegalMove:          "Illegal move",
	CodeConflict:             "Conflict",
	CodeStaleVersion:         "Stale version",
	CodeBodyTooLarge:         "Request body too large",
	CodeUnsupportedMedia:     "Unsupported media type",
	CodeUnknownVariant:       "Unknown variant",
	CodeInvalidOption:        "Invalid option",
	CodeInvalidLayout:        "Invalid layout",
	CodeInvalidField:         "Invalid field",
	CodeIdempotencyKeyReused: "Idempotency key reused",
	CodeRateLimited:          "Too many requests",
	CodeTooManyStreams:       "Too many streams",
	CodeTooManyGames:         "Too many games in progress",
	CodeNotReady:             "Not ready",
	CodeDatabaseUnavailable:  "Database unavailable",
	CodeDealNotReady:         "Winnable deal not ready",
	CodeInternal:             "Internal server error",
	CodeDuelEnded:            "Duel has ended",
	CodeDuelFull:             "Duel is full",
	CodeDuelAlreadyJoined:    "Already joined",
	CodeDailyAlreadyPlayed:   "Daily deal already played",
	CodeHintsNotAllowed:      "Hints not allowed",
	CodeGameSealed:           "Game sealed",
	CodeGameInProgress:       "Game in progress",
	CodeSolverBusy:           "Solver busy",
	CodeTooManySearches:      "Too many searches",
}

// problemTypeBase prefixes a code to form the problem's type URI (a tag
// URI, RFC 4151: stable and unique, not meant to be fetched).
const problemTypeBase = "tag:openpatience.github.io,2026:problem/"

// newProblem is the problem of a code with a status and a detail.
func newProblem(status int, code, detail string) Problem {
	return Problem{Type: problemTypeBase + code, Title: titles[code], Status: status, Detail: detail, Code: code}
}

// requestError is a problem the api itself finds in a request (bad JSON,
// bad parameter, body too large, ...). Its text is written for the client.
type requestError struct {
	status int
	code   string
	param  string
	detail string
}

// Error is the detail, written for the client.
func (e *requestError) Error() string { return e.detail }

func badBody(detail string) error {
	return &requestError{status: http.StatusBadRequest, code: CodeInvalidBody, detail: detail}
}

func badParam(param, detail string) error {
	return &requestError{status: http.StatusBadRequest, code: CodeInvalidParameter, param: param, detail: detail}
}

func badField(param, detail string) error {
	return &requestError{status: http.StatusUnprocessableEntity, code: CodeInvalidField, param: param, detail: detail}
}

// unavailable is the behaviour of an error that means the database could
// not be reached (persistence.ErrUnavailable has it): the request may
// succeed later, so it is answered 503 with Retry-After, not 500.
type unavailable interface{ Unavailable() bool }

// UnavailableRetryAfter is the Retry-After of a 503 database_unavailable
// answer: long enough for a database restart or failover to be noticed,
// short enough that clients come back soon after (the pool reconnects on
// the next request).
const UnavailableRetryAfter = 2 * time.Second

// problemFor is the one place that maps errors to responses (STYLE.md
// "Errors"). The bool is false for an unexpected error: the problem is a
// generic 500 and the caller logs err.
//
// The mapping is tried in a fixed order of precedence, because one error
// may match several cases (an outage may arrive wrapped in a move error,
// a NotFoundError also matches ErrNotFound): requestProblem first, then
// stateProblem, then limitProblem; within each, the order of its cases.
func problemFor(err error) (Problem, bool) {
	for _, match := range []func(error) (Problem, bool){requestProblem, stateProblem, limitProblem} {
		if p, ok := match(err); ok {
			return p, true
		}
	}
	return newProblem(http.StatusInternalServerError, CodeInternal,
		"an internal error occurred; quote the request id when reporting it"), false
}

// requestProblem is the first part of problemFor: an outage, a proof not
// ready in time, and errors in what the request asked for (its body,
// move, variant, options, layout or deal). The bool is false when err is
// none of these, so that problemFor tries the next part.
func requestProblem(err error) (Problem, bool) {
	var (
		outage     unavailable
		reqErr     *requestError
		maxBytes   *http.MaxBytesError
		moveErr    *domain.MoveError
		variantErr *domain.UnknownVariantError
		optErr     *domain.OptionError
		layoutErr  *domain.LayoutError
		dealErr    *domain.DealError
	)
	switch {
	case errors.As(err, &outage) && outage.Unavailable():
		// First: an outage may surface wrapped in any other error. A write
		// answered so either happened whole or not at all.
		return newProblem(http.StatusServiceUnavailable, CodeDatabaseUnavailable,
			"the database is not reachable right now; try again after Retry-After seconds. A change "+
				"answered so was made whole or not at all: read the game, or resend the move with If-Match"), true
	case errors.Is(err, domain.ErrDealNotReady):
		// Before any other: a proof is never waited for long, and a
		// request that finds none ready in time comes back afterwards.
		return newProblem(http.StatusServiceUnavailable, CodeDealNotReady, (&domain.DealNotReadyError{}).Error()), true
	case errors.As(err, &reqErr):
		p := newProblem(reqErr.status, reqErr.code, reqErr.detail)
		p.Param = reqErr.param
		return p, true
	case errors.As(err, &maxBytes):
		return newProblem(http.StatusRequestEntityTooLarge, CodeBodyTooLarge,
			"the request body is larger than the limit of "+strconv.FormatInt(maxBytes.Limit, 10)+" bytes"), true
	case errors.As(err, &moveErr):
		return moveProblem(err, moveErr), true
	case errors.As(err, &variantErr):
		p := newProblem(http.StatusUnprocessableEntity, CodeUnknownVariant,
			"no such variant; GET /v1/variants lists them")
		p.Param = "variant"
		return p, true
	case errors.As(err, &optErr):
		p := newProblem(http.StatusUnprocessableEntity, CodeInvalidOption, optErr.Error())
		p.Param = "options." + optErr.Option
		return p, true
	case errors.As(err, &layoutErr):
		p := newProblem(http.StatusUnprocessableEntity, CodeInvalidLayout, layoutErr.Error())
		p.Reason = layoutErr.Reason
		p.Param = "layout"
		return p, true
	case errors.As(err, &dealErr):
		p := newProblem(http.StatusUnprocessableEntity, CodeInvalidField, dealErr.Error())
		p.Param = "deal"
		return p, true
	}
	return Problem{}, false
}

// moveProblem answers a rejected move (moveErr, found in err). A move on
// a game that has ended conflicts with the game's state rather than with
// the rules: 409. Every other rejection is 422. Reason carries the
// MoveError's reason so that clients can tell rejections apart.
func moveProblem(err error, moveErr *domain.MoveError) Problem {
	status := http.StatusUnprocessableEntity
	if errors.Is(err, domain.ErrGameOver) || errors.Is(err, domain.ErrTimeExpired) {
		status = http.StatusConflict
	}
	detail := moveErr.Detail
	if detail == "" {
		detail = "the move is not legal now"
	}
	p := newProblem(status, CodeIllegalMove, detail)
	p.Reason = string(moveErr.Reason)
	return p
}

// stateProblem is the second part of problemFor: errors that depend on
// the state of a game, duel or daily deal (a stale If-Match, an invalid
// field, a duel already joined, ended or full, a bad cursor or version,
// something not found, a concurrent change). The bool is false when err
// is none of these.
func stateProblem(err error) (Problem, bool) {
	var (
		fieldErr *app.FieldError
		joined   *app.AlreadyJoinedError
		played   *app.DailyAlreadyPlayedError
		notFound *app.NotFoundError
	)
	switch {
	case errors.Is(err, app.ErrStaleVersion):
		p := newProblem(http.StatusPreconditionFailed, CodeStaleVersion,
			"If-Match does not name the game's current version; nothing was changed")
		p.Param = "If-Match"
		return p, true
	case errors.As(err, &fieldErr):
		p := newProblem(http.StatusUnprocessableEntity, CodeInvalidField, fieldErr.Detail)
		p.Param = fieldErr.Field
		return p, true
	case errors.As(err, &joined):
		p := newProblem(http.StatusConflict, CodeDuelAlreadyJoined, joined.Error())
		if joined.GameID != "" {
			p.location = "/v1/games/" + joined.GameID
		}
		return p, true
	case errors.As(err, &played):
		p := newProblem(http.StatusConflict, CodeDailyAlreadyPlayed, played.Error())
		p.location = "/v1/games/" + played.GameID
		return p, true
	case errors.Is(err, app.ErrDuelEnded):
		return newProblem(http.StatusConflict, CodeDuelEnded, app.ErrDuelEnded.Error()), true
	case errors.Is(err, app.ErrDuelFull):
		return newProblem(http.StatusConflict, CodeDuelFull, app.ErrDuelFull.Error()), true
	case errors.Is(err, app.ErrBadCursor):
		p := newProblem(http.StatusBadRequest, CodeInvalidParameter, app.ErrBadCursor.Error())
		p.Param = "cursor"
		return p, true
	case errors.Is(err, app.ErrBadVersion):
		return newProblem(http.StatusNotFound, CodeVersionNotFound, "the game has no such version"), true
	case errors.As(err, &notFound):
		return newProblem(http.StatusNotFound, CodeNotFound, notFound.Error()), true
	case errors.Is(err, domain.ErrNotFound):
		return newProblem(http.StatusNotFound, CodeNotFound, "no such game"), true
	case errors.Is(err, domain.ErrConflict):
		return newProblem(http.StatusConflict, CodeConflict,
			"another request changed the game at the same time; nothing was changed, try again"), true
	}
	return Problem{}, false
}

// limitProblem is the last part of problemFor: a limit reached (games in
// progress, live streams, searches, solver workers) and what a game's
// rules withhold (hints on a shared deal, a sealed deal, the analysis of
// a game in progress). The bool is false when err is none of these.
func limitProblem(err error) (Problem, bool) {
	var (
		games    *TooManyGamesError
		streams  *TooManyStreamsError
		searches *TooManySearchesError
		busy     *solverBusyError
	)
	switch {
	case errors.As(err, &games):
		return newProblem(http.StatusConflict, CodeTooManyGames, games.Error()), true
	case errors.As(err, &streams):
		return newProblem(http.StatusTooManyRequests, CodeTooManyStreams, streams.Error()), true
	case errors.As(err, &searches):
		return newProblem(http.StatusTooManyRequests, CodeTooManySearches, searches.Error()), true
	case errors.As(err, &busy):
		return newProblem(http.StatusServiceUnavailable, CodeSolverBusy,
			"every solver worker is busy; try again after Retry-After seconds"), true
	case errors.Is(err, app.ErrHintsNotAllowed):
		return newProblem(http.StatusForbidden, CodeHintsNotAllowed,
			"hints are not given on a shared deal (a duel's or a daily deal's game, RULES R7.3); nothing was changed"), true
	case errors.Is(err, app.ErrSealed):
		return newProblem(http.StatusForbidden, CodeGameSealed,
			"the game is on a shared deal that stays secret until its competition closes (RULES R6.6); ask again after the close"), true
	case errors.Is(err, app.ErrGameInProgress):
		return newProblem(http.StatusConflict, CodeGameInProgress,
			"the game is still in progress; its analysis is given once it has ended"), true
	}
	return Problem{}, false
}
