package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/openpatience/solitaire/persistence/pgtest"
)

// startTestBaseline serves the baseline on a fresh database for t.
func startTestBaseline(t *testing.T) (base, dsn string) {
	t.Helper()
	return startTestBaselineWork(t, 0)
}

// startTestBaselineWork serves the baseline with dbWork on a fresh
// database for t.
func startTestBaselineWork(t *testing.T, dbWork int) (base, dsn string) {
	t.Helper()
	dsn = pgtest.DSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- runBaseline(ctx, "127.0.0.1:0", dsn, 4, dbWork, func(a net.Addr) { addrs <- a }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("baseline: %v", err)
		}
	})
	select {
	case a := <-addrs:
		return "http://" + a.String(), dsn
	case err := <-done:
		t.Fatalf("baseline: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the baseline did not start")
	}
	return "", ""
}

// TestBaseline: the baseline server inserts one row per accepted move
// request, in one transaction each (PostgreSQL counts one commit per
// request), and refuses a body without a type (400) and a request
// without a token (401) without writing. The lean generator drives it
// and counts what it answered.
func TestBaseline(t *testing.T) {
	t.Parallel()
	base, dsn := startTestBaseline(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	rows := func() int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM baseline_moves`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	post := func(body, token string) int {
		req, _ := http.NewRequest("POST", base+"/v1/games/g1/moves", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if s := post(`{"type":"draw"}`, "t"); s != 200 || rows() != 1 {
		t.Fatalf("a move: %d, %d rows", s, rows())
	}
	if s := post(`{"kind":"draw"}`, "t"); s != 400 || rows() != 1 {
		t.Fatalf("a body without type: %d, %d rows", s, rows())
	}
	if s := post(`{"type":"draw"}`, ""); s != 401 || rows() != 1 {
		t.Fatalf("no token: %d, %d rows", s, rows())
	}

	if _, err := leanLoad(t.Context(), "http://example.com", []leanTarget{{Path: "/x"}}, 1, time.Second, 0); err == nil {
		t.Error("lean load to a non-loopback URL was not refused")
	}
	// The baseline's pool stays connected while it runs: close it to
	// read the counts, by measuring the generator alone first.
	targets := []leanTarget{{Path: "/v1/games/a/moves", Token: "t"}, {Path: "/v1/games/b/moves", Token: "t"}}
	res, err := leanLoad(t.Context(), base, targets, 2, 1500*time.Millisecond, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK == 0 || res.Total < res.OK || res.Errors != 0 || res.Quantile(50) <= 0 || res.PerSecond() <= 0 {
		t.Fatalf("lean run: %+v", res)
	}
	if got := rows(); int64(got) != 1+res.Total {
		t.Fatalf("%d rows after %d answered requests", got, res.Total)
	}
}

// TestBaselineDBWork: with db work the baseline's statement counts that
// many rows in PostgreSQL (EXPLAIN ANALYZE of the very statement shows
// the function scan's rows) and still inserts one row per move; without
// it there is no such scan; a count out of 0..maxDBWork is refused before
// the server starts, by runBaseline and by compare.
func TestBaselineDBWork(t *testing.T) {
	t.Parallel()
	const work = 2500
	base, dsn := startTestBaselineWork(t, work)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	req, _ := http.NewRequest("POST", base+"/v1/games/g1/moves", strings.NewReader(`{"type":"draw"}`))
	req.Header.Set("Authorization", "Bearer t")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM baseline_moves WHERE game_id = 'g1'`).Scan(&n); err != nil || res.StatusCode != 200 || n != 1 {
		t.Fatalf("a move with db work: %d, %d rows, %v", res.StatusCode, n, err)
	}
	for _, w := range []int{work, 0} {
		stmt, args := baselineStatement(w)
		var plan string
		if err := db.QueryRow(`EXPLAIN (ANALYZE, FORMAT JSON) `+stmt,
			[]any{"g2", "draw", int64(1), w}[:args]...).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		counted := seriesRows(t, plan) == work
		if counted != (w > 0) {
			t.Errorf("db work %d: the plan counts generate_series rows: %v\n%s", w, counted, plan)
		}
	}
	// Refused first: with a context already done, any other step would
	// fail with the context's error instead.
	done, cancel := context.WithCancel(t.Context())
	cancel()
	for _, bad := range []int{-1, maxDBWork + 1} {
		if err := runBaseline(done, "127.0.0.1:0", dsn, 1, bad, nil); err == nil || !strings.Contains(err.Error(), "db work") {
			t.Errorf("runBaseline with db work %d: %v, want refused", bad, err)
		}
		cfg := defaultCompareConfig()
		cfg.BaselineDBWork = bad
		if _, err := runCompare(done, cfg, io.Discard); err == nil || !strings.Contains(err.Error(), "db work") {
			t.Errorf("compare with baseline db work %d: %v, want refused", bad, err)
		}
	}
}

// seriesRows is the actual rows of the generate_series function scan in
// an EXPLAIN (ANALYZE, FORMAT JSON) plan, -1 if it has none.
func seriesRows(t *testing.T, plan string) int {
	t.Helper()
	var plans []struct{ Plan map[string]any }
	if err := json.Unmarshal([]byte(plan), &plans); err != nil || len(plans) != 1 {
		t.Fatalf("plan %s: %v", plan, err)
	}
	var walk func(node map[string]any) int
	walk = func(node map[string]any) int {
		if node["Function Name"] == "generate_series" {
			if rows, ok := node["Actual Rows"].(float64); ok {
				return int(rows)
			}
		}
		kids, _ := node["Plans"].([]any)
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				if n := walk(m); n >= 0 {
					return n
				}
			}
		}
		return -1
	}
	return walk(plans[0].Plan)
}

// TestCommitsOfBaseline: xactCommits counts PostgreSQL's commits in the
// database once the server's connections are gone: one per baseline
// request, give or take the baseline's start.
func TestCommitsOfBaseline(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
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
	before, err := xactCommits(t.Context(), admin, name)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- runBaseline(ctx, "127.0.0.1:0", dsn, 4, 0, func(a net.Addr) { addrs <- a }) }()
	base := "http://" + (<-addrs).String()
	res, err := leanLoad(t.Context(), base, []leanTarget{{Path: "/v1/games/a/moves", Token: "t"}}, 4, time.Second, 0)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	after, err := xactCommits(t.Context(), admin, name)
	if err != nil {
		t.Fatal(err)
	}
	per := float64(after-before) / float64(res.Total)
	if res.Total < 50 || per < 1 || per > 1.1 {
		t.Fatalf("%d commits for %d requests (%.3f each), want one each", after-before, res.Total, per)
	}
}

// leanAt is a lean result of 10 s at perSecond answers per second whose
// p99 is p99 (the other answers take 1 ms).
func leanAt(perSecond float64, p99 time.Duration) *leanResult {
	h := hdrhistogram.New(histMin, histMax, histDigits)
	for range 98 {
		_ = h.RecordValue(1000)
	}
	_ = h.RecordValue(p99.Microseconds())
	_ = h.RecordValue(p99.Microseconds())
	return &leanResult{Measured: 10 * time.Second, OK: int64(perSecond * 10), Hist: h}
}

// TestCompareTable: the table gives the ratios to the baseline and to
// pgbench and, on each row, the targets it misses.
func TestCompareTable(t *testing.T) {
	rows := []compareRow{
		{Clients: 1, PgbenchTPS: 3000, Baseline: leanAt(2000, 2*time.Millisecond), Product: leanAt(2200, 2*time.Millisecond), ProductCommits: 1.01, BaselineCommits: 1,
			BaselineCPU: 250 * time.Microsecond, ProductCPU: 300 * time.Microsecond, CPURatios: []float64{1.3, 1.1, 1.25, 1.4}},
		{Clients: 64, PgbenchTPS: 5000, Baseline: leanAt(3600, 30*time.Millisecond), Product: leanAt(2900, 50*time.Millisecond), ProductCommits: 0.3, BaselineCommits: 1,
			BaselineCPU: 120 * time.Microsecond, ProductCPU: 108 * time.Microsecond, CPURatios: []float64{0.9}},
	}
	var b bytes.Buffer
	writeCompareTable(&b, rows, 0)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("table:\n%s", b.String())
	}
	for _, want := range []string{"| 1 | 3000 | 2000 ", "| 1.10 | 1.00 | 0.73 | 1.01 / 1.00 | 300 vs 250 µs (1.20); 4 rounds: median 1.27, 1.10–1.40 | met — throughput not judged (no -ceiling) |"} {
		if !strings.Contains(lines[2], want) {
			t.Errorf("row 1 lacks %q:\n%s", want, lines[2])
		}
	}
	if want := "| 0.81 | 1.67 | 0.58 | 0.30 / 1.00 | 108 vs 120 µs (0.90) | NOT met: p99 1.666 > 1.2; throughput 0.806 < 1.2; pgbench 0.580 < 0.6 |"; !strings.HasSuffix(lines[3], want) {
		t.Errorf("row 64 does not end in %q:\n%s", want, lines[3])
	}
	// Against a baseline slowed on purpose (-baseline-db-work) the ratios
	// are printed and no target is judged, met or not.
	b.Reset()
	rows[0].BaselineSlowed = true
	rows[1].BaselineSlowed = true
	writeCompareTable(&b, rows, 0.8)
	lines = strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.HasSuffix(lines[2], "| 1.10 | 1.00 | 0.73 | 1.01 / 1.00 | 300 vs 250 µs (1.20); 4 rounds: median 1.27, 1.10–1.40 | not judged (baseline slowed) |") {
		t.Errorf("slowed baseline:\n%s", lines[2])
	}
	if !strings.HasSuffix(lines[3], "| 108 vs 120 µs (0.90) | not judged (baseline slowed) |") {
		t.Errorf("slowed baseline, 64 clients:\n%s", lines[3])
	}
}

// TestCompareTargets: each of compare's targets can fail on its own, and
// the targets cell names the missed ones with the figure and the bound:
// server CPU per move (pooled) ≤ 1.25× the baseline's and p99 ≤ 1.2× at
// every client count; throughput ≥ 0.9× the -ceiling at one client (not
// judged without it), ≥ 0.9× the baseline at 16, ≥ 1.2× and ≥ 0.6×
// pgbench at 64, not judged at other counts.
func TestCompareTargets(t *testing.T) {
	// row is a row at clients whose product makes vsB × the baseline's
	// 2000 requests/s, with p99 p99 (the baseline's: 2 ms), CPU per move
	// cpu µs (the baseline's: 200 µs) and pgbench at 2000 TPS.
	row := func(clients int, vsB float64, p99 time.Duration, cpu time.Duration) compareRow {
		return compareRow{Clients: clients, PgbenchTPS: 2000, Baseline: leanAt(2000, 2*time.Millisecond), Product: leanAt(2000*vsB, p99),
			BaselineCPU: 200 * time.Microsecond, ProductCPU: cpu * time.Microsecond}
	}
	// with is r changed by f (a field row does not set).
	with := func(r compareRow, f func(*compareRow)) compareRow { f(&r); return r }
	const ms2, ms3 = 2 * time.Millisecond, 3 * time.Millisecond
	for _, c := range []struct {
		name    string
		row     compareRow
		ceiling float64
		want    string
	}{
		{"1 client, all met", row(1, 0.75, ms2, 240), 0.8, "met"},
		{"16 clients, all met", row(16, 1.0, ms2, 240), 0, "met"},
		{"64 clients, all met", row(64, 1.3, ms2, 180), 0, "met"},
		{"16 clients at the bounds", row(16, 0.9, ms2, 250), 0, "met"},
		{"CPU missed", row(16, 1.0, ms2, 260), 0, "NOT met: CPU 1.300 > 1.25"},
		{"CPU missed at 64", row(64, 1.3, ms2, 260), 0, "NOT met: CPU 1.300 > 1.25"},
		{"CPU not measured", row(16, 1.0, ms2, 0), 0, "NOT met: CPU not measured"},
		{"baseline CPU not measured", with(row(16, 1.0, ms2, 240), func(r *compareRow) { r.BaselineCPU = 0 }), 0, "NOT met: CPU not measured"},
		{"CPU not measured in every round", with(row(16, 1.0, ms2, 240), func(r *compareRow) { r.CPUUnpaired = true }), 0, "NOT met: CPU not measured in every round"},
		{"product errors", with(row(16, 1.0, ms2, 240), func(r *compareRow) { r.Product.Errors = 3 }), 0, "NOT met: 3 errors"},
		{"baseline errors", with(row(16, 1.0, ms2, 240), func(r *compareRow) { r.Baseline.Errors = 2 }), 0, "not judged (2 baseline errors)"},
		{"p99 missed", row(16, 1.0, ms3, 240), 0, "NOT met: p99 1.500 > 1.2"},
		{"CPU and p99 missed", row(64, 1.3, ms3, 260), 0, "NOT met: CPU 1.300 > 1.25; p99 1.500 > 1.2"},
		{"1 client below 0.9× the ceiling", row(1, 0.7, ms2, 240), 0.8, "NOT met: throughput 0.700 < 0.720 (0.9× ceiling 0.8)"},
		{"1 client without a ceiling", row(1, 0.3, ms2, 240), 0, "met — throughput not judged (no -ceiling)"},
		{"1 client without a ceiling, CPU missed", row(1, 0.3, ms2, 260), 0, "NOT met: CPU 1.300 > 1.25 — throughput not judged (no -ceiling)"},
		{"16 clients below 0.9", row(16, 0.85, ms2, 240), 0.8, "NOT met: throughput 0.850 < 0.9"},
		{"64 clients below 1.2", row(64, 1.1, ms2, 240), 0, "NOT met: throughput 1.100 < 1.2"},
		{"64 clients below 0.6× pgbench", with(row(64, 1.3, ms2, 240), func(r *compareRow) { r.PgbenchTPS = 5000 }), 0, "NOT met: pgbench 0.520 < 0.6"},
		{"8 clients", row(8, 0.3, ms2, 240), 0.8, "met — throughput not judged at 8 clients"},
		{"slowed baseline", with(row(64, 0.5, ms3, 300), func(r *compareRow) { r.BaselineSlowed = true }), 0.8, "not judged (baseline slowed)"},
	} {
		var b bytes.Buffer
		writeCompareTable(&b, []compareRow{c.row}, c.ceiling)
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		if len(lines) != 3 {
			t.Errorf("%s: table:\n%s", c.name, b.String())
			continue
		}
		cells := strings.Split(strings.Trim(lines[2], "| "), " | ")
		if got := cells[len(cells)-1]; got != c.want {
			t.Errorf("%s: targets %q, want %q\n%s", c.name, got, c.want, lines[2])
		}
	}
	// The bounds themselves are met; a hair beyond each is not.
	at := compareRow{Clients: 64, BaselineCPU: 200 * time.Microsecond, ProductCPU: 250 * time.Microsecond}
	if got := at.verdict(1.2, 1.2, 0.6, 0); got != "met" {
		t.Errorf("at the bounds: %q", got)
	}
	at.ProductCPU++
	if got := at.verdict(1.2-1e-9, 1.2+1e-9, 0.6-1e-9, 0); got != "NOT met: CPU 1.250 > 1.25; p99 1.200 > 1.2; throughput 1.200 < 1.2; pgbench 0.600 < 0.6" {
		t.Errorf("beyond the bounds: %q", got)
	}
}

// TestCompareCeilingFlag: -ceiling takes 0 (not given) or a ratio in
// (0, 1]; a negative ratio, one above 1, NaN and a non-number are refused
// before any work, by the flag and by runCompare.
func TestCompareCeilingFlag(t *testing.T) {
	for _, good := range []float64{0, 0.5, 0.77, 1} {
		if err := checkCeiling(good); err != nil {
			t.Errorf("ceiling %v refused: %v", good, err)
		}
	}
	// Refused first: with a context already done, any other step would
	// fail with the context's error instead.
	done, cancel := context.WithCancel(t.Context())
	cancel()
	for _, bad := range []string{"-0.1", "1.5", "abc", "NaN", "+Inf"} {
		var out bytes.Buffer
		err := run(done, []string{"compare", "-ceiling", bad}, &out)
		if err == nil || !strings.Contains(err.Error(), "-ceiling") {
			t.Errorf("compare -ceiling %s: %v, want refused", bad, err)
		}
	}
	var out bytes.Buffer
	if err := run(done, []string{"compare", "-ceiling", "abc"}, &out); err == nil || !strings.Contains(err.Error(), `invalid value "abc" for flag -ceiling`) ||
		!strings.Contains(out.String(), "one-client throughput ceiling") {
		t.Errorf("compare -ceiling abc: %v\n%s", err, out.String())
	}
	for _, bad := range []float64{-0.1, 1.5, math.NaN(), math.Inf(1)} {
		cfg := defaultCompareConfig()
		cfg.Ceiling = bad
		if _, err := runCompare(done, cfg, io.Discard); err == nil || !strings.Contains(err.Error(), "ceiling") {
			t.Errorf("compare with ceiling %v: %v, want refused", bad, err)
		}
	}
}

// TestCompareRounds: the rounds of one server pool into one result (the
// answers and the latency histograms summed, commits per answer weighted
// by each round's answers, CPU per answer by its counted answers), and a
// round count outside 1..maxRounds is refused before any work.
func TestCompareRounds(t *testing.T) {
	round := func(ok, total int64, latency time.Duration) *leanResult {
		h := hdrhistogram.New(histMin, histMax, histDigits)
		for range ok {
			_ = h.RecordValue(latency.Microseconds())
		}
		return &leanResult{Clients: 1, Measured: 10 * time.Second, OK: ok, Total: total, Errors: 1, Hist: h}
	}
	var p pooled
	if res, commits, cpu := p.result(); res != nil || commits != 0 || cpu != 0 {
		t.Fatalf("no rounds: %v %v %v", res, commits, cpu)
	}
	p.add(round(1000, 1200, time.Millisecond), 1.0, 300*time.Microsecond)
	p.add(round(3000, 3600, 3*time.Millisecond), 1.2, 200*time.Microsecond)
	p.add(round(2000, 2400, 3*time.Millisecond), 1.2, 0) // its CPU not measured: left out of the CPU figure only
	res, commits, cpu := p.result()
	if res.OK != 6000 || res.Total != 7200 || res.Errors != 3 || res.Measured != 30*time.Second || res.PerSecond() != 200 {
		t.Errorf("pooled answers: %+v", res)
	}
	if q := res.Quantile(50); q < 2900*time.Microsecond || q > 3100*time.Microsecond {
		t.Errorf("pooled p50 %s, want about 3 ms (five sixths of the answers)", q)
	}
	if want := (1.0*1200 + 1.2*3600 + 1.2*2400) / 7200; math.Abs(commits-want) > 1e-9 {
		t.Errorf("pooled commits per answer %v, want %v", commits, want)
	}
	if cpu != 225*time.Microsecond { // (300×1000 + 200×3000) / 4000
		t.Errorf("pooled CPU per answer %s, want 225µs", cpu)
	}
	done, cancel := context.WithCancel(t.Context())
	cancel()
	for _, bad := range []int{-1, maxRounds + 1} {
		cfg := defaultCompareConfig()
		cfg.Rounds = bad
		if _, err := runCompare(done, cfg, io.Discard); err == nil || !strings.Contains(err.Error(), "rounds") {
			t.Errorf("compare with %d rounds: %v, want refused", bad, err)
		}
	}
}
