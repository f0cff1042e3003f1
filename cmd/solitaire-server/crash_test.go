package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openpatience/solitaire/persistence/pgtest"
)

// Sizes of the crash runs: clients, the acknowledged moves a run reaches
// at least, and the faults spread over it.
const (
	crashClients = 8
	crashMoves   = 3000
	crashFaults  = 3
)

// crashClient plays its own relaxed game with draws only (always legal),
// each with an Idempotency-Key of its own and no If-Match, and sends every
// request that gets no answer (connection lost, 5xx) again with the same
// key until it is answered: a client that only knows keys.
type crashClient struct {
	token, game string
	acked       int // moves answered 200
	events      int // events those answers listed
	version     int // the game's version in the latest answer
	gaps        int // answers whose version is not the previous one plus their events
	retries     int // requests sent again with the same key
	status500   int // 500 answers (retried)
	other       []string
}

// run plays until stop, finishing the move in hand; progress counts the
// acknowledged moves of every client, for pacing the faults.
func (c *crashClient) run(client *http.Client, base string, stop *atomic.Bool, progress *atomic.Int64, deadline time.Time) {
	for i := 0; !stop.Load(); i++ {
		key := "move-" + strconv.Itoa(i)
		for {
			if time.Now().After(deadline) {
				c.other = append(c.other, "no answer before the deadline for "+key)
				return
			}
			var res struct {
				Game struct {
					Version int `json:"version"`
				} `json:"game"`
				Events []json.RawMessage `json:"events"`
			}
			s, err := jsonCall(client, "POST", base+"/v1/games/"+c.game+"/moves", c.token,
				map[string]string{"Idempotency-Key": key}, map[string]string{"type": "draw"}, &res)
			if err != nil || s >= 500 {
				if s == http.StatusInternalServerError {
					c.status500++
				}
				c.retries++
				time.Sleep(20 * time.Millisecond)
				continue
			}
			if s != http.StatusOK {
				c.other = append(c.other, fmt.Sprintf("%s: status %d", key, s))
				return
			}
			if res.Game.Version != c.version+len(res.Events) {
				c.gaps++
			}
			c.acked++
			progress.Add(1)
			c.events += len(res.Events)
			c.version = res.Game.Version
			break
		}
	}
}

// TestCrashRetries runs the built server under 8 clients that send moves
// with an Idempotency-Key and no If-Match, and retry every unanswered
// request with the same key until it is answered, while faults strike:
// kill -9 of the server (then a restart on the same database), on SQLite
// and on PostgreSQL, and an immediate stop of PostgreSQL (a throwaway
// cluster of the test's own, then started again). Afterwards the event
// logs must hold exactly the events the answers listed: no move applied
// twice (a duplicate is an event no answer listed, since every key was
// answered), none lost, and every chain verifies.
func TestCrashRetries(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, run := range []struct{ name, backend, fault string }{
		{"kill9/sqlite", "sqlite", "kill"},
		{"kill9/postgres", "postgres", "kill"},
		{"pgstop/postgres", "postgres", "pgstop"},
	} {
		t.Run(run.name, func(t *testing.T) {
			t.Parallel()
			port, err := freePort()
			if err != nil {
				t.Fatal(err)
			}
			env := []string{"SOLITAIRE_ADDR=127.0.0.1:" + strconv.Itoa(port), "SOLITAIRE_RATE_LIMIT=0"}
			var cluster *pgtest.Cluster
			switch {
			case run.fault == "pgstop":
				cluster = pgtest.NewCluster(t)
				env = append(env, "DATABASE_URL="+cluster.URL)
			case run.backend == "postgres":
				env = append(env, "DATABASE_URL="+pgtest.DSN(t))
			default:
				env = append(env, "SOLITAIRE_SQLITE_PATH="+filepath.Join(t.TempDir(), "solitaire.db"))
			}
			p := startServerProcess(t, bin, env...)
			base := p.base
			client := &http.Client{Timeout: 10 * time.Second}
			clients := make([]*crashClient, crashClients)
			for i := range clients {
				c := &crashClient{}
				c.token, c.game, c.version = relaxedGame(t, client, base, "c"+strconv.Itoa(i))
				clients[i] = c
			}

			var stop atomic.Bool
			var progress atomic.Int64
			deadline := time.Now().Add(5 * time.Minute)
			var wg sync.WaitGroup
			for _, c := range clients {
				wg.Go(func() { c.run(client, base, &stop, &progress, deadline) })
			}
			acked := func() int { return int(progress.Load()) }
			var faults []string
			began := time.Now()
			for f := 1; f <= crashFaults; f++ {
				for acked() < f*crashMoves/(crashFaults+1) && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				at := acked()
				switch run.fault {
				case "kill":
					p.cmd.Process.Kill() // SIGKILL: no shutdown of any kind
					<-p.done
					p = startServerProcess(t, bin, env...)
				case "pgstop":
					cluster.Crash()
					time.Sleep(300 * time.Millisecond)
					if err := cluster.Start(); err != nil {
						t.Fatal(err)
					}
				}
				faults = append(faults, strconv.Itoa(at))
			}
			for acked() < crashMoves && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			stop.Store(true)
			wg.Wait()
			elapsed := time.Since(began)

			var total, events, logged, duplicates, lost, gaps, retries, s500 int
			for i, c := range clients {
				if len(c.other) > 0 {
					t.Errorf("client %d: %v", i, c.other)
				}
				inLog, twice, missing := logAgainstAnswers(t, client, base, c.token, c.game, c.events, c.version)
				duplicates, lost = duplicates+twice, lost+missing
				total, events, logged, gaps = total+c.acked, events+c.events, logged+inLog, gaps+c.gaps
				retries, s500 = retries+c.retries, s500+c.status500
			}
			if total < crashMoves {
				t.Errorf("%d moves acknowledged, want at least %d", total, crashMoves)
			}
			if duplicates != 0 || lost != 0 || gaps != 0 {
				t.Errorf("moves applied twice %d, lost %d, answers out of sequence %d", duplicates, lost, gaps)
			}
			figure(t, "%d clients with Idempotency-Key and no If-Match, %d faults (%s) after %s acknowledged moves; "+
				"%d moves acknowledged (%d events) in %v, %d events in the logs, applied twice %d, lost %d, "+
				"requests sent again %d (500s among the answers %d)",
				crashClients, crashFaults, run.fault, fmt.Sprint(faults), total, events, elapsed.Round(time.Second),
				logged, duplicates, lost, retries, s500)
		})
	}
}

// relaxedGame creates a player called name and a relaxed game of theirs
// (draws are always legal) on the server at base, and returns the
// player's token, the game's id and its version. It calls t.Fatal if
// either is not created.
func relaxedGame(t *testing.T, client *http.Client, base, name string) (token, game string, version int) {
	t.Helper()
	var pl struct {
		Token string `json:"token"`
	}
	if s, err := jsonCall(client, "POST", base+"/v1/players", "", nil, map[string]string{"name": name}, &pl); err != nil || s != 201 {
		t.Fatalf("player: %d %v", s, err)
	}
	var g struct {
		ID      string `json:"id"`
		Version int    `json:"version"`
	}
	if s, err := jsonCall(client, "POST", base+"/v1/games", pl.Token, nil, map[string]string{"variant": "relaxed"}, &g); err != nil || s != 201 {
		t.Fatalf("game: %d %v", s, err)
	}
	return pl.Token, g.ID, g.Version
}

// logAgainstAnswers compares game's log on the server at base with what
// the answers to its moves said: answered events in all, and version the
// latest answer gave. It returns the events after the deal in the log,
// how many of them no answer listed (moves applied twice, when every
// request was answered in the end) and how many answered versions the log
// lacks (moves lost). It reports a chain that does not verify with
// t.Errorf, and calls t.Fatal if the game cannot be read.
func logAgainstAnswers(t *testing.T, client *http.Client, base, token, game string, events, version int) (inLog, twice, lost int) {
	t.Helper()
	var g struct {
		Version int `json:"version"`
	}
	if s, err := jsonCall(client, "GET", base+"/v1/games/"+game, token, nil, nil, &g); err != nil || s != 200 {
		t.Fatalf("game %s: %d %v", game, s, err)
	}
	var audit struct {
		ChainOK bool `json:"chain_ok"`
	}
	if s, err := jsonCall(client, "GET", base+"/v1/games/"+game+"/audit", token, nil, nil, &audit); err != nil || s != 200 || !audit.ChainOK {
		t.Errorf("game %s: audit %d %v, chain ok %v", game, s, err, audit.ChainOK)
	}
	inLog = g.Version - 1
	return inLog, max(0, inLog-events), max(0, version-g.Version)
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
