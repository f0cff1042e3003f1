package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/persistence/pgtest"
)

// TestStreamsAtOpenFileLimit: the built server under `ulimit -n 1024`, on
// PostgreSQL. Players open live streams (8 each, the default) until the
// server refuses one; it refuses at its own bound (half the open-file
// limit, 512) with 429 too_many_streams, never by running out of
// descriptors, and while every stream is held and more are refused, other
// players' requests (a new player, a game, moves, reads) are answered at
// once. Before the bound, 129 players x 8 streams exhausted the
// descriptors and other requests timed out.
func TestStreamsAtOpenFileLimit(t *testing.T) {
	t.Parallel()
	wrapper := underOpenFileLimit(t, buildBinary(t), 1024)
	// New players and requests are not limited here: the test makes
	// streams from one address, and the per-address bounds (of streams
	// and of connections) are lifted so that the server's is the one
	// reached.
	p := startServerProcess(t, wrapper, "SOLITAIRE_ADDR=127.0.0.1:0", "DATABASE_URL="+pgtest.DSN(t),
		"SOLITAIRE_RATE_LIMIT=0", "SOLITAIRE_PLAYER_CREATE_LIMIT=0", "SOLITAIRE_MAX_STREAMS_PER_ADDRESS=100000",
		"SOLITAIRE_MAX_CONNS_PER_ADDRESS=100000")
	if !strings.Contains(p.logs.String(), `"max_streams":512`) {
		t.Fatalf("the server does not bound streams at 512 under ulimit -n 1024:\n%s", p.logs.String())
	}
	client := &http.Client{Timeout: 10 * time.Second}
	newGame := func() (token, game string) {
		t.Helper()
		var pl struct{ Token string }
		if s, err := jsonCall(client, "POST", p.base+"/v1/players", "", nil, map[string]string{"name": "p"}, &pl); s != 201 {
			t.Fatalf("new player: %d %v", s, err)
		}
		var g struct{ ID string }
		if s, err := jsonCall(client, "POST", p.base+"/v1/games", pl.Token, nil, map[string]string{"variant": "klondike"}, &g); s != 201 {
			t.Fatalf("new game: %d %v", s, err)
		}
		return pl.Token, g.ID
	}

	// Streams hold their connections; a refused one's connection goes
	// back to the pool and carries the next attempt.
	streams := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	open, refused := 0, 0
	var retryAfter string
	for player := 0; refused < 40; player++ {
		if player > 200 {
			t.Fatalf("no stream refused after %d players (%d streams open)", player, open)
		}
		token, game := newGame()
		for range 8 {
			req, _ := http.NewRequestWithContext(ctx, "GET", p.base+"/v1/games/"+game+"/stream", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := streams.Do(req)
			if err != nil {
				t.Fatalf("stream %d: %v (the server ran out of descriptors?)\n%s", open+1, err, tail(p.logs.String()))
			}
			switch resp.StatusCode {
			case http.StatusOK:
				open++
				defer resp.Body.Close()
			case http.StatusTooManyRequests:
				var prob struct{ Code string }
				err := jsonDecode(resp, &prob)
				if err != nil || prob.Code != "too_many_streams" {
					t.Fatalf("refused stream: %v %+v", err, prob)
				}
				refused++
				retryAfter = resp.Header.Get("Retry-After")
			default:
				t.Fatalf("stream %d: status %d", open+1, resp.StatusCode)
			}
		}
	}
	if open != 512 || retryAfter == "" {
		t.Errorf("%d streams open at the first refusal, want 512 (half of ulimit -n 1024); Retry-After %q", open, retryAfter)
	}

	// Everything else is answered, quickly, while the streams are held.
	var lat []time.Duration
	call := func(what, method, path, token string, body any, out any) {
		t.Helper()
		begin := time.Now()
		if s, err := jsonCall(client, method, p.base+path, token, nil, body, out); s/100 != 2 {
			t.Fatalf("%s while streams are refused: %d %v", what, s, err)
		}
		lat = append(lat, time.Since(begin))
	}
	for range 20 {
		var pl struct{ Token string }
		call("new player", "POST", "/v1/players", "", map[string]string{"name": "q"}, &pl)
		var g struct{ ID string }
		call("new game", "POST", "/v1/games", pl.Token, map[string]string{"variant": "klondike"}, &g)
		call("draw", "POST", "/v1/games/"+g.ID+"/moves", pl.Token, map[string]string{"type": "draw"}, nil)
		call("read", "GET", "/v1/games/"+g.ID, pl.Token, nil, nil)
		call("healthz", "GET", "/healthz", "", nil, nil)
	}
	slices.Sort(lat)
	if worst := lat[len(lat)-1]; worst > time.Second {
		t.Errorf("other requests answered in up to %v while streams were refused, want under 1 s", worst)
	}
	if strings.Contains(p.logs.String(), "too many open files") {
		t.Errorf("the server ran out of descriptors:\n%s", tail(p.logs.String()))
	}
	figure(t, "ulimit -n 1024: %d streams held, %d more refused (429 too_many_streams, Retry-After %s); %d other requests meanwhile, median %v, slowest %v, 0 failed",
		open, refused, retryAfter, len(lat), lat[len(lat)/2].Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
}

// underOpenFileLimit is a script that runs bin under `ulimit -n nofile`.
func underOpenFileLimit(t *testing.T, bin string, nofile int) string {
	t.Helper()
	wrapper := filepath.Join(t.TempDir(), "limited")
	script := fmt.Sprintf("#!/bin/sh\nulimit -n %d || exit 1\nexec %s\n", nofile, bin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper
}

// tail is the end of a log, for failure messages.
func tail(s string) string {
	if len(s) > 4000 {
		return s[len(s)-4000:]
	}
	return s
}

// jsonDecode reads a JSON answer and closes its body.
func jsonDecode(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
