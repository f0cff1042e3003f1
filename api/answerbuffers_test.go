package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/openpatience/solitaire/api"
)

// TestConcurrentAnswersKeepTheirBytes: a move's answer is written into a
// buffer that goes back to a pool once the answer is sent (api/server.go,
// answerBuffers), so a buffer given back too early would put one
// request's bytes into another's answer. Players draw in their own games
// at the same moment; every answer must be whole JSON of the requester's
// own game, at a version above the one before, with the ETag of that
// version, and a GET afterwards must give each game at its last answer's
// version.
func TestConcurrentAnswersKeepTheirBytes(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		const players, draws = 8, 40
		tokens, ids, first := make([]string, players), make([]string, players), make([]int, players)
		for i := range players {
			_, tokens[i] = e.newPlayer(fmt.Sprintf("p%d", i))
			var g api.Game
			e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "relaxed"},
				token: tokens[i]}).decode(t, &g)
			ids[i], first[i] = g.ID, g.Version
		}
		last := make([]int, players)
		errs := make(chan error, players)
		var wg sync.WaitGroup
		for i := range players {
			wg.Go(func() {
				errs <- drawAndCheck(e, tokens[i], ids[i], first[i], draws, &last[i])
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
		for i, id := range ids {
			var g api.Game
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id, token: tokens[i]}).decode(t, &g)
			if g.ID != id || g.Version != last[i] {
				t.Errorf("GET game %s: id %s version %d, want version %d (the last answer's)", id, g.ID, g.Version, last[i])
			}
		}
	})
}

// drawAndCheck plays n draws in game id (at version from) as token's
// player and checks each answer against the game and the version before
// it; *last is the last answer's version. It reports the first fault.
func drawAndCheck(e *env, token, id string, from, n int, last *int) error {
	body, _ := json.Marshal(api.MoveRequest{Type: "draw"})
	prev := from
	for k := range n {
		hr, err := newRequest(context.Background(), http.MethodPost, e.srv.URL+"/v1/games/"+id+"/moves", body, token, nil)
		if err != nil {
			return err
		}
		res, err := e.client.Do(hr)
		if err != nil {
			return fmt.Errorf("game %s draw %d: %v", id, k, err)
		}
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return fmt.Errorf("game %s draw %d: %v", id, k, err)
		}
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("game %s draw %d: status %d: %s", id, k, res.StatusCode, b)
		}
		var out api.MoveResult
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&out); err != nil || dec.More() {
			return fmt.Errorf("game %s draw %d: the answer is not one MoveResult (%v): %s", id, k, err, b)
		}
		if out.Game.ID != id {
			return fmt.Errorf("game %s draw %d: the answer is of game %s", id, k, out.Game.ID)
		}
		if out.Game.Version <= prev {
			return fmt.Errorf("game %s draw %d: version %d after %d", id, k, out.Game.Version, prev)
		}
		if tag := res.Header.Get("ETag"); tag != strconv.Quote(strconv.Itoa(out.Game.Version)) {
			return fmt.Errorf("game %s draw %d: ETag %s for version %d", id, k, tag, out.Game.Version)
		}
		prev = out.Game.Version
	}
	*last = prev
	return nil
}
