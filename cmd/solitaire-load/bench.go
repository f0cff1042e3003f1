package main

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/openpatience/solitaire/persistence/pgurl"
)

// Targets of the benchmark (BENCHMARKS.md), checked in the summary.
const (
	targetRatio = 0.6 // moves/s over pgbench's single-insert TPS
	targetP99   = 20 * time.Millisecond
	targetRSSMB = 150.0
)

// benchConfig describes one benchmark run (the bench subcommand).
type benchConfig struct {
	PG        string        // admin postgres:// URL of a role that may CREATE DATABASE
	Clients   int           // pgbench clients = load players
	Jobs      int           // pgbench threads (-j)
	Duration  time.Duration // of each measured phase
	Warmup    time.Duration // of each load phase, not counted
	Pgbench   string        // the pgbench binary; "" finds it
	Server    string        // the solitaire-server binary; "" builds it
	SQLite    bool          // also measure the server on SQLite
	Games     int           // memory phase: games created and played
	GameMoves int           // memory phase: moves in each
	LogLevel  string        // the server's SOLITAIRE_LOG_LEVEL
	Profile   string        // write a CPU profile of the PostgreSQL load phase here ("" none)
	Env       []string      // extra server environment, NAME=value
	Load      loadConfig    // the player mix (URL, Players, Duration set per phase)
}

// defaultBenchConfig is the configuration the flags start from.
func defaultBenchConfig() benchConfig {
	return benchConfig{PG: "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", Clients: 64, Jobs: 2,
		Duration: 20 * time.Second, Warmup: 2 * time.Second, SQLite: true, Games: 1000, GameMoves: 20,
		LogLevel: "info", Load: defaultLoadConfig()}
}

// benchResult is what a benchmark run measured.
type benchResult struct {
	PgbenchTPS     float64
	PgbenchLatency string
	Postgres       *loadResult
	PostgresRSS    procMemory // after the throughput phase
	SQLite         *loadResult
	Memory         *loadResult // the memory phase (fresh server, PostgreSQL)
	MemoryRSS      procMemory
}

// runBench runs every phase and writes the report to w as it goes.
func runBench(ctx context.Context, cfg benchConfig, w io.Writer) (*benchResult, error) {
	if cfg.Clients < 1 || cfg.Clients > 90 {
		return nil, fmt.Errorf("clients %d: want 1..90 (PostgreSQL allows 100 connections by default)", cfg.Clients)
	}
	if cfg.Duration <= 0 || cfg.Duration > maxDuration {
		return nil, fmt.Errorf("duration %s: want more than 0 and at most %s", cfg.Duration, maxDuration)
	}
	sc, err := newScratch(ctx, cfg.PG, cfg.Pgbench, cfg.Server, "solitaire_bench_", w)
	if err != nil {
		return nil, err
	}
	defer sc.close()
	pgbench, tmp, server, dbURL := sc.pgbench, sc.tmp, sc.server, sc.dbURL
	res := &benchResult{}

	// Phase 1: PostgreSQL's own limit.
	fmt.Fprintf(w, "\n== pgbench: one INSERT per transaction, %d clients, %d threads, %s\n",
		cfg.Clients, cfg.Jobs, cfg.Duration)
	res.PgbenchTPS, res.PgbenchLatency, err = runPgbench(ctx, pgbench, dbURL, tmp, cfg, w)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "pgbench      %.1f transactions/s (latency average %s)\n", res.PgbenchTPS, res.PgbenchLatency)

	// Phase 2: the server on that PostgreSQL, at the same client count.
	fmt.Fprintf(w, "\n== solitaire-server on PostgreSQL, %d players, %s\n", cfg.Clients, cfg.Duration)
	env := append([]string{"DATABASE_URL=" + dbURL}, cfg.Env...)
	res.Postgres, res.PostgresRSS, err = loadPhase(ctx, cfg, server, env, tmp, "postgres", cfg.Profile, w)
	if err != nil {
		return nil, err
	}

	// Phase 3: memory with cfg.Games games in progress, on a fresh server.
	if cfg.Games > 0 {
		fmt.Fprintf(w, "\n== memory: %d games of %d moves each, left in progress, fresh server on PostgreSQL\n",
			cfg.Games, cfg.GameMoves)
		mc := cfg
		mc.Load.Games, mc.Load.GameMoves = cfg.Games, cfg.GameMoves
		mc.Duration, mc.Warmup = maxDuration/2, 0
		res.Memory, res.MemoryRSS, err = loadPhase(ctx, mc, server, env, tmp, "memory", "", w)
		if err != nil {
			return nil, err
		}
	}

	// Phase 4: the embedded database, for comparison.
	if cfg.SQLite {
		fmt.Fprintf(w, "\n== solitaire-server on SQLite, %d players, %s\n", cfg.Clients, cfg.Duration)
		senv := append([]string{"DATABASE_URL=", "SOLITAIRE_SQLITE_PATH=" + filepath.Join(tmp, "bench.db")}, cfg.Env...)
		res.SQLite, _, err = loadPhase(ctx, cfg, server, senv, tmp, "sqlite", "", w)
		if err != nil {
			return nil, err
		}
	}
	res.summary(cfg, w)
	return res, nil
}

// summary writes the figures against the targets.
func (r *benchResult) summary(cfg benchConfig, w io.Writer) {
	fmt.Fprintf(w, "\n== summary (%d clients; load average now %s)\n", cfg.Clients, loadAverage())
	mark := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	mps := r.Postgres.MovesPerSecond()
	ratio := 0.0
	if r.PgbenchTPS > 0 {
		ratio = mps / r.PgbenchTPS
	}
	fmt.Fprintf(w, "pgbench single-insert TPS   %.1f\n", r.PgbenchTPS)
	fmt.Fprintf(w, "moves/s over HTTP (pg)      %.1f\n", mps)
	fmt.Fprintf(w, "ratio                       %.2f (target >= %.1f: %s)\n", ratio, targetRatio, mark(ratio >= targetRatio))
	p99 := r.Postgres.quantile(opMove, 99)
	fmt.Fprintf(w, "move p99 (pg)               %s (target <= %s: %s)\n", ms(p99), ms(targetP99), mark(p99 <= targetP99))
	if r.Memory != nil {
		fmt.Fprintf(w, "RSS, %d games in progress  VmRSS %.1f MB, VmHWM %.1f MB (target <= %.0f MB: %s)\n",
			r.Memory.Games, r.MemoryRSS.RSSMB(), r.MemoryRSS.HWMMB(), targetRSSMB, mark(r.MemoryRSS.HWMMB() <= targetRSSMB))
	}
	fmt.Fprintf(w, "RSS after the pg load       VmRSS %.1f MB, VmHWM %.1f MB\n", r.PostgresRSS.RSSMB(), r.PostgresRSS.HWMMB())
	if r.SQLite != nil {
		fmt.Fprintf(w, "moves/s over HTTP (sqlite)  %.1f, p99 %s\n", r.SQLite.MovesPerSecond(), ms(r.SQLite.quantile(opMove, 99)))
	}
}

// loadPhase starts a server with env, plays the load against it, reads its
// memory, and stops it.
func loadPhase(ctx context.Context, cfg benchConfig, server string, env []string, tmp, name, profile string, w io.Writer) (*loadResult, procMemory, error) {
	srv, err := startServer(ctx, server, env, cfg.LogLevel, profile != "", 0, filepath.Join(tmp, name+".log"))
	if err != nil {
		return nil, procMemory{}, err
	}
	db := "(none)"
	for _, kv := range env {
		if u, ok := strings.CutPrefix(kv, "DATABASE_URL="); ok && u != "" {
			db = dbName(u)
		}
	}
	defer srv.stop(w)
	lc := cfg.Load
	lc.URL, lc.Players, lc.Duration, lc.Warmup = srv.url, cfg.Clients, cfg.Duration, cfg.Warmup
	profDone := make(chan error, 1)
	if profile != "" {
		go func() { profDone <- srv.cpuProfile(ctx, cfg.Warmup, cfg.Duration-cfg.Warmup, profile) }()
	}
	// CPU is sampled from the end of the warm-up (the pool's connections
	// and their backends exist by then) to the end of the run.
	first := make(chan cpuSample, 1)
	go func() {
		time.Sleep(max(lc.Warmup, time.Second))
		first <- sampleCPU(srv.cmd.Process.Pid)
	}()
	res, err := runLoad(ctx, lc)
	if err != nil {
		return nil, procMemory{}, err
	}
	cpu1 := sampleCPU(srv.cmd.Process.Pid)
	cpu0 := <-first
	if profile != "" {
		if err := <-profDone; err != nil {
			fmt.Fprintf(w, "warning: cpu profile: %v\n", err)
		} else {
			fmt.Fprintf(w, "cpu profile  %s (go tool pprof -top %s %s)\n", profile, server, profile)
		}
	}
	mem, err := readProcMemory(srv.cmd.Process.Pid)
	if err != nil {
		return nil, procMemory{}, err
	}
	res.Report(w)
	fmt.Fprintf(w, "server       pid %d: VmRSS %.1f MB, VmHWM %.1f MB\n", srv.cmd.Process.Pid, mem.RSSMB(), mem.HWMMB())
	cpu1.report(w, cpu0, res.MovesPerSecond(), "server", "per move", db)
	return res, mem, nil
}

// runPgbench measures single-row INSERT transactions per second on the
// database dbURL: a scratch table, one INSERT per transaction.
func runPgbench(ctx context.Context, pgbench, dbURL, tmp string, cfg benchConfig, w io.Writer) (float64, string, error) {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return 0, "", err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS bench_insert (
		id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v BIGINT NOT NULL, at BIGINT NOT NULL)`); err != nil {
		return 0, "", fmt.Errorf("pgbench scratch table: %w", err)
	}
	script := filepath.Join(tmp, "insert.sql")
	const body = "\\set v random(1, 1000000000)\nINSERT INTO bench_insert (v, at) VALUES (:v, :v);\n"
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		return 0, "", err
	}
	secs := max(int(cfg.Duration/time.Second), 1)
	args := []string{"-n", "-c", strconv.Itoa(cfg.Clients), "-j", strconv.Itoa(cfg.Jobs), "-T", strconv.Itoa(secs),
		"-f", script, dbURL}
	fmt.Fprintf(w, "command      %s -n -c %d -j %d -T %d -f insert.sql <scratch database>\n", pgbench, cfg.Clients, cfg.Jobs, secs)
	fmt.Fprintf(w, "script       %s\n", strings.ReplaceAll(strings.TrimSpace(body), "\n", "\n             "))
	pctx, cancel := context.WithTimeout(ctx, cfg.Duration+2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(pctx, pgbench, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return 0, "", fmt.Errorf("pgbench: %w", err)
	}
	// CPU is sampled while pgbench and its backends run (their /proc
	// entries go when they exit): from 2 s in to 1 s before the end.
	var cpu0, cpu1 cpuSample
	if cfg.Duration >= 5*time.Second {
		time.Sleep(2 * time.Second)
		cpu0 = sampleCPU(cmd.Process.Pid)
		time.Sleep(cfg.Duration - 3*time.Second)
		cpu1 = sampleCPU(cmd.Process.Pid)
	}
	if err := cmd.Wait(); err != nil {
		return 0, "", fmt.Errorf("pgbench: %w\n%s", err, out.String())
	}
	tps, lat, err := parsePgbench([]byte(out.String()))
	if err == nil && tps > 0 && !cpu0.at.IsZero() {
		cpu1.report(w, cpu0, tps, "pgbench", "per transaction", dbName(dbURL))
	}
	return tps, lat, err
}

var (
	tpsLine     = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
	latencyLine = regexp.MustCompile(`(?m)^latency average = ([0-9.]+ ms)`)
)

// parsePgbench reads the TPS (without connection time) and the average
// latency from pgbench's report.
func parsePgbench(out []byte) (float64, string, error) {
	m := tpsLine.FindSubmatch(out)
	if m == nil {
		return 0, "", fmt.Errorf("pgbench: no tps line in its output:\n%s", out)
	}
	tps, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		return 0, "", fmt.Errorf("pgbench: tps %q: %w", m[1], err)
	}
	lat := "?"
	if l := latencyLine.FindSubmatch(out); l != nil {
		lat = string(l[1])
	}
	return tps, lat, nil
}

// findPgbench looks for pgbench under /usr/lib/postgresql/*/bin (newest
// major version first), then on $PATH.
func findPgbench() (string, error) {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	sort.Slice(matches, func(i, j int) bool { return majorOf(matches[i]) > majorOf(matches[j]) })
	if len(matches) > 0 {
		return matches[0], nil
	}
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	return "", errors.New("no pgbench under /usr/lib/postgresql/*/bin or on $PATH " +
		"(Debian: apt-get install -y postgresql-contrib); or pass -pgbench")
}

// majorOf is the major version in a /usr/lib/postgresql/N/bin path.
func majorOf(path string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(path))))
	return n
}

// serverProc is a solitaire-server this program started.
type serverProc struct {
	cmd   *exec.Cmd
	url   string
	pprof string        // base URL of net/http/pprof, "" if off
	slack time.Duration // the process's timer slack (startCmd); 0: inherited
	exit  chan error
}

// startServer starts the binary on a free loopback port with env added to
// a clean environment (no inherited DATABASE_URL or SOLITAIRE_*) and
// timer slack slack (0: this tool's own), logs to logPath, and waits
// until /readyz answers 200.
func startServer(ctx context.Context, bin string, env []string, level string, pprof bool, slack time.Duration, logPath string) (*serverProc, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DATABASE_URL=") && !strings.HasPrefix(kv, "SOLITAIRE_") {
			base = append(base, kv)
		}
	}
	// No rate limit: the benchmark measures capacity, and the default
	// (50 requests/s per token) would throttle a player on a faster
	// machine. -env SOLITAIRE_RATE_LIMIT=50 measures with it. Every
	// client is a new player from one address: no limit on those either.
	// A new transparency log on PostgreSQL needs a name for its key
	// (docs/transparency.md, "Keys and configuration"). The supply of
	// winnable deals is off: at start-up it proves deals for every
	// variant's buffer, seconds of CPU that have nothing to do with moves
	// and would be counted in the server's CPU per move (-env
	// SOLITAIRE_WINNABLE_WORKERS=1 measures with it).
	base = append(base, "SOLITAIRE_ADDR="+addr, "SOLITAIRE_LOG_LEVEL="+level, "SOLITAIRE_RATE_LIMIT=0",
		"SOLITAIRE_PLAYER_CREATE_LIMIT=0", "SOLITAIRE_LOG_ORIGIN=bench.example/v1/log", "SOLITAIRE_WINNABLE_WORKERS=0")
	p := &serverProc{url: "http://" + addr, slack: slack, exit: make(chan error, 1)}
	if pprof {
		paddr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		base = append(base, "SOLITAIRE_PPROF_ADDR="+paddr)
		p.pprof = "http://" + paddr
	}
	cmd := exec.Command(bin)
	cmd.Env = append(base, env...)
	if err := p.start(ctx, cmd, logPath); err != nil {
		return nil, err
	}
	return p, nil
}

// start runs cmd as p's process, its output to a new file at logPath, and
// waits until it is ready (waitReady); p.exit receives its end.
func (p *serverProc) start(ctx context.Context, cmd *exec.Cmd, logPath string) error {
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	p.cmd = cmd
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := startCmd(p.cmd, p.slack); err != nil {
		logf.Close()
		return err
	}
	go func() { p.exit <- p.cmd.Wait(); logf.Close() }()
	return p.waitReady(ctx, logPath)
}

// waitReady waits up to 30 s for p's /readyz to answer 200; if it does
// not, p is killed and the error quotes its log.
func (p *serverProc) waitReady(ctx context.Context, logPath string) error {
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case err := <-p.exit:
			return fmt.Errorf("%s exited at start (%v); log: %s", p.cmd.Path, err, tail(logPath))
		case <-ctx.Done():
			p.kill()
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := client.Get(p.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	p.kill()
	return fmt.Errorf("%s not ready within 30s; log: %s", p.cmd.Path, tail(logPath))
}

// stop ends the server gracefully (SIGTERM), or kills it after 20 s.
func (p *serverProc) stop(w io.Writer) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exit:
	case <-time.After(20 * time.Second):
		fmt.Fprintln(w, "warning: server did not stop within 20s; killed")
		p.kill()
	}
}

func (p *serverProc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exit
}

// cpuProfile waits for delay, then fetches a CPU profile of length d from
// the server's pprof listener into path.
func (p *serverProc) cpuProfile(ctx context.Context, delay, d time.Duration, path string) error {
	select {
	case <-time.After(delay):
	case <-ctx.Done():
		return ctx.Err()
	}
	secs := max(int(d/time.Second)-1, 1)
	client := &http.Client{Timeout: d + 30*time.Second}
	resp, err := client.Get(p.pprof + "/debug/pprof/profile?seconds=" + strconv.Itoa(secs))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof: status %d", resp.StatusCode)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// cpuSample is the CPU time every process has used so far, and when it
// was read.
type cpuSample struct {
	at     time.Time
	target int // the process reported by name (the server, pgbench)
	procs  map[int]procCPU
}

// procCPU is one process's command name, its title (for PostgreSQL's
// processes: "postgres: 15/main: user database host state", or the
// background process's name) and CPU time.
type procCPU struct {
	comm, title string
	cpu         time.Duration
}

// clockTick is the unit of /proc/PID/stat's utime and stime (USER_HZ).
const clockTick = 10 * time.Millisecond

// sampleCPU reads the CPU time of every process; target is the one
// report names (the server or pgbench).
func sampleCPU(target int) cpuSample {
	s := cpuSample{at: time.Now(), target: target, procs: map[int]procCPU{}}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/stat")
		if err != nil {
			continue
		}
		// comm is in parentheses and may hold spaces: fields start after ')'.
		i := strings.LastIndexByte(string(b), ')')
		j := strings.IndexByte(string(b), '(')
		if i < 0 || j < 0 || j > i {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		p, _ := strconv.Atoi(filepath.Base(d))
		pc := procCPU{comm: string(b[j+1 : i]), cpu: time.Duration(ut+st) * clockTick}
		if pc.comm == "postgres" {
			title, _ := os.ReadFile(d + "/cmdline")
			pc.title = string(title)
		}
		s.procs[p] = pc
	}
	return s
}

// perUnit is the target process's CPU time between before and s per unit
// at perSecond units per second (what report prints as its first
// figure); 0 if the target was not alive at both samples or perSecond is
// not positive.
func (s cpuSample) perUnit(before cpuSample, perSecond float64) time.Duration {
	wall := s.at.Sub(before.at)
	p, ok := s.procs[s.target]
	p0, ok0 := before.procs[s.target]
	if wall <= 0 || perSecond <= 0 || !ok || !ok0 || p.comm != p0.comm || p.cpu < p0.cpu {
		return 0
	}
	return time.Duration(float64(p.cpu-p0.cpu) / wall.Seconds() / perSecond)
}

// report writes the cores used between before and s by the target
// process (called name), this process (the load tool), PostgreSQL's
// backends of database db, its background processes (WAL writer,
// checkpointer, …: shared with any other work on the cluster) and the
// machine, and the CPU time per unit ("per move") at perSecond units per
// second. Only processes alive at both samples count: a backend that
// started or ended in between is left out.
func (s cpuSample) report(w io.Writer, before cpuSample, perSecond float64, name, unit, db string) {
	wall := s.at.Sub(before.at)
	if wall <= 0 {
		return
	}
	var target, self, backends, background, all time.Duration
	for pid, p := range s.procs {
		p0, ok := before.procs[pid]
		if !ok || p0.comm != p.comm || p.cpu < p0.cpu {
			continue
		}
		d := p.cpu - p0.cpu
		all += d
		switch {
		case pid == s.target:
			target += d
		case pid == os.Getpid():
			self += d
		case p.comm == "postgres" && strings.Contains(p.title, " "+db+" "):
			backends += d
		case p.comm == "postgres" && !strings.Contains(p.title, "127.0.0.1(") && !strings.Contains(p.title, "[local]"):
			background += d
		}
	}
	line := func(name string, d time.Duration) string {
		cores := d.Seconds() / wall.Seconds()
		per := ""
		if perSecond > 0 {
			per = fmt.Sprintf(" = %.0f µs %s", cores/perSecond*1e6, unit)
		}
		return fmt.Sprintf("%s %.2f cores%s", name, cores, per)
	}
	parts := []string{line(name, target)}
	if self > 0 {
		parts = append(parts, line("load tool", self))
	}
	parts = append(parts, line("postgres backends", backends), line("postgres background", background),
		line("machine", all))
	fmt.Fprintf(w, "cpu          %s\n", strings.Join(parts, "; "))
}

// dbName is the database of a postgres:// URL.
func dbName(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(p.Path, "/")
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// procMemory is a process's resident memory from /proc/PID/status, in kB.
type procMemory struct {
	RSSKB int64 // VmRSS: resident now
	HWMKB int64 // VmHWM: the peak resident set
}

// RSSMB is VmRSS in MB (10^6 bytes).
func (m procMemory) RSSMB() float64 { return float64(m.RSSKB) * 1024 / 1e6 }

// HWMMB is VmHWM in MB (10^6 bytes).
func (m procMemory) HWMMB() float64 { return float64(m.HWMKB) * 1024 / 1e6 }

// readProcMemory reads VmRSS and VmHWM of process pid.
func readProcMemory(pid int) (procMemory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procMemory{}, err
	}
	defer f.Close()
	return parseProcStatus(f)
}

// parseProcStatus reads VmRSS and VmHWM from a /proc/PID/status file.
func parseProcStatus(r io.Reader) (procMemory, error) {
	var m procMemory
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			m.RSSKB = n
		case "VmHWM":
			m.HWMKB = n
		}
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if m.RSSKB == 0 || m.HWMKB == 0 {
		return m, errors.New("no VmRSS or VmHWM in /proc status")
	}
	return m, nil
}

// writeMachine writes what the figures were measured on.
func writeMachine(w io.Writer, pgVersion string) {
	host, _ := os.Hostname()
	fmt.Fprintf(w, "date         %s\n", time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "machine      %s, %d CPUs (%s), %s, %s/%s\n", host, runtime.NumCPU(), cpuModel(), memTotal(),
		runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "go           %s\n", runtime.Version())
	if i := strings.Index(pgVersion, " on "); i > 0 {
		pgVersion = pgVersion[:i]
	}
	fmt.Fprintf(w, "database     %s\n", pgVersion)
	fmt.Fprintf(w, "load average %s (at start)\n", loadAverage())
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// memTotal is MemTotal of /proc/meminfo in GiB.
func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return fmt.Sprintf("%.0f GiB", kb/(1<<20))
		}
	}
	return "?"
}

// tail is the last lines of a log file, for an error message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// loopbackPG refuses a database URL whose host is not this machine.
func loopbackPG(u string) error {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "postgres" && p.Scheme != "postgresql") {
		return fmt.Errorf("-pg %q: want a postgres:// URL", pgurl.Redact(u))
	}
	h := p.Hostname()
	if ip := net.ParseIP(h); h != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("-pg host %q: the benchmark runs only against a database on this machine (127.0.0.1)", h)
	}
	return nil
}
