package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Targets on PostgreSQL (BENCHMARKS.md), judged in compare's table
// against the baseline measured in the same run (pooled over its rounds):
// the baseline is the cheapest honest HTTP API on the server's stack, so
// each target bounds what the server's domain may cost on top of it.
const (
	// targetCPUVsBaseline is the most server CPU per move over the
	// baseline handler's CPU per request, at every client count: a
	// move's own work (rules, hash chain, projection) may cost a quarter
	// more than a bare INSERT's handler, no more. CPU per request is the
	// server's own work, whatever time its statement keeps it waiting
	// (BENCHMARKS.md, "CPU per request and the statement's time").
	targetCPUVsBaseline = 1.25
	// targetP99VsBaseline is the most product move p99 over the
	// baseline's p99, at every client count.
	targetP99VsBaseline = 1.2
	// targetVsCeiling1 is the least product moves/s over the baseline's
	// requests/s at one client, as a share of the ceiling (-ceiling,
	// compareConfig.Ceiling): at one client nothing is batched and a
	// request's time is the sum of its path, so a move whose statement
	// alone is slower than the baseline's INSERT (floor) cannot reach
	// the baseline's rate; the server is held to 0.9 of what its
	// statement allows.
	targetVsCeiling1 = 0.9
	// targetVsBaseline16 is the least product moves/s over the
	// baseline's requests/s at 16 clients, where the server's group
	// commit shares a commit among several moves and so pays back part
	// of its wider statement (the baseline commits each request alone).
	targetVsBaseline16 = 0.9
	// targetVsBaseline64 is the least product moves/s over the
	// baseline's requests/s at 64 clients, where a commit is shared
	// among many more moves and the server is held to outrun the
	// baseline.
	targetVsBaseline64 = 1.2
	// targetVsPgbench64 is the least product moves/s over pgbench's TPS
	// (single-row INSERT transactions) at 64 clients.
	targetVsPgbench64 = 0.6
)

// checkCeiling reports a -ceiling out of its range: 0 (not given) or a
// ratio in (0, 1], floor's event row over the baseline at one client (a
// statement that writes more than the baseline's cannot be faster than
// it; NaN and infinities are refused).
func checkCeiling(c float64) error {
	if !(c >= 0 && c <= 1) {
		return fmt.Errorf("-ceiling %v: want 0 (not given) or a ratio in (0, 1], floor's event ÷ baseline at one client", c)
	}
	return nil
}

// compareConfig describes a compare run.
type compareConfig struct {
	PG       string        // admin postgres:// URL of a role that may CREATE DATABASE (loopback)
	Clients  []int         // client counts, each run in turn (1..90)
	Duration time.Duration // of each measured run, warm-up included
	Warmup   time.Duration // of each load run, not counted
	Jobs     int           // pgbench threads, at most the clients
	Pgbench  string        // the pgbench binary; "" finds it
	Server   string        // the solitaire-server binary; "" builds it
	Self     string        // this tool's binary, run as `baseline`; "" is os.Executable
	SQLite   bool          // also run the server on SQLite (a fresh file per client count)
	Env      []string      // extra server environment, NAME=value (both databases)
	// Profile, if set, is the path prefix of CPU profiles of the product's
	// measured run on PostgreSQL, one per client count (PREFIX-N.pprof),
	// taken through the server's pprof listener after the warm-up.
	Profile string
	// ProductOnly skips pgbench, the baseline and the table: a quick look
	// at the product alone (with Profile, where its CPU goes).
	ProductOnly bool
	// TimerSlack, if set, is the timer slack of every server process the
	// run starts, the baseline's and the product's on each database
	// (startCmd): how late Linux may wake a thread's timed sleep, 50 µs
	// by default. The Go runtime's monitor thread (sysmon) sleeps 20 µs
	// at a time while the process is busy, and on a VM every wake-up
	// costs CPU: a larger slack measures the servers with fewer of them
	// (BENCHMARKS.md, "Timer slack"). Linux only; at least 0.
	TimerSlack time.Duration
	// BaselineDBWork, if set, slows the baseline's statement down without
	// changing its handler (baselineHandler's dbWork, 0..maxDBWork rows),
	// to see whether a request's server CPU depends on the time its
	// statement keeps the process waiting (at one client it does not:
	// BENCHMARKS.md, "CPU per request and the statement's time"). The
	// table then judges no target: its baseline is not the baseline.
	BaselineDBWork int
	// Rounds is how many times the baseline and the product are measured
	// at each client count, alternating (baseline, product, baseline,
	// ...), 1..maxRounds (0: 1). On a VM whose speed drifts between two
	// runs 12 s apart, one pair's CPU ratio moves by a third; the rounds'
	// median (and their pooled figures in the table) drift far less.
	Rounds int
	// Ceiling is the one-client throughput ceiling the table judges
	// against (targetVsCeiling1): the "event" row's ratio to the
	// baseline that `solitaire-load floor` prints, in (0, 1]. 0: not
	// given, and the one-client throughput is not judged.
	Ceiling float64
}

// maxRounds bounds compareConfig.Rounds.
const maxRounds = 20

// defaultCompareConfig is the configuration the flags start from.
func defaultCompareConfig() compareConfig {
	return compareConfig{PG: defaultBenchConfig().PG, Clients: []int{1, 16, 64}, Duration: 12 * time.Second,
		Warmup: 2 * time.Second, Jobs: 2}
}

// compareRow is one client count's figures.
type compareRow struct {
	Clients           int
	PgbenchTPS        float64
	Baseline, Product *leanResult
	// BaselineCommits and ProductCommits are PostgreSQL's committed
	// transactions in the database (pg_stat_database.xact_commit) per
	// 200 answer, the server's start and shutdown included.
	BaselineCommits, ProductCommits float64
	SQLite                          *leanResult // the server on SQLite; nil unless compareConfig.SQLite
	// BaselineSlowed is set when the baseline ran with db work
	// (compareConfig.BaselineDBWork): no target is judged against it.
	BaselineSlowed bool
	// BaselineCPU and ProductCPU are the server process's CPU time per
	// counted 200 answer, over every round; CPURatios is product ÷
	// baseline of each round (compareConfig.Rounds), in order.
	BaselineCPU, ProductCPU time.Duration
	CPURatios               []float64
	// CPUUnpaired is set when a round measured one side's CPU and not
	// the other's (a process gone before its second sample): the pooled
	// figures would then weigh different rounds on the two sides, which
	// the rounds exist to avoid, so the CPU target counts as missed.
	CPUUnpaired bool
}

// cpuCell is the table's CPU column of r: both figures, their ratio and,
// with several rounds, the median and range of the rounds' ratios.
func (r compareRow) cpuCell() string {
	c := fmt.Sprintf("%.0f vs %.0f µs (%.2f)", float64(r.ProductCPU.Microseconds()), float64(r.BaselineCPU.Microseconds()),
		ratio(float64(r.ProductCPU), float64(r.BaselineCPU)))
	if rs := r.CPURatios; len(rs) > 1 {
		c += fmt.Sprintf("; %d rounds: median %.2f, %.2f–%.2f", len(rs), median(rs), slices.Min(rs), slices.Max(rs))
	}
	return c
}

// ratio is a/b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// writeCompareTable prints rows as a Markdown table with the ratios and,
// per row, the targets it misses (compareRow.verdict, ceiling as in
// compareConfig.Ceiling).
func writeCompareTable(w io.Writer, rows []compareRow, ceiling float64) {
	fmt.Fprintln(w, "| clients | pgbench TPS | baseline req/s (p50 / p99) | product moves/s (p50 / p99) | product ÷ baseline | p99 ÷ baseline p99 | product ÷ pgbench | commits per move (product / baseline) | server CPU per request, product vs baseline | targets |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		b, p := r.Baseline, r.Product
		vsB := ratio(p.PerSecond(), b.PerSecond())
		p99 := ratio(float64(p.Quantile(99)), float64(b.Quantile(99)))
		vsPg := ratio(p.PerSecond(), r.PgbenchTPS)
		fmt.Fprintf(w, "| %d | %.0f | %.0f (%s / %s) | %.0f (%s / %s) | %.2f | %.2f | %.2f | %.2f / %.2f | %s | %s |\n",
			r.Clients, r.PgbenchTPS, b.PerSecond(), ms(b.Quantile(50)), ms(b.Quantile(99)),
			p.PerSecond(), ms(p.Quantile(50)), ms(p.Quantile(99)), vsB, p99, vsPg, r.ProductCommits, r.BaselineCommits, r.cpuCell(),
			r.verdict(vsB, p99, vsPg, ceiling))
	}
}

// verdict is the table's targets cell of r, whose product ÷ baseline
// throughput is vsB, p99 ratio p99 and product ÷ pgbench vsPg, with the
// one-client ceiling ceiling (0: not given): "met", or "NOT met: " and
// each missed target's figure (three decimals, so that a figure just past
// its bound does not print as the bound) and bound; then, after " — ",
// the throughput left unjudged (at one client without a ceiling, and at a
// client count other than 1, 16 and 64). The pooled CPU ratio is judged;
// a side whose CPU was not measured, or not in every round
// (compareRow.CPUUnpaired), misses the target. Answers other than 200
// are not in the figures (leanResult.Errors), so a product that had any
// misses its targets, and against a baseline that had any, or a slowed
// baseline, nothing is judged.
func (r compareRow) verdict(vsB, p99, vsPg, ceiling float64) string {
	if r.BaselineSlowed {
		return "not judged (baseline slowed)"
	}
	if r.Baseline != nil && r.Baseline.Errors > 0 {
		return fmt.Sprintf("not judged (%d baseline errors)", r.Baseline.Errors)
	}
	var missed []string
	if r.Product != nil && r.Product.Errors > 0 {
		missed = append(missed, fmt.Sprintf("%d errors", r.Product.Errors))
	}
	switch cpu := ratio(float64(r.ProductCPU), float64(r.BaselineCPU)); {
	case r.ProductCPU <= 0 || r.BaselineCPU <= 0:
		missed = append(missed, "CPU not measured")
	case r.CPUUnpaired:
		missed = append(missed, "CPU not measured in every round")
	case cpu > targetCPUVsBaseline:
		missed = append(missed, fmt.Sprintf("CPU %.3f > %g", cpu, targetCPUVsBaseline))
	}
	if p99 > targetP99VsBaseline {
		missed = append(missed, fmt.Sprintf("p99 %.3f > %g", p99, targetP99VsBaseline))
	}
	unjudged := ""
	switch r.Clients {
	case 1:
		if ceiling <= 0 {
			unjudged = "throughput not judged (no -ceiling)"
		} else if bound := targetVsCeiling1 * ceiling; vsB < bound {
			missed = append(missed, fmt.Sprintf("throughput %.3f < %.3f (%g× ceiling %g)", vsB, bound, targetVsCeiling1, ceiling))
		}
	case 16:
		if vsB < targetVsBaseline16 {
			missed = append(missed, fmt.Sprintf("throughput %.3f < %g", vsB, targetVsBaseline16))
		}
	case 64:
		if vsB < targetVsBaseline64 {
			missed = append(missed, fmt.Sprintf("throughput %.3f < %g", vsB, targetVsBaseline64))
		}
		if vsPg < targetVsPgbench64 {
			missed = append(missed, fmt.Sprintf("pgbench %.3f < %g", vsPg, targetVsPgbench64))
		}
	default:
		unjudged = fmt.Sprintf("throughput not judged at %d clients", r.Clients)
	}
	v := "met"
	if len(missed) > 0 {
		v = "NOT met: " + strings.Join(missed, "; ")
	}
	if unjudged != "" {
		v += " — " + unjudged
	}
	return v
}

// runCompare measures pgbench, the baseline server and the product on one
// scratch database at each client count, with the same lean generator for
// the two HTTP servers, and writes the report to w.
func runCompare(ctx context.Context, cfg compareConfig, w io.Writer) ([]compareRow, error) {
	for _, c := range cfg.Clients {
		if c < 1 || c > 90 {
			return nil, fmt.Errorf("clients %d: want 1..90 (PostgreSQL allows 100 connections by default)", c)
		}
	}
	if err := checkTimerSlack(cfg.TimerSlack); err != nil {
		return nil, err
	}
	if cfg.BaselineDBWork < 0 || cfg.BaselineDBWork > maxDBWork {
		return nil, fmt.Errorf("baseline db work %d: want 0..%d rows", cfg.BaselineDBWork, maxDBWork)
	}
	if cfg.Rounds == 0 {
		cfg.Rounds = 1
	}
	if cfg.Rounds < 1 || cfg.Rounds > maxRounds {
		return nil, fmt.Errorf("rounds %d: want 1..%d", cfg.Rounds, maxRounds)
	}
	if cfg.Duration <= cfg.Warmup || cfg.Duration > maxDuration {
		return nil, fmt.Errorf("duration %s: want more than the warm-up %s and at most %s", cfg.Duration, cfg.Warmup, maxDuration)
	}
	if err := checkCeiling(cfg.Ceiling); err != nil {
		return nil, err
	}
	self := cfg.Self
	if self == "" {
		var err error
		if self, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	sc, err := newScratch(ctx, cfg.PG, cfg.Pgbench, cfg.Server, "solitaire_compare_", w)
	if err != nil {
		return nil, err
	}
	defer sc.close()
	pgbench, tmp, server, dbURL, admin := sc.pgbench, sc.tmp, sc.server, sc.dbURL, sc.admin
	name := dbName(dbURL)
	counts := func(ctx context.Context) (int64, error) { return xactCommits(ctx, admin, name) }

	if cfg.TimerSlack > 0 {
		fmt.Fprintf(w, "every server process runs with %s of timer slack\n", cfg.TimerSlack)
	}
	if cfg.BaselineDBWork > 0 && !cfg.ProductOnly {
		fmt.Fprintf(w, "the baseline's statement counts %d rows before its INSERT\n", cfg.BaselineDBWork)
	}
	var rows []compareRow
	for _, clients := range cfg.Clients {
		row := compareRow{Clients: clients, BaselineSlowed: cfg.BaselineDBWork > 0}
		fmt.Fprintf(w, "\n== %d clients (load average %s)\n", clients, loadAverage())
		if !cfg.ProductOnly {
			bc := benchConfig{Clients: clients, Jobs: max(min(cfg.Jobs, clients), 1), Duration: cfg.Duration}
			if row.PgbenchTPS, _, err = runPgbench(ctx, pgbench, dbURL, tmp, bc, w); err != nil {
				return nil, err
			}
			fmt.Fprintf(w, "pgbench      %.1f transactions/s\n", row.PgbenchTPS)
		}
		// The baseline: any game id and token will do.
		btargets := make([]leanTarget, clients)
		for i := range btargets {
			btargets[i] = leanTarget{Path: "/v1/games/b" + strconv.Itoa(i) + "/moves", Token: "baseline"}
		}
		bstart := func() (*serverProc, error) {
			return startBaseline(ctx, self, dbURL, cfg.TimerSlack, cfg.BaselineDBWork, filepath.Join(tmp, "baseline.log"))
		}
		// The product: a player and a relaxed game per client, made for
		// each round by a server started for it (every round's games
		// start equally short: a game's undo record and snapshots grow
		// with it), then a fresh start for the measured run.
		env := append([]string{"DATABASE_URL=" + dbURL}, cfg.Env...)
		logPath := filepath.Join(tmp, "server.log")
		var bsum, psum pooled
		for round := range cfg.Rounds {
			if cfg.Rounds > 1 {
				fmt.Fprintf(w, "-- round %d of %d (load average %s)\n", round+1, cfg.Rounds, loadAverage())
			}
			var bcpu time.Duration
			if !cfg.ProductOnly {
				res, commits, cpu, err := measureLean(ctx, counts, bstart, btargets, clients, cfg, name, "", w)
				if err != nil {
					return nil, fmt.Errorf("baseline: %w", err)
				}
				fmt.Fprintf(w, "baseline     %.1f requests/s, p50 %s, p99 %s, %.2f commits per request, %d errors\n",
					res.PerSecond(), ms(res.Quantile(50)), ms(res.Quantile(99)), commits, res.Errors)
				bsum.add(res, commits, cpu)
				bcpu = cpu
			}
			srv, err := startServer(ctx, server, env, "warn", false, cfg.TimerSlack, logPath)
			if err != nil {
				return nil, err
			}
			ptargets, err := setUpGames(ctx, srv.url, clients)
			srv.stop(w)
			if err != nil {
				return nil, err
			}
			profile := ""
			if cfg.Profile != "" && round == 0 {
				profile = cfg.Profile + "-" + strconv.Itoa(clients) + ".pprof"
			}
			pstart := func() (*serverProc, error) {
				return startServer(ctx, server, env, "warn", profile != "", cfg.TimerSlack, logPath)
			}
			res, commits, cpu, err := measureLean(ctx, counts, pstart, ptargets, clients, cfg, name, profile, w)
			if err != nil {
				return nil, fmt.Errorf("product: %w", err)
			}
			fmt.Fprintf(w, "product      %.1f moves/s, p50 %s, p99 %s, %.2f commits per move, %d errors\n",
				res.PerSecond(), ms(res.Quantile(50)), ms(res.Quantile(99)), commits, res.Errors)
			psum.add(res, commits, cpu)
			if bcpu > 0 && cpu > 0 {
				row.CPURatios = append(row.CPURatios, float64(cpu)/float64(bcpu))
			} else if !cfg.ProductOnly {
				row.CPUUnpaired = true
			}
		}
		row.Baseline, row.BaselineCommits, row.BaselineCPU = bsum.result()
		row.Product, row.ProductCommits, row.ProductCPU = psum.result()
		if cfg.SQLite {
			if row.SQLite, err = compareSQLite(ctx, server, tmp, logPath, clients, cfg, w); err != nil {
				return nil, err
			}
		}
		rows = append(rows, row)
	}
	if cfg.ProductOnly {
		fmt.Fprintf(w, "\n(load average now %s)\n", loadAverage())
		return rows, nil
	}
	fmt.Fprintf(w, "\n== summary (load average now %s; figures on a machine with other work running are not target measurements)\n\n", loadAverage())
	writeCompareTable(w, rows, cfg.Ceiling)
	if cfg.SQLite {
		fmt.Fprintln(w, "\n| clients | server on SQLite, moves/s (p50 / p99) |\n|---|---|")
		for _, r := range rows {
			fmt.Fprintf(w, "| %d | %.0f (%s / %s) |\n", r.Clients, r.SQLite.PerSecond(), ms(r.SQLite.Quantile(50)), ms(r.SQLite.Quantile(99)))
		}
	}
	return rows, nil
}

// compareSQLite is runCompare's optional run of the product on SQLite at
// one client count: a server (binary server, log at logPath) on a fresh
// SQLite file in tmp, a player and a relaxed game per client, then the
// lean generator for cfg's duration. It writes the result's line to w.
// The error is the server's failure to start, unwrapped, or a failure of
// the set-up or the load, wrapped as "sqlite: ...".
func compareSQLite(ctx context.Context, server, tmp, logPath string, clients int, cfg compareConfig, w io.Writer) (*leanResult, error) {
	senv := append([]string{"SOLITAIRE_SQLITE_PATH=" + filepath.Join(tmp, "compare-"+strconv.Itoa(clients)+".db")}, cfg.Env...)
	srv, err := startServer(ctx, server, senv, "warn", false, cfg.TimerSlack, logPath)
	if err != nil {
		return nil, err
	}
	targets, err := setUpGames(ctx, srv.url, clients)
	var res *leanResult
	if err == nil {
		res, err = leanLoad(ctx, srv.url, targets, clients, cfg.Duration, cfg.Warmup)
	}
	srv.stop(w)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	fmt.Fprintf(w, "sqlite       %.1f moves/s, p50 %s, p99 %s, %d errors\n",
		res.PerSecond(), ms(res.Quantile(50)), ms(res.Quantile(99)), res.Errors)
	return res, nil
}

// measureLean starts a server with start, runs the lean generator on it,
// stops it, and returns the result and the database's commits (counts:
// xactCommits) per 200 answer, read once the server's connections are
// gone, so that every backend has reported its counts. It writes the CPU
// per request of the server, the load tool and database db's backends
// (cpuSample.report). With profile set
// (and a server started with its pprof listener) a CPU profile of the
// counted part is written there.
func measureLean(ctx context.Context, counts func(context.Context) (int64, error), start func() (*serverProc, error),
	targets []leanTarget, clients int, cfg compareConfig, db, profile string, w io.Writer) (*leanResult, float64, time.Duration, error) {
	before, err := counts(ctx)
	if err != nil {
		return nil, 0, 0, err
	}
	srv, err := start()
	if err != nil {
		return nil, 0, 0, err
	}
	profDone := make(chan error, 1)
	if profile != "" {
		go func() { profDone <- srv.cpuProfile(ctx, cfg.Warmup, cfg.Duration-cfg.Warmup, profile) }()
	}
	// CPU per request of the server, the load tool and PostgreSQL, from
	// the end of the warm-up to the end of the run (as bench does).
	first := make(chan cpuSample, 1)
	go func() {
		time.Sleep(cfg.Warmup)
		first <- sampleCPU(srv.cmd.Process.Pid)
	}()
	res, err := leanLoad(ctx, srv.url, targets, clients, cfg.Duration, cfg.Warmup)
	var cpu time.Duration
	if err == nil {
		last, from := sampleCPU(srv.cmd.Process.Pid), <-first
		last.report(w, from, res.PerSecond(), "server", "per request", db)
		cpu = last.perUnit(from, res.PerSecond())
	}
	if profile != "" {
		if perr := <-profDone; perr != nil {
			fmt.Fprintf(w, "warning: cpu profile: %v\n", perr)
		} else {
			fmt.Fprintf(w, "cpu profile  %s\n", profile)
		}
	}
	srv.stop(w)
	if err != nil {
		return nil, 0, 0, err
	}
	after, err := counts(ctx)
	if err != nil {
		return nil, 0, 0, err
	}
	return res, ratio(float64(after-before), float64(res.Total)), cpu, nil
}

// startBaseline runs this tool's `baseline` command on a free loopback
// port against dbURL, with timer slack slack (0: this tool's own) and
// dbWork rows counted per statement (baselineHandler), and waits until it
// answers.
func startBaseline(ctx context.Context, self, dbURL string, slack time.Duration, dbWork int, logPath string) (*serverProc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p := &serverProc{url: "http://" + addr, slack: slack, exit: make(chan error, 1)}
	if err := p.start(ctx, exec.Command(self, "baseline", "-addr", addr, "-pg", dbURL, "-db-work", strconv.Itoa(dbWork)), logPath); err != nil {
		return nil, err
	}
	return p, nil
}

// setUpGames registers n players on the server at base, each with a
// relaxed game (a draw is always legal there), and returns their move
// routes and tokens.
func setUpGames(ctx context.Context, base string, n int) ([]leanTarget, error) {
	client := &http.Client{Timeout: 30 * time.Second}
	post := func(path, token string, body any, out any) error {
		b, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+path, bytes.NewReader(b))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := client.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		data, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusCreated {
			return fmt.Errorf("POST %s: %d %s", path, res.StatusCode, truncate(data))
		}
		return json.Unmarshal(data, out)
	}
	out := make([]leanTarget, n)
	for i := range out {
		var p struct {
			Token string `json:"token"`
		}
		if err := post("/v1/players", "", map[string]string{"name": "compare " + strconv.Itoa(i)}, &p); err != nil {
			return nil, err
		}
		var g struct {
			ID string `json:"id"`
		}
		if err := post("/v1/games", p.Token, map[string]string{"variant": "relaxed"}, &g); err != nil {
			return nil, err
		}
		out[i] = leanTarget{Path: "/v1/games/" + g.ID + "/moves", Token: p.Token}
	}
	return out, nil
}

// xactCommits is database name's pg_stat_database.xact_commit, read
// through admin (a connection to another database, so that reading adds
// no transaction to the count) once no connection to name is open
// (waiting up to 30 s), after the 1.5 s a backend's counts may take to
// reach the shared statistics.
func xactCommits(ctx context.Context, admin *sql.DB, name string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		var others int
		if err := admin.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, name).Scan(&others); err != nil {
			return 0, err
		}
		if others == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%d connections to the database stay open", others)
		case <-time.After(50 * time.Millisecond):
		}
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(1500 * time.Millisecond):
	}
	var n int64
	err := admin.QueryRowContext(ctx, `SELECT xact_commit FROM pg_stat_database, pg_stat_clear_snapshot()
		WHERE datname = $1`, name).Scan(&n)
	return n, err
}

// pooled sums the rounds of one server at one client count: their
// answers and latencies (one histogram), their commits per answer and
// their server CPU per answer, each weighted by its round's answers.
type pooled struct {
	res *leanResult
	// commits is the commits summed over total answers (warm-up
	// included, as measureLean counts them); cpu is the CPU time in
	// nanoseconds summed over the counted answers of the rounds whose CPU
	// was measured (CPU is sampled over the counted part).
	commits, total float64
	cpu, counted   float64
}

// add pools one round's result, commits per answer and CPU per answer
// (0: not measured, left out of the CPU figure).
func (p *pooled) add(res *leanResult, commits float64, cpu time.Duration) {
	if p.res == nil {
		p.res = &leanResult{Clients: res.Clients, Hist: hdrhistogram.New(histMin, histMax, histDigits)}
	}
	p.res.Measured += res.Measured
	p.res.OK += res.OK
	p.res.Total += res.Total
	p.res.Errors += res.Errors
	p.res.Hist.Merge(res.Hist)
	p.commits += commits * float64(res.Total)
	p.total += float64(res.Total)
	if cpu > 0 { // 0: not measured (the process was not alive at both samples)
		p.cpu += float64(cpu) * float64(res.OK)
		p.counted += float64(res.OK)
	}
}

// result is the pooled answers, commits per answer and CPU per answer;
// nil and zeros if no round was added.
func (p *pooled) result() (*leanResult, float64, time.Duration) {
	if p.res == nil {
		return nil, 0, 0
	}
	return p.res, ratio(p.commits, p.total), time.Duration(ratio(p.cpu, p.counted))
}
