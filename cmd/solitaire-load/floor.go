package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openpatience/solitaire/persistence/pgurl"
)

// The floor: what a move's statement costs PostgreSQL next to the
// baseline's, with no HTTP, no Go and no load generator in between. At one
// client nothing is shared (no batch, no group commit), so a request's time
// is the sum of its parts on one path, and a move whose statement alone is
// slower than the baseline's INSERT cannot be as fast as the baseline's
// whole request unless the rest of its path is faster than the baseline's
// too (it is the same gin, pgx and generator, doing more).
//
// Three pgbench scripts on the product's own schema (the server's
// migrations, a real game row copied once per client), alternated round
// by round so that the machine's drift falls on all three alike:
//
//   - baseline: the baseline server's INSERT (baseline.go) with the values
//     it gets under compare's load (game ids b0, b1, …, the type 'draw',
//     a number for the time), the type written in rather than bound;
//   - event: the least a move must write, one events row of a draw (a
//     41-byte payload, as the server writes it, and two 32-byte hashes),
//     with no projection update;
//   - append: the event and the games row's projection in one statement,
//     the shape of the product's appendEventSQL (a move of one event
//     without a receipt), with literals for its parameters and no version
//     check or ranked update.

// floorConfig describes a floor run.
type floorConfig struct {
	PG       string        // admin postgres:// URL of a role that may CREATE DATABASE (loopback)
	Clients  int           // pgbench clients (1: nothing shared)
	Rounds   int           // alternations of the three scripts
	Duration time.Duration // of each pgbench run
	Pgbench  string        // the pgbench binary; "" finds it
	Server   string        // the solitaire-server binary, run once to migrate; "" builds it
}

// defaultFloorConfig is the configuration the flags start from: one
// client (nothing shared), ten rounds of 4 s runs.
func defaultFloorConfig() floorConfig {
	return floorConfig{PG: defaultBenchConfig().PG, Clients: 1, Rounds: 10, Duration: 4 * time.Second}
}

// check reports a configuration out of its bounds: 1..90 clients (the
// server's default of 100 connections), 1..20 rounds (the event script's
// versions start at (round+1)·10⁸, within PostgreSQL's integer with room to
// spare), runs of whole seconds from 1 s to 10 min (pgbench's -T).
func (cfg floorConfig) check() error {
	if cfg.Clients < 1 || cfg.Clients > 90 || cfg.Rounds < 1 || cfg.Rounds > 20 ||
		cfg.Duration < time.Second || cfg.Duration > maxDuration || cfg.Duration%time.Second != 0 {
		return fmt.Errorf("floor: want 1..90 clients, 1..20 rounds, runs of whole seconds 1s..%s (got %d, %d, %s)",
			maxDuration, cfg.Clients, cfg.Rounds, cfg.Duration)
	}
	return nil
}

// floorScripts are the three statements, in the order each round runs
// them. :client_id is pgbench's (0-based); :n counts up from -D n=…, set
// per round so that no two rounds write one (game, version).
var floorScripts = []struct{ Name, Body string }{
	{"baseline", `\set v random(1, 1000000000)
INSERT INTO baseline_moves (game_id, type, at) VALUES ('b' || :client_id, 'draw', :v) RETURNING id;
`},
	{"event", `\set v random(1, 1000000000)
\set n :n + 1
INSERT INTO events (game_id, version, type, payload, occurred_at, prev_hash, hash)
VALUES ('floor-' || :client_id, :n, 'stock_drawn', ` + floorPayload + `, :v, ` + floorHashA + `, ` + floorHashB + `)
RETURNING version, position;
`},
	{"append", `\set v random(1, 1000000000)
WITH g AS (UPDATE games SET version = version + 1, status = 'in_progress', moves = moves + 1, score = NULL,
	elapsed_ms = :v, finished_at = NULL, updated_at = :v WHERE id = 'append-' || :client_id RETURNING id, version)
INSERT INTO events (game_id, version, type, payload, occurred_at, prev_hash, hash)
SELECT g.id, g.version, 'stock_drawn', ` + floorPayload + `, :v, ` + floorHashA + `, ` + floorHashB + ` FROM g
RETURNING version, position;
`},
}

// A draw's event payload as the server stores it ({"v":1,"move":1,
// "count":1,"cards":["AS"]}) and two 32-byte hashes, as bytea literals.
const (
	floorPayload = `'\x7b2276223a312c226d6f7665223a312c22636f756e74223a312c226361726473223a5b224153225d7d'::bytea`
	floorHashA   = `'\x00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff'::bytea`
	floorHashB   = `'\xffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100'::bytea`
)

// floorResult is one script's transactions per second, a figure per round.
type floorResult struct {
	Name string
	TPS  []float64
}

// runFloor makes a scratch database with the product's schema, runs the
// three scripts Rounds times in turn, and writes each round's TPS, the
// medians and the median of each script's ratio to the baseline in the
// same round.
func runFloor(ctx context.Context, cfg floorConfig, w io.Writer) ([]floorResult, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	sc, err := newScratch(ctx, cfg.PG, cfg.Pgbench, cfg.Server, "solitaire_floor_", w)
	if err != nil {
		return nil, err
	}
	defer sc.close()

	// The product's schema and one real game, made by the server itself.
	srv, err := startServer(ctx, sc.server, []string{"DATABASE_URL=" + sc.dbURL}, "warn", false, 0, filepath.Join(sc.tmp, "server.log"))
	if err != nil {
		return nil, err
	}
	targets, err := setUpGames(ctx, srv.url, 1)
	srv.stop(w)
	if err != nil {
		return nil, err
	}
	game := strings.TrimSuffix(strings.TrimPrefix(targets[0].Path, "/v1/games/"), "/moves")
	out, err := floorRounds(ctx, sc.pgbench, sc.dbURL, game, sc.tmp, cfg, w)
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(w, "| statement | TPS median (min–max) | ÷ baseline, median of the rounds (min–max) |\n|---|---|---|")
	for _, res := range out {
		ratios := make([]float64, len(res.TPS))
		for r := range res.TPS {
			ratios[r] = ratio(res.TPS[r], out[0].TPS[r])
		}
		fmt.Fprintf(w, "| %s | %.0f (%.0f–%.0f) | %.2f (%.2f–%.2f) |\n", res.Name, median(res.TPS), slices.Min(res.TPS),
			slices.Max(res.TPS), median(ratios), slices.Min(ratios), slices.Max(ratios))
	}
	return out, nil
}

// floorRounds copies game for cfg.Clients clients (copyFloorGames) on the
// database at dbURL and runs the three scripts cfg.Rounds times in turn,
// writing each round's TPS to w. It returns each script's TPS per round,
// in floorScripts' order.
func floorRounds(ctx context.Context, pgbench, dbURL, game, tmp string, cfg floorConfig, w io.Writer) ([]floorResult, error) {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := copyFloorGames(ctx, db, game, cfg.Clients); err != nil {
		return nil, err
	}

	scripts := make([]string, len(floorScripts))
	out := make([]floorResult, len(floorScripts))
	for i, s := range floorScripts {
		scripts[i] = filepath.Join(tmp, s.Name+".sql")
		if err := os.WriteFile(scripts[i], []byte(s.Body), 0o644); err != nil {
			return nil, err
		}
		out[i].Name = s.Name
	}
	secs := strconv.Itoa(int(cfg.Duration / time.Second))
	fmt.Fprintf(w, "command      %s -n -M prepared -c %d -j 1 -T %s -D n=<round base> -f <script> <scratch database>\n", pgbench, cfg.Clients, secs)
	for _, s := range floorScripts {
		fmt.Fprintf(w, "script %-8s %s\n", s.Name, strings.ReplaceAll(strings.TrimSpace(s.Body), "\n", "\n                "))
	}
	fmt.Fprintf(w, "load average %s\n", loadAverage())
	for r := range cfg.Rounds {
		fmt.Fprintf(w, "round %2d    ", r+1)
		for i := range floorScripts {
			// The event script's versions in round r (from 0): from
			// (r+1)·10⁸ + 2 on, above the deal's and every earlier
			// round's (a round writes far fewer than 10⁸ events a client).
			args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(cfg.Clients), "-j", "1", "-T", secs,
				"-D", "n=" + strconv.Itoa(1+(r+1)*100_000_000), "-f", scripts[i], dbURL}
			cmd := exec.CommandContext(ctx, pgbench, args...)
			b, err := cmd.CombinedOutput()
			if err != nil {
				return nil, fmt.Errorf("pgbench %s: %w\n%s", floorScripts[i].Name, err, b)
			}
			tps, _, err := parsePgbench(b)
			if err != nil {
				return nil, err
			}
			out[i].TPS = append(out[i].TPS, tps)
			fmt.Fprintf(w, " %s %7.1f", floorScripts[i].Name, tps)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "load average %s\n\n", loadAverage())
	return out, nil
}

// copyFloorGames gives each pgbench client two games copied from game
// (its row and its first event): floor-<c> for the event script, which
// leaves the games row alone, and append-<c> for the append script, which
// advances it; and the baseline's table.
func copyFloorGames(ctx context.Context, db *sql.DB, game string, clients int) error {
	var cols string
	err := db.QueryRowContext(ctx, `SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position)
		FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = 'games' AND column_name <> 'id' AND is_generated = 'NEVER'`).Scan(&cols)
	if err != nil {
		return fmt.Errorf("floor: games columns: %w", err)
	}
	for _, prefix := range []string{"floor-", "append-"} {
		if _, err := db.ExecContext(ctx, `INSERT INTO games (id, `+cols+`)
			SELECT $1 || c, `+cols+` FROM games, generate_series(0, $2 - 1) c WHERE id = $3`, prefix, clients, game); err != nil {
			return fmt.Errorf("floor: copy games: %w", err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO events (game_id, version, type, payload, occurred_at, prev_hash, hash)
			SELECT $1 || c, version, type, payload, occurred_at, prev_hash, hash
			FROM events, generate_series(0, $2 - 1) c WHERE game_id = $3 AND version = 1`, prefix, clients, game); err != nil {
			return fmt.Errorf("floor: copy events: %w", err)
		}
	}
	if _, err := db.ExecContext(ctx, baselineSchema); err != nil {
		return fmt.Errorf("floor: baseline table: %w", err)
	}
	_, err = db.ExecContext(ctx, `ANALYZE`)
	return err
}

// median is the middle of xs (the mean of the two middle ones for an even
// count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// scratch is what a measuring command sets up first: the pgbench binary,
// a temporary directory, the server binary, and a scratch database with an
// admin connection beside it.
type scratch struct {
	pgbench, tmp, server, dbURL string
	admin                       *sql.DB // to the admin URL's own database
	drop                        func()
}

// newScratch checks that pg is a loopback postgres:// URL, finds pgbench
// unless given, makes the temporary directory, builds the server unless
// given (serverBinary), and creates the scratch database prefix + random
// (scratchDatabase). close undoes it all.
func newScratch(ctx context.Context, pg, pgbench, server, prefix string, w io.Writer) (*scratch, error) {
	if err := loopbackPG(pg); err != nil {
		return nil, err
	}
	if pgbench == "" {
		var err error
		if pgbench, err = findPgbench(); err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, err
	}
	sc := &scratch{pgbench: pgbench, tmp: tmp}
	if sc.server, err = serverBinary(ctx, server, tmp, w); err == nil {
		sc.admin, sc.dbURL, sc.drop, err = scratchDatabase(ctx, pg, prefix, w)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return sc, nil
}

// close drops the scratch database and removes the temporary directory.
func (sc *scratch) close() {
	sc.drop()
	sc.admin.Close()
	os.RemoveAll(sc.tmp)
}

// serverBinary is path, or a solitaire-server built into dir when path is
// "" (from the module root).
func serverBinary(ctx context.Context, path, dir string, w io.Writer) (string, error) {
	if path != "" {
		return path, nil
	}
	server := filepath.Join(dir, "solitaire-server")
	fmt.Fprintln(w, "building ./cmd/solitaire-server …")
	build := exec.CommandContext(ctx, "go", "build", "-o", server, "./cmd/solitaire-server")
	build.Stdout, build.Stderr = w, w
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/solitaire-server (run from the module root or pass -server): %w", err)
	}
	return server, nil
}

// scratchDatabase creates a database named prefix + random through the
// admin URL pg and returns an admin connection (to pg's own database, so
// that reading statistics adds no transaction to the scratch database's
// counts), the scratch database's URL, and a function that drops it.
func scratchDatabase(ctx context.Context, pg, prefix string, w io.Writer) (*sql.DB, string, func(), error) {
	admin, err := sql.Open("pgx", pg)
	if err != nil {
		return nil, "", nil, err
	}
	admin.SetMaxOpenConns(2)
	var pgVersion string
	if err := admin.QueryRowContext(ctx, "SELECT version()").Scan(&pgVersion); err != nil {
		admin.Close()
		return nil, "", nil, fmt.Errorf("postgres %s: %w", pgurl.Redact(pg), err)
	}
	writeMachine(w, pgVersion)
	name := pgurl.RandomName(prefix, 6)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return nil, "", nil, fmt.Errorf("create database %s: %w", name, err)
	}
	drop := func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(dctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(w, "warning: drop database %s: %v\n", name, err)
		}
	}
	dbURL, err := pgurl.WithDatabase(pg, name)
	if err != nil {
		drop()
		admin.Close()
		return nil, "", nil, err
	}
	return admin, dbURL, drop, nil
}
