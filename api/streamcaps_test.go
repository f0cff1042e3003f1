package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
)

// streamFrom opens GET /v1/games/{game}/stream as token from the local
// address local (127.0.0.x: every loopback address reaches the test
// server). A 200 stream stays open until the test ends or close is
// called; any other answer is read whole and its problem returned.
func streamFrom(t *testing.T, e *env, local, game, token string) (status int, p api.Problem, retryAfter string, close func()) {
	t.Helper()
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	ctx, cancel := context.WithCancel(context.Background())
	hr, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/games/"+game+"/stream", nil)
	hr.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(hr)
	if err != nil {
		cancel()
		t.Fatalf("stream from %s: %v", local, err)
	}
	close = func() { cancel(); resp.Body.Close() }
	if resp.StatusCode == http.StatusOK {
		t.Cleanup(close)
		return resp.StatusCode, p, "", close
	}
	defer close()
	body, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("stream from %s: %d with a body that is not a problem: %s", local, resp.StatusCode, body)
	}
	return resp.StatusCode, p, resp.Header.Get("Retry-After"), func() {}
}

// TestStreamCaps: besides each player's bound, a client address and the
// whole server have one, so new players from one address cannot open
// streams without end, and a server full of streams refuses more with 429
// too_many_streams (Retry-After) instead of running out of file
// descriptors. A freed slot is usable again. The refusal goes through the
// one error mapping (problemFor), like every other problem.
func TestStreamCaps(t *testing.T) {
	t.Parallel()
	e := newStreamEnv(t, "postgres", streamOptions{heartbeat: 200 * time.Millisecond,
		maxStreams: 2, maxPerAddress: 3, maxAll: 4})
	type player struct{ token, game string }
	newPlayer := func(name string) player {
		_, token := e.newPlayer(name)
		var g api.Game
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", token: token,
			body: api.CreateGameRequest{Variant: "klondike"}}).decode(t, &g)
		return player{token, g.ID}
	}
	a, b, c := newPlayer("A"), newPlayer("B"), newPlayer("C")
	open := func(what, local string, p player, want int, scope string) func() {
		t.Helper()
		status, prob, ra, close := streamFrom(t, e, local, p.game, p.token)
		if status != want {
			t.Fatalf("%s: status %d (%s), want %d", what, status, prob.Detail, want)
		}
		if want == http.StatusTooManyRequests {
			if prob.Code != api.CodeTooManyStreams || prob.Status != 429 || ra != "1" || !strings.Contains(prob.Detail, scope) {
				t.Errorf("%s: %+v Retry-After %q; want too_many_streams naming %q, Retry-After 1", what, prob, ra, scope)
			}
		}
		return close
	}
	closeA := open("A's first", "127.0.0.1", a, 200, "")
	open("A's second", "127.0.0.1", a, 200, "")
	open("A's third: the player's bound", "127.0.0.1", a, 429, "you have 2")
	open("B's first", "127.0.0.1", b, 200, "")
	open("B's second from the same address: the address's bound", "127.0.0.1", b, 429, "your address has 3")
	open("B's second from another address", "127.0.0.2", b, 200, "")
	open("C's first: the server's bound", "127.0.0.2", c, 429, "the server holds as many streams as it can (4)")
	// Other requests are answered while streams are refused.
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + c.game, token: c.token})

	closeA()
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, _, _, _ := streamFrom(t, e, "127.0.0.2", c.game, c.token)
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot of a closed stream was not freed (status %d)", status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
