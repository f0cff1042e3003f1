package main

import (
	"bytes"
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// TestFloorRounds: on the server's own schema, with a game the store made,
// each of floor's three pgbench scripts runs and writes what it claims to:
// the baseline a row of its table per transaction, the event script
// events of its games and no projection, the append script events and the
// games row's version in step with them. Two clients, two rounds, so that
// the per-client games and the per-round versions are both exercised.
func TestFloorRounds(t *testing.T) {
	t.Parallel()
	pgbench, err := findPgbench()
	if err != nil {
		t.Fatalf("pgbench is needed (Debian: postgresql-client): %v", err)
	}
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	store, err := persistence.Open(ctx, persistence.Config{DatabaseURL: dsn})
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := app.NewGames(store).Create(ctx, app.NewGame{Owner: "floor", Variant: "relaxed"})
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	cfg := floorConfig{Clients: 2, Rounds: 2, Duration: time.Second}
	var w bytes.Buffer
	out, err := floorRounds(ctx, pgbench, dsn, g.ID, t.TempDir(), cfg, &w)
	if err != nil {
		t.Fatalf("%v\n%s", err, w.String())
	}
	if len(out) != 3 {
		t.Fatalf("%d results, want 3", len(out))
	}
	for _, r := range out {
		if len(r.TPS) != 2 || r.TPS[0] <= 0 || r.TPS[1] <= 0 {
			t.Errorf("%s: TPS %v, want two positive figures", r.Name, r.TPS)
		}
	}
	if !strings.Contains(w.String(), "round  2") {
		t.Errorf("no second round in the report:\n%s", w.String())
	}

	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	if n := count(`SELECT count(*) FROM baseline_moves`); n < 2 {
		t.Errorf("baseline rows: %d", n)
	}
	for c := range 2 {
		floor, app := "floor-"+string(rune('0'+c)), "append-"+string(rune('0'+c))
		// The event script: events beyond the deal in both rounds' ranges,
		// and the games row still at the deal.
		if n := count(`SELECT count(*) FROM events WHERE game_id = $1 AND version BETWEEN 100000002 AND 199999999`, floor); n < 1 {
			t.Errorf("%s: %d events of round 1", floor, n)
		}
		if n := count(`SELECT count(*) FROM events WHERE game_id = $1 AND version BETWEEN 200000002 AND 299999999`, floor); n < 1 {
			t.Errorf("%s: %d events of round 2", floor, n)
		}
		if v := count(`SELECT version FROM games WHERE id = $1`, floor); v != 1 {
			t.Errorf("%s: games.version %d, want 1 (the event script writes no projection)", floor, v)
		}
		// The append script: versions 1..n without a gap, the row at n.
		n := count(`SELECT count(*) FROM events WHERE game_id = $1`, app)
		if v := count(`SELECT version FROM games WHERE id = $1`, app); n < 3 || v != n ||
			count(`SELECT max(version) FROM events WHERE game_id = $1`, app) != n {
			t.Errorf("%s: %d events, games.version %d: want the row at the last of 1..n", app, n, v)
		}
	}
}
