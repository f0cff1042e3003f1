package api

import (
	"context"
	"strconv"

	"github.com/gin-gonic/gin"
)

// CodeTooManyGames is the problem code of POST /v1/games refused because
// the caller has Config.MaxGamesInProgress games in progress (409: it
// conflicts with the player's state; finishing or resigning one frees a
// place).
const CodeTooManyGames = "too_many_games"

// InProgressCounter counts a player's games in progress. The persistence
// Store implements it.
type InProgressCounter interface {
	// CountInProgress is min(owner's games in progress, limit).
	CountInProgress(ctx context.Context, owner string, limit int) (int, error)
}

// TooManyGamesError is the refusal of a new game at the player's bound of
// games in progress (Max); problemFor answers it 409 too_many_games.
type TooManyGamesError struct{ Max int }

// Error says what to do, for the client.
func (e *TooManyGamesError) Error() string {
	return "you have " + strconv.Itoa(e.Max) + " games in progress, the most allowed; " +
		"finish or resign one (GET /v1/games?status=in_progress lists them)"
}

// belowGameBound holds the caller's lock of game creation and checks that
// it has fewer than Config.MaxGamesInProgress games in progress; the
// caller creates its game and then unlocks. The lock makes one process's
// concurrent creations count one after another; servers sharing a
// database may together exceed the bound by one game each at most.
func (s *server) belowGameBound(c *gin.Context) (unlock func(), err error) {
	if s.cfg.MaxGamesInProgress <= 0 {
		return func() {}, nil
	}
	player := playerOf(c).ID
	unlock = s.locks.lock("games-in-progress:" + player)
	n, err := s.cfg.InProgress.CountInProgress(c.Request.Context(), player, s.cfg.MaxGamesInProgress)
	if err != nil {
		unlock()
		return nil, err
	}
	if n >= s.cfg.MaxGamesInProgress {
		unlock()
		return nil, &TooManyGamesError{Max: s.cfg.MaxGamesInProgress}
	}
	return unlock, nil
}
