package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
)

// testServer serves the API on a new SQLite database on a loopback port.
func testServer(t *testing.T) string {
	t.Helper()
	gin.SetMode(gin.ReleaseMode)
	store, err := persistence.Open(t.Context(), persistence.Config{
		SQLitePath: filepath.Join(t.TempDir(), "load.db"), StateCacheBytes: persistence.DefaultStateCacheBytes})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h, err := api.New(api.Config{Games: app.NewGames(store), Players: store, Idempotency: store,
		Spec: solitaire.OpenAPIYAML, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRunLoad plays 120 moves with a few players: moves of every kind
// are made, none is refused, and the report has the percentiles.
func TestRunLoad(t *testing.T) {
	cfg := defaultLoadConfig()
	cfg.URL, cfg.Players, cfg.Duration, cfg.Warmup = testServer(t), 4, time.Minute, 0
	cfg.Games, cfg.GameMoves, cfg.UndoShare = 4, 30, 0.3
	res, err := runLoad(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Moves < 120 || res.Games != 4 {
		t.Fatalf("%d moves, %d games in %s; want 4 games of 30 moves", res.Moves, res.Games, res.Measured)
	}
	if n := res.ErrorCount(); n != 0 {
		t.Errorf("%d failed requests: %v", n, res.Errors)
	}
	for _, typ := range []string{"draw", "undo"} {
		if res.ByType[typ] == 0 {
			t.Errorf("no %s among %v", typ, res.ByType)
		}
	}
	if res.Hist[opMove].TotalCount() != res.Moves || res.quantile(opMove, 50) <= 0 ||
		res.quantile(opMove, 99) > res.max(opMove) {
		t.Errorf("move histogram: %d values for %d moves, p50 %s, p99 %s, max %s", res.Hist[opMove].TotalCount(),
			res.Moves, res.quantile(opMove, 50), res.quantile(opMove, 99), res.max(opMove))
	}
	var out bytes.Buffer
	res.Report(&out)
	for _, want := range []string{"moves/s", "move latency", "p99", "errors       none"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestRunLoadGames: with Games the run stops by itself once that many
// games have been played, and leaves them in progress.
func TestRunLoadGames(t *testing.T) {
	cfg := defaultLoadConfig()
	cfg.URL, cfg.Players, cfg.Duration, cfg.Warmup = testServer(t), 3, time.Minute, 0
	cfg.Games, cfg.GameMoves = 7, 5
	start := time.Now()
	res, err := runLoad(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Games != 7 || res.Moves < 7*5 || time.Since(start) > 50*time.Second {
		t.Fatalf("%d games, %d moves in %s; want 7 games of 5 moves, stopping by itself", res.Games, res.Moves,
			time.Since(start))
	}
}

// TestConfigBounds: load goes only to loopback addresses, runs are
// bounded.
func TestConfigBounds(t *testing.T) {
	for _, mod := range []func(*loadConfig){
		func(c *loadConfig) { c.URL = "http://10.0.0.1:8080" },
		func(c *loadConfig) { c.URL = "http://example.com" },
		func(c *loadConfig) { c.Duration = time.Hour },
		func(c *loadConfig) { c.Players = 0 },
		func(c *loadConfig) { c.Warmup = c.Duration },
		func(c *loadConfig) { c.LegalShare = 2 },
	} {
		c := defaultLoadConfig()
		mod(&c)
		if err := c.validate(); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
	if err := defaultLoadConfig().validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	for _, u := range []string{"postgres://postgres@10.1.2.3/x", "postgres://db.example.com/x", "mysql://127.0.0.1/x"} {
		if err := loopbackPG(u); err == nil {
			t.Errorf("loopbackPG(%q) accepted", u)
		}
	}
	if err := loopbackPG("postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"); err != nil {
		t.Error(err)
	}
	for _, mod := range []func(*floorConfig){
		func(c *floorConfig) { c.Clients = 0 },
		func(c *floorConfig) { c.Clients = 91 },
		func(c *floorConfig) { c.Rounds = 0 },
		func(c *floorConfig) { c.Rounds = 21 },
		func(c *floorConfig) { c.Duration = 1500 * time.Millisecond }, // pgbench's -T takes whole seconds
		func(c *floorConfig) { c.Duration = 500 * time.Millisecond },
		func(c *floorConfig) { c.Duration = time.Hour },
	} {
		c := defaultFloorConfig()
		mod(&c)
		if err := c.check(); err == nil {
			t.Errorf("floor accepted %+v", c)
		}
	}
	if err := defaultFloorConfig().check(); err != nil {
		t.Errorf("floor defaults: %v", err)
	}
	var out strings.Builder
	if err := run(context.Background(), []string{"floor", "-rounds", "21"}, &out); err == nil || !strings.Contains(err.Error(), "1..20 rounds") {
		t.Errorf("floor -rounds 21: %v", err)
	}
}

func TestParsePgbench(t *testing.T) {
	out := []byte(`pgbench (15.20 (Debian 15.20-0+deb12u1))
transaction type: insert.sql
scaling factor: 1
query mode: simple
number of clients: 64
number of threads: 2
maximum number of tries: 1
duration: 20 s
number of transactions actually processed: 81234
number of failed transactions: 0 (0.000%)
latency average = 15.789 ms
initial connection time = 41.118 ms
tps = 4053.548956 (without initial connection time)
`)
	tps, lat, err := parsePgbench(out)
	if err != nil || tps != 4053.548956 || lat != "15.789 ms" {
		t.Errorf("parsePgbench = %v, %q, %v", tps, lat, err)
	}
	if _, _, err := parsePgbench([]byte("connection refused")); err == nil {
		t.Error("no tps line accepted")
	}
}

func TestParseProcStatus(t *testing.T) {
	m, err := parseProcStatus(strings.NewReader("Name:\tsolitaire-serve\nVmPeak:\t 2000000 kB\nVmHWM:\t   60000 kB\nVmRSS:\t   51200 kB\n"))
	if err != nil || m.RSSKB != 51200 || m.HWMKB != 60000 {
		t.Fatalf("parseProcStatus = %+v, %v", m, err)
	}
	if got := m.RSSMB(); got < 52.4 || got > 52.5 {
		t.Errorf("RSSMB = %v", got)
	}
	if _, err := parseProcStatus(strings.NewReader("Name:\tx\n")); err == nil {
		t.Error("status without VmRSS accepted")
	}
}

// TestRunUsage: no command or an unknown one is an error with the usage.
func TestRunUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"frobnicate"}} {
		if err := run(t.Context(), args, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "usage") {
			t.Errorf("run(%v) = %v", args, err)
		}
	}
}
