package api

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/openpatience/solitaire/domain"
)

// TestProblemFor pins the one error mapping, wrapped errors included.
func TestProblemFor(t *testing.T) {
	badCursor := errors.New("store: bad cursor")
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
		{domain.ErrBadVersion, 404, CodeVersionNotFound, ""},
		{wrap(domain.ErrStaleVersion), 412, CodeStaleVersion, ""},
		{wrap(domain.ErrConflict), 409, CodeConflict, ""},
		{&domain.OptionError{Option: "draw"}, 422, CodeInvalidOption, ""},
		{&domain.LayoutError{Reason: "card_count"}, 422, CodeInvalidLayout, "card_count"},
		{&domain.UnknownVariantError{ID: "spider"}, 422, CodeUnknownVariant, ""},
		{&http.MaxBytesError{Limit: 10}, 413, CodeBodyTooLarge, ""},
		{badBody("x"), 400, CodeInvalidBody, ""},
		{wrap(badCursor), 400, CodeInvalidParameter, ""},
	} {
		p, known := problemFor(tc.err, badCursor)
		if !known || p.Status != tc.status || p.Code != tc.code || p.Reason != tc.reason || p.Title == "" {
			t.Errorf("%v: %+v known=%v", tc.err, p, known)
		}
	}
	p, known := problemFor(errors.New("persistence: connection refused to 10.0.0.1"), nil)
	if known || p.Status != 500 || p.Code != CodeInternal || p.Detail != "an internal error occurred; quote the request id when reporting it" {
		t.Errorf("unknown error: %+v known=%v", p, known)
	}
}
