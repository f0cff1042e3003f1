package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// TestProblemFor pins the one error mapping, wrapped errors included.
func TestProblemFor(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("layer: %w", err) }
	for _, tc := range []struct {
		err    error
		status int
		code   string
		reason string
	}{
		{&domain.MoveError{Reason: domain.ReasonCardDoesNotFit}, 422, CodeIllegalMove, "card_does_not_fit"},
		{wrap(&domain.MoveError{Reason: domain.ReasonGameOver}), 409, CodeIllegalMove, "game_over"},
		{&domain.MoveError{Reason: domain.ReasonTimeExpired}, 409, CodeIllegalMove, "time_expired"},
		{wrap(domain.ErrNotFound), 404, CodeNotFound, ""},
		{app.ErrBadVersion, 404, CodeVersionNotFound, ""},
		{wrap(app.ErrStaleVersion), 412, CodeStaleVersion, ""},
		{wrap(domain.ErrConflict), 409, CodeConflict, ""},
		{&domain.OptionError{Option: "draw"}, 422, CodeInvalidOption, ""},
		{&domain.LayoutError{Reason: "card_count"}, 422, CodeInvalidLayout, "card_count"},
		{&domain.UnknownVariantError{ID: "spider"}, 422, CodeUnknownVariant, ""},
		{&http.MaxBytesError{Limit: 10}, 413, CodeBodyTooLarge, ""},
		{badBody("x"), 400, CodeInvalidBody, ""},
		{wrap(app.ErrBadCursor), 400, CodeInvalidParameter, ""},
		{wrap(app.ErrNoDuel), 404, CodeNotFound, ""},
		{wrap(app.ErrDuelEnded), 409, CodeDuelEnded, ""},
		{wrap(app.ErrDuelFull), 409, CodeDuelFull, ""},
		{wrap(&app.AlreadyJoinedError{GameID: "g1"}), 409, CodeDuelAlreadyJoined, ""},
		{wrap(&app.DailyAlreadyPlayedError{Variant: "klondike", GameID: "g2"}), 409, CodeDailyAlreadyPlayed, ""},
		{wrap(&app.FieldError{Field: "max_players", Detail: "x"}), 422, CodeInvalidField, ""},
		{&solverBusyError{cause: ErrSolverBusy}, 503, CodeSolverBusy, ""},
		{&solverBusyError{cause: &TooManySearchesError{Running: 1, Queued: 1, Per: "player"}}, 429, CodeTooManySearches, ""},
	} {
		p, known := problemFor(tc.err)
		if !known || p.Status != tc.status || p.Code != tc.code || p.Reason != tc.reason || p.Title == "" {
			t.Errorf("%v: %+v known=%v", tc.err, p, known)
		}
	}
	for _, tc := range []struct {
		err              error
		location, detail string
	}{
		{&app.AlreadyJoinedError{GameID: "g1"}, "/v1/games/g1", ""},
		{&app.AlreadyJoinedError{}, "", ""},
		{&app.DailyAlreadyPlayedError{Variant: "klondike", GameID: "g2"}, "/v1/games/g2", ""},
		{app.ErrNoDuel, "", "no such duel"},
		{domain.ErrNotFound, "", "no such game"},
	} {
		p, _ := problemFor(tc.err)
		if p.location != tc.location || tc.detail != "" && p.Detail != tc.detail {
			t.Errorf("%v: location %q detail %q, want %q %q", tc.err, p.location, p.Detail, tc.location, tc.detail)
		}
	}
	p, known := problemFor(errors.New("persistence: connection refused to 10.0.0.1"))
	if known || p.Status != 500 || p.Code != CodeInternal || p.Detail != "an internal error occurred; quote the request id when reporting it" {
		t.Errorf("unknown error: %+v known=%v", p, known)
	}
}

// TestFailClientClosed: a request whose client has gone (its context
// ended) and whose error is that context's is answered 499
// client_closed_request and not logged as a failure (debug only); any
// other error, a deadline of the server's own (while the client is there,
// or just as it leaves), stays a 500 logged as an error; a search cut
// short keeps its 503 solver_busy.
func TestFailClientClosed(t *testing.T) {
	var logs bytes.Buffer
	s := &server{log: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		ctx    context.Context
		err    error
		status int
		code   string
		level  string
	}{
		{gone, fmt.Errorf("persistence: append: %w", context.Canceled), StatusClientClosed, CodeClientClosed, "DEBUG"},
		{gone, errors.New("persistence: disk full"), http.StatusInternalServerError, CodeInternal, "ERROR"},
		{gone, fmt.Errorf("statement: %w", context.DeadlineExceeded), http.StatusInternalServerError, CodeInternal, "ERROR"},
		{context.Background(), fmt.Errorf("solver: %w", context.DeadlineExceeded), http.StatusInternalServerError, CodeInternal, "ERROR"},
		{gone, &solverBusyError{cause: context.Canceled}, http.StatusServiceUnavailable, CodeSolverBusy, ""},
	} {
		logs.Reset()
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest(http.MethodPost, "/v1/games/g1/moves", nil).WithContext(tc.ctx)
		r := s.fail(c, tc.err)
		var p Problem
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatal(err)
		}
		if r.status != tc.status || p.Status != tc.status || p.Code != tc.code || r.code != tc.code || p.Title == "" {
			t.Errorf("%v: status %d, problem %+v; want %d %s", tc.err, r.status, p, tc.status, tc.code)
		}
		if tc.level != "" && !strings.Contains(logs.String(), `"level":"`+tc.level+`"`) {
			t.Errorf("%v: logged %s, want level %s", tc.err, logs.String(), tc.level)
		}
	}
}
