package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openpatience/solitaire/persistence/pgtest"
)

// TestBehindPgBouncer: the built server with DATABASE_URL pointing at a
// real PgBouncer in transaction pooling mode (its own process, started by
// pgtest.Bouncer), with nothing else set, and with direct URLs for the
// migrations and the LISTEN connection. Each starts on a fresh database
// (migrations through the pooler in the first case), 16 players play
// concurrently with no 5xx (pgx's named prepared statements fail there:
// `prepared statement "stmtcache_…" already exists`), and a live stream of
// one game, served by a second server on the same pooler, sees each of its
// moves within 1 s of the move's answer (a LISTEN through a transaction
// pooler hears nothing, and streams would lag until the 15 s heartbeat):
// with the direct listen URL by LISTEN/NOTIFY, without it by polling.
func TestBehindPgBouncer(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, c := range []struct {
		name   string
		direct bool // set the direct URLs
	}{{"pooler only", false}, {"direct listen and migrate URLs", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			direct := pgtest.DSN(t)
			env := []string{"SOLITAIRE_ADDR=127.0.0.1:0", "DATABASE_URL=" + pgtest.Bouncer(t, direct),
				"SOLITAIRE_RATE_LIMIT=0", "SOLITAIRE_PLAYER_CREATE_LIMIT=0"}
			if m := os.Getenv("TEST_EXEC_MODE"); m != "" {
				env = append(env, "SOLITAIRE_DB_EXEC_MODE="+m)
			}
			if c.direct {
				env = append(env, "SOLITAIRE_MIGRATE_DATABASE_URL="+direct, "SOLITAIRE_LISTEN_DATABASE_URL="+direct)
			}
			p := startServerProcess(t, bin, env...)
			if !strings.Contains(p.logs.String(), "connection pooler") {
				t.Errorf("the server did not detect the pooler:\n%s", tail(p.logs.String()))
			}
			// The stream is served by a second server: it hears of the
			// first one's appends through the database.
			watcher := startServerProcess(t, bin, env...)
			moves, fiveXX, lags := playBehind(t, p.base, watcher.base, 16, 30)
			if fiveXX != 0 {
				t.Errorf("%d answers 5xx of %d moves behind PgBouncer:\n%s", fiveXX, moves, tail(p.logs.String()))
			}
			if strings.Contains(p.logs.String(), "stmtcache") || strings.Contains(p.logs.String(), "prepared statement") {
				t.Errorf("prepared statements behind the pooler:\n%s", tail(p.logs.String()))
			}
			slices.Sort(lags)
			if len(lags) == 0 {
				t.Fatal("the stream saw no move")
			}
			worst := lags[len(lags)-1]
			if worst > time.Second {
				t.Errorf("the stream saw a move %v after its answer, want at most 1 s (lags %v)", worst, lags)
			}
			figure(t, "PgBouncer 1.x transaction pooling, %s: 16 players, %d moves, %d answers 5xx; stream lag behind the move's answer median %v, worst %v (%d events)",
				c.name, moves, fiveXX, lags[len(lags)/2].Round(time.Millisecond), worst.Round(time.Millisecond), len(lags))
		})
	}
}

// playBehind has players play up to perPlayer legal moves each at once on
// the server at base, with a live stream on the first player's game served
// by the server at streamBase. It
// returns the moves answered, how many answers (of any request) were 5xx,
// and for each event of the streamed game how long after its move's
// answer the stream delivered it (0 if before).
func playBehind(t *testing.T, base, streamBase string, players, perPlayer int) (moves int, fiveXX int64, lags []time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: 20 * time.Second}
	var bad atomic.Int64
	call := func(method, path, token string, body, out any) int {
		s, err := jsonCall(client, method, base+path, token, nil, body, out)
		if err != nil {
			t.Errorf("%s %s: %v", method, path, err)
		}
		if s >= 500 {
			bad.Add(1)
		}
		return s
	}
	type player struct{ token, game string }
	ps := make([]player, players)
	for i := range ps {
		var pl struct{ Token string }
		if s := call("POST", "/v1/players", "", map[string]string{"name": "p" + strconv.Itoa(i)}, &pl); s != 201 {
			t.Fatalf("new player: %d", s)
		}
		var g struct{ ID string }
		if s := call("POST", "/v1/games", pl.Token, map[string]string{"variant": "klondike"}, &g); s != 201 {
			t.Fatalf("new game: %d", s)
		}
		ps[i] = player{pl.Token, g.ID}
	}

	// The stream of the first game: the arrival of each event id.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", streamBase+"/v1/games/"+ps[0].game+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+ps[0].token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v", err, resp)
	}
	var mu sync.Mutex
	arrived := map[int]time.Time{}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "id:"); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				mu.Lock()
				arrived[n] = time.Now()
				mu.Unlock()
			}
		}
	}()

	answered := make([]map[int]time.Time, players) // version -> answer time, per player
	var total atomic.Int64
	var wg sync.WaitGroup
	for i, pl := range ps {
		answered[i] = map[int]time.Time{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < perPlayer; n++ {
				var legal struct {
					Moves []map[string]any `json:"moves"`
				}
				if s := call("GET", "/v1/games/"+pl.game+"/legal-moves", pl.token, nil, &legal); s != 200 {
					return
				}
				var m map[string]any
				for k := range legal.Moves {
					if c := legal.Moves[(n+k)%len(legal.Moves)]; c["type"] != "resign" {
						m = c
						break
					}
				}
				if m == nil {
					return
				}
				var res struct {
					Game struct{ Version int } `json:"game"`
				}
				if s := call("POST", "/v1/games/"+pl.game+"/moves", pl.token, m, &res); s != 200 {
					t.Errorf("move %v: %d", m, s)
					return
				}
				answered[i][res.Game.Version] = time.Now()
				total.Add(1)
				if i == 0 {
					time.Sleep(20 * time.Millisecond) // the stream's moves spread over the run
				}
			}
		}()
	}
	wg.Wait()
	// Let the stream catch up (at most a few seconds), then compare.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		done := true
		for v := range answered[0] {
			if _, ok := arrived[v]; !ok {
				done = false
			}
		}
		mu.Unlock()
		if done {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for v, at := range answered[0] {
		got, ok := arrived[v]
		if !ok {
			t.Errorf("the stream never delivered version %d", v)
			continue
		}
		lags = append(lags, max(0, got.Sub(at)))
	}
	return int(total.Load()), bad.Load(), lags
}
