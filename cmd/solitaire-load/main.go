// Command solitaire-load measures the solitaire server: it plays real games
// over HTTP with many concurrent players and reports accepted moves per
// second and latency percentiles (HdrHistogram), and it compares the
// server with PostgreSQL's own limit.
//
// Usage:
//
//	solitaire-load run      [flags]   play against a running server (-url)
//	solitaire-load bench    [flags]   pgbench, then servers it starts itself, then a summary
//	solitaire-load compare  [flags]   pgbench, the baseline and the server at 1, 16, 64 clients
//	solitaire-load baseline [flags]   serve the same-stack baseline (gin, pgx, one INSERT per request)
//	solitaire-load floor    [flags]   the baseline's statement against a move's, in pgbench, no HTTP
//
// Each player registers, creates a game (relaxed by default: undo allowed)
// and plays: some moves picked at random from GET …/legal-moves (never
// resign), the others draws and undos decided from the last view of the
// game, as a frontend would. After -game-moves moves, or when the game
// ends, it starts another. Load goes only to loopback addresses, and every
// run is bounded in time (at most 10 minutes).
//
// bench, run from the module root, measures in one go on this machine:
// pgbench's single-row INSERT transactions per second at -clients clients
// on a scratch database; the server (built from ./cmd/solitaire-server
// unless -server is given) on that database at the same client count; the
// server's resident memory with -games games in progress; and the server
// on SQLite. It prints the ratio of moves/s to pgbench's TPS and the
// targets (targetRatio, targetP99, targetRSSMB). See BENCHMARKS.md.
//
// compare runs, at each client count in turn (default 1, 16 and 64),
// pgbench's single-INSERT transactions, the baseline (this tool's
// baseline command: gin, pgx, one INSERT committed per request, no
// domain, the cheapest honest HTTP API on the server's stack) and the
// server, the last two driven by the same lean generator (closed-loop
// draws to a relaxed game per client, nothing decoded), and prints
// requests per second, p50/p99, the ratios, and PostgreSQL's commits per
// request (pg_stat_database.xact_commit). Figures from a machine with
// other work running are not target measurements: the summary gives the
// load average.
//
// floor runs, on a scratch database with the server's schema, three
// pgbench scripts in turn for several rounds: the baseline's INSERT, the
// least a move must write (one events row, no projection), and the event
// with the games row's projection in one statement. It prints each
// round's transactions per second and the medians of the ratios to the
// baseline in the same round: at one client, where nothing is batched, a
// move whose statement is slower than the baseline's cannot make its whole
// request as fast (floor.go).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "solitaire-load:", err)
		os.Exit(2)
	}
}

const usage = `usage:
  solitaire-load run      [-url URL] [-players N] [-duration D] [...]   load a running server
  solitaire-load bench    [-pg URL] [-clients N] [-duration D] [...]    pgbench vs the server, memory, SQLite
  solitaire-load compare  [-pg URL] [-clients 1,16,64] [-rounds 1] [-ceiling R] [-duration D]   pgbench, the baseline and the server side by side
  solitaire-load baseline [-addr A] [-pg URL]                           the same-stack baseline server
  solitaire-load floor    [-pg URL] [-clients 1] [-rounds 10] [-duration 4s]   the statements alone, pgbench
  solitaire-load <command> -h                                         flags of a command`

// newFlags is the flag set of command name, which reports its errors and
// usage to out and returns them rather than exiting.
func newFlags(name string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	return fs
}

// run is the command without the program name; the report goes to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%s", usage)
	}
	switch args[0] {
	case "run":
		cfg := defaultLoadConfig()
		fs := newFlags("run", out)
		fs.StringVar(&cfg.URL, "url", cfg.URL, "the server's base URL (loopback only)")
		fs.IntVar(&cfg.Players, "players", cfg.Players, "concurrent players")
		loadFlags(fs, &cfg)
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		res, err := runLoad(ctx, cfg)
		if err != nil {
			return err
		}
		res.Report(out)
		return nil
	case "bench":
		return benchCommand(ctx, args[1:], out)
	case "compare":
		return compareCommand(ctx, args[1:], out)
	case "floor":
		cfg := defaultFloorConfig()
		fs := newFlags("floor", out)
		fs.StringVar(&cfg.PG, "pg", cfg.PG, "postgres:// URL of a role that may CREATE DATABASE (loopback only)")
		fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "pgbench clients (1..90)")
		fs.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "rounds of the three scripts, each round in turn")
		fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of each pgbench run (whole seconds, at least 1s)")
		fs.StringVar(&cfg.Pgbench, "pgbench", "", "the pgbench binary (default: /usr/lib/postgresql/*/bin/pgbench, then $PATH)")
		fs.StringVar(&cfg.Server, "server", "", "the solitaire-server binary that makes the schema (default: go build ./cmd/solitaire-server)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		_, err := runFloor(ctx, cfg, out)
		return err
	case "baseline":
		fs := newFlags("baseline", out)
		addr := fs.String("addr", "127.0.0.1:8090", "listen address (loopback only)")
		pg := fs.String("pg", defaultBenchConfig().PG, "postgres:// URL of the database (loopback only)")
		conns := fs.Int("max-conns", 20, "connections in the pool (the product's default)")
		work := fs.Int("db-work", 0, fmt.Sprintf("rows each statement counts in PostgreSQL before its INSERT, 0..%d (a slower statement, the same handler)", maxDBWork))
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return runBaseline(ctx, *addr, *pg, *conns, *work, nil)
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

// benchCommand is "solitaire-load bench": args are the flags after the
// command name (the bench's run and environment, and the load's mix from
// loadFlags). It runs runBench, which writes its report to out; an error
// is a bad flag or a failed bench.
func benchCommand(ctx context.Context, args []string, out io.Writer) error {
	cfg := defaultBenchConfig()
	fs := newFlags("bench", out)
	fs.StringVar(&cfg.PG, "pg", cfg.PG, "postgres:// URL of a role that may CREATE DATABASE (loopback only)")
	fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "pgbench clients and load players")
	fs.IntVar(&cfg.Jobs, "jobs", cfg.Jobs, "pgbench threads (-j)")
	fs.StringVar(&cfg.Pgbench, "pgbench", "", "the pgbench binary (default: /usr/lib/postgresql/*/bin/pgbench, then $PATH)")
	fs.StringVar(&cfg.Server, "server", "", "the solitaire-server binary (default: go build ./cmd/solitaire-server)")
	fs.BoolVar(&cfg.SQLite, "sqlite", cfg.SQLite, "also measure the server on SQLite")
	fs.IntVar(&cfg.Games, "games", cfg.Games, "memory phase: games to create and leave in progress (0: skip)")
	fs.IntVar(&cfg.GameMoves, "memory-game-moves", cfg.GameMoves, "memory phase: moves in each game")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "the server's SOLITAIRE_LOG_LEVEL")
	fs.StringVar(&cfg.Profile, "cpuprofile", "", "write a CPU profile of the server during the PostgreSQL load to this file")
	env := fs.String("env", "", "extra server environment, NAME=value,NAME=value (e.g. SOLITAIRE_STATE_CACHE=0)")
	loadFlags(fs, &cfg.Load)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg.Duration, cfg.Warmup = cfg.Load.Duration, cfg.Load.Warmup
	if *env != "" {
		cfg.Env = strings.Split(*env, ",")
	}
	_, err := runBench(ctx, cfg, out)
	return err
}

// compareCommand is "solitaire-load compare": args are the flags after
// the command name, -clients a comma-separated list of client counts
// each run in turn, -ceiling floor's event ÷ baseline ratio (0..1, 0: not
// given). It runs runCompare, which writes its table to out; an error is
// a bad flag (a client count that is not a number among them, a ceiling
// out of its range) or a failed comparison.
func compareCommand(ctx context.Context, args []string, out io.Writer) error {
	cfg := defaultCompareConfig()
	fs := newFlags("compare", out)
	fs.StringVar(&cfg.PG, "pg", cfg.PG, "postgres:// URL of a role that may CREATE DATABASE (loopback only)")
	clients := fs.String("clients", "1,16,64", "client counts, comma-separated, each run in turn")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of each run, warm-up included (max 10m)")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "first part of each HTTP run not counted")
	fs.IntVar(&cfg.Jobs, "jobs", cfg.Jobs, "pgbench threads (-j), at most the clients")
	fs.StringVar(&cfg.Pgbench, "pgbench", "", "the pgbench binary (default: /usr/lib/postgresql/*/bin/pgbench, then $PATH)")
	fs.StringVar(&cfg.Server, "server", "", "the solitaire-server binary (default: go build ./cmd/solitaire-server)")
	fs.BoolVar(&cfg.SQLite, "sqlite", false, "also run the server on SQLite at each client count")
	fs.StringVar(&cfg.Profile, "cpuprofile", "", "write CPU profiles of the product's run on PostgreSQL to PREFIX-<clients>.pprof")
	fs.BoolVar(&cfg.ProductOnly, "product-only", false, "run only the product (no pgbench, baseline or table)")
	fs.DurationVar(&cfg.TimerSlack, "timer-slack", 0, "timer slack of every server process started, e.g. 1ms (Linux; 0: inherited, 50µs by default)")
	fs.IntVar(&cfg.Rounds, "rounds", 1, fmt.Sprintf("measure the baseline and the product this many times at each client count, alternating (1..%d); the table pools the rounds and gives the median of their CPU ratios", maxRounds))
	fs.Float64Var(&cfg.Ceiling, "ceiling", 0, "the one-client throughput ceiling `R`, in (0, 1]: the \"event\" row's ratio to the baseline that solitaire-load floor prints; one client's throughput is judged against 0.9×R (0: not judged)")
	fs.IntVar(&cfg.BaselineDBWork, "baseline-db-work", 0, fmt.Sprintf("rows the baseline's statement counts in PostgreSQL before its INSERT, 0..%d (a slower statement, the same handler; no target is judged)", maxDBWork))
	env := fs.String("env", "", "extra server environment, NAME=value,NAME=value")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *env != "" {
		cfg.Env = strings.Split(*env, ",")
	}
	cfg.Clients = nil
	for _, c := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil {
			return fmt.Errorf("-clients %q: want numbers, e.g. 1,16,64", *clients)
		}
		cfg.Clients = append(cfg.Clients, n)
	}
	_, err := runCompare(ctx, cfg, out)
	return err
}

// loadFlags adds the flags of the player mix and the run's length.
func loadFlags(fs *flag.FlagSet, cfg *loadConfig) {
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of a load run, warm-up included (max 10m)")
	fs.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "first part of a run not counted")
	fs.StringVar(&cfg.Variant, "variant", cfg.Variant, "variant of the games")
	fs.Func("options", `game options as JSON, e.g. {"undo":true}`, func(s string) error {
		if !json.Valid([]byte(s)) {
			return fmt.Errorf("not JSON: %s", s)
		}
		cfg.Options = json.RawMessage(s)
		return nil
	})
	fs.IntVar(&cfg.GameMoves, "game-moves", cfg.GameMoves, "moves per game before a player starts another")
	fs.Float64Var(&cfg.LegalShare, "legal-share", cfg.LegalShare, "share of non-undo moves picked from GET legal-moves (the rest are draws)")
	fs.Float64Var(&cfg.UndoShare, "undo-share", cfg.UndoShare, "share of moves that are undos, when allowed")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the players' choices")
}
