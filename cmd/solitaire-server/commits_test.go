package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/openpatience/solitaire/persistence/pgtest"
)

// maxCommitsPerMove is the steady-state bound on PostgreSQL transactions
// per move: the move's append (shared with other games' in group commit)
// and nothing else on its path; the rest (notifications, the token
// look-up of a new player, the sweeper) is a few per second in all.
const maxCommitsPerMove = 1.05

// commitsPerMove runs the built server on database dsn, lets clients
// players each play moves draws (with an Idempotency-Key each if keyed),
// and returns the PostgreSQL transactions committed in the database per
// move (pg_stat_database.xact_commit, read after the server has exited so
// that every backend has reported its counts), less what a server's start
// and shutdown cost without any move.
func commitsPerMove(t *testing.T, bin, dsn string, players, moves int, keyed bool) float64 {
	t.Helper()
	env := []string{"SOLITAIRE_ADDR=127.0.0.1:0", "DATABASE_URL=" + dsn, "SOLITAIRE_RATE_LIMIT=0",
		// The sweeper and the transparency log's sequencer run a few
		// queries every interval whatever the load (about one transaction
		// a second together): a cost per second, not per move, so they are
		// left out here.
		"SOLITAIRE_SWEEP_EVERY=1h", "SOLITAIRE_LOG_EVERY=1h"}
	client := &http.Client{Timeout: 30 * time.Second}
	p := startServerProcess(t, bin, env...)
	type player struct{ token, game string }
	ps := make([]player, players)
	for i := range ps {
		var pl struct {
			Token string `json:"token"`
		}
		if s, err := jsonCall(client, "POST", p.base+"/v1/players", "", nil, map[string]string{"name": "p" + strconv.Itoa(i)}, &pl); err != nil || s != 201 {
			t.Fatalf("player: %d %v", s, err)
		}
		var g struct {
			ID string `json:"id"`
		}
		if s, err := jsonCall(client, "POST", p.base+"/v1/games", pl.Token, nil, map[string]string{"variant": "relaxed"}, &g); err != nil || s != 201 {
			t.Fatalf("game: %d %v", s, err)
		}
		ps[i] = player{pl.Token, g.ID}
	}
	stopServer(t, p)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// The counts are read from another database of the server, so that
	// reading them adds no transaction to the database counted.
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	u.Path = "/postgres"
	admin, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	admin.SetMaxOpenConns(1)
	// Autovacuum's transactions in the database are counted too, at its
	// own pace (table maintenance, not part of a move): off for the tables
	// of this test's database.
	for _, table := range []string{"players", "games", "events", "snapshots", "idempotency_keys"} {
		if _, err := db.Exec(`ALTER TABLE ` + table + ` SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)`); err != nil {
			t.Fatal(err)
		}
	}
	// A server's start and shutdown without moves (migrations checked,
	// the sweeper's and the purge's first runs, the listener) is counted
	// on its own and taken off: it is not part of a move's cost.
	db.Close() // its own transactions are done: autovacuum off
	start := commits(t, admin, name)
	stopServer(t, startServerProcess(t, bin, env...))
	before := commits(t, admin, name)
	overhead := before - start

	p = startServerProcess(t, bin, env...)
	var wg sync.WaitGroup
	errs := make([]error, players)
	for i, pl := range ps {
		wg.Go(func() {
			for m := range moves {
				h := map[string]string{}
				if keyed {
					h["Idempotency-Key"] = fmt.Sprintf("m-%d", m)
				}
				s, err := jsonCall(client, "POST", p.base+"/v1/games/"+pl.game+"/moves", pl.token, h, map[string]string{"type": "draw"}, nil)
				if err == nil && s != 200 {
					err = fmt.Errorf("status %d", s)
				}
				if err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	stopServer(t, p)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("player %d: %v", i, err)
		}
	}
	after := commits(t, admin, name)
	t.Logf("%d commits for %d moves; a start and shutdown alone: %d", after-before, players*moves, overhead)
	return float64(after-before-overhead) / float64(players*moves)
}

// stopServer ends p with SIGTERM (a graceful shutdown closes its pool, so
// its backends exit and report their statistics) and waits for it.
func stopServer(t *testing.T, p *serverProcess) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop")
	}
}

// commits is database name's pg_stat_database.xact_commit, read through
// admin (a connection to another database of the server) once no backend
// is connected to name (each reports its counts when it exits).
func commits(t *testing.T, admin *sql.DB, name string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		var others int
		err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, name).Scan(&others)
		if err != nil {
			t.Fatal(err)
		}
		if others == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d connections to the database stay open", others)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// Statistics reach the shared counters up to a second after a
	// backend's exit is visible.
	time.Sleep(1500 * time.Millisecond)
	var n int64
	if err := admin.QueryRowContext(ctx, `SELECT xact_commit FROM pg_stat_database, pg_stat_clear_snapshot()
		WHERE datname = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCommitsPerMove: on PostgreSQL a move costs at most 1.05 committed
// transactions in steady state, counted by PostgreSQL itself
// (pg_stat_database.xact_commit), with one player and with 16 at once,
// with and without an Idempotency-Key. A count, not a timing: it holds on
// a loaded machine.
func TestCommitsPerMove(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, c := range []struct {
		players, moves int
		keyed          bool
	}{{1, 1000, false}, {1, 1000, true}, {16, 100, false}, {16, 100, true}} {
		name := fmt.Sprintf("players=%d/keyed=%v", c.players, c.keyed)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			per := commitsPerMove(t, bin, pgtest.DSN(t), c.players, c.moves, c.keyed)
			figure(t, "%d players × %d draws (Idempotency-Key: %v): %.3f commits per move (pg_stat_database.xact_commit)",
				c.players, c.moves, c.keyed, per)
			if per > maxCommitsPerMove {
				t.Errorf("%.3f commits per move, want at most %.2f", per, maxCommitsPerMove)
			}
		})
	}
}
