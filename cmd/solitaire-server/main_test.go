package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.ReleaseMode)
	os.Exit(m.Run())
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestLoadConfig(t *testing.T) {
	c, err := loadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.addr != "127.0.0.1:8080" || c.store.SQLitePath != "solitaire.db" || c.store.DatabaseURL != "" ||
		c.store.SnapshotEvery != persistence.DefaultSnapshotEvery || c.level != slog.LevelInfo {
		t.Errorf("defaults: %+v", c)
	}
	c, err = loadConfig(env(map[string]string{"SOLITAIRE_ADDR": ":9000", "DATABASE_URL": "postgres://x",
		"SOLITAIRE_SQLITE_PATH": "/tmp/a.db", "SOLITAIRE_SNAPSHOT_EVERY": "0", "SOLITAIRE_LOG_LEVEL": "debug"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.addr != ":9000" || c.store.DatabaseURL != "postgres://x" || c.store.SQLitePath != "/tmp/a.db" ||
		c.store.SnapshotEvery != 0 || c.level != slog.LevelDebug {
		t.Errorf("from env: %+v", c)
	}
	for _, bad := range []map[string]string{
		{"SOLITAIRE_SNAPSHOT_EVERY": "-1"},
		{"SOLITAIRE_SNAPSHOT_EVERY": "many"},
		{"SOLITAIRE_LOG_LEVEL": "loud"},
	} {
		if _, err := loadConfig(env(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if err := run(context.Background(), []string{"frobnicate"}, env(nil), io.Discard, nil); err == nil {
		t.Errorf("unknown subcommand accepted")
	}
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServe starts the server on each database, talks to it over the
// network, and stops it as SIGTERM would.
func TestServe(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			vars := map[string]string{"SOLITAIRE_ADDR": "127.0.0.1:0"}
			if backend == "postgres" {
				vars["DATABASE_URL"] = pgtest.DSN(t)
				vars["SOLITAIRE_LOG_ORIGIN"] = "test.example/v1/log"
			} else {
				vars["SOLITAIRE_SQLITE_PATH"] = filepath.Join(t.TempDir(), "s.db")
			}
			// migrate first, as an operator would; serve migrates too.
			if err := run(context.Background(), []string{"migrate"}, env(vars), io.Discard, nil); err != nil {
				t.Fatalf("migrate: %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			addrs := make(chan net.Addr, 1)
			logs := &syncBuffer{}
			done := make(chan error, 1)
			go func() { done <- run(ctx, nil, env(vars), logs, func(a net.Addr) { addrs <- a }) }()
			var base string
			select {
			case a := <-addrs:
				base = "http://" + a.String()
			case err := <-done:
				t.Fatalf("run: %v", err)
			case <-time.After(30 * time.Second):
				t.Fatal("the server did not start")
			}

			get := func(path string) (int, []byte) {
				t.Helper()
				r, err := http.Get(base + path)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Body.Close()
				b, _ := io.ReadAll(r.Body)
				return r.StatusCode, b
			}
			if s, _ := get("/healthz"); s != 200 {
				t.Errorf("/healthz %d", s)
			}
			if s, b := get("/readyz"); s != 200 {
				t.Errorf("/readyz %d %s", s, b)
			}
			if s, b := get("/openapi.yaml"); s != 200 || !bytes.Equal(b, solitaire.OpenAPIYAML) {
				t.Errorf("/openapi.yaml %d", s)
			}
			if _, b := get("/metrics"); !strings.Contains(string(b), "go_goroutines") || !strings.Contains(string(b), "solitaire_http_requests_total") ||
				!strings.Contains(string(b), "solitaire_state_cache_hits_total") || !strings.Contains(string(b), "solitaire_append_batches_total") {
				t.Errorf("/metrics lacks the Go, HTTP or store metrics")
			}
			r, err := http.Post(base+"/v1/players", "application/json", strings.NewReader(`{"name":"ops"}`))
			if err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			if r.StatusCode != http.StatusCreated {
				t.Errorf("POST /v1/players %d", r.StatusCode)
			}

			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("shutdown: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the server did not stop")
			}
			out := logs.String()
			for _, want := range []string{`"msg":"serving"`, `"msg":"http request"`, `"route":"/v1/players"`, `"msg":"stopped"`} {
				if !strings.Contains(out, want) {
					t.Errorf("logs lack %s:\n%s", want, out)
				}
			}
		})
	}
}

type countingPurger struct {
	mu    sync.Mutex
	calls int
}

func (p *countingPurger) PurgeIdempotency(context.Context, time.Time) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	return 1, nil
}

func TestPurgeLoop(t *testing.T) {
	p := &countingPurger{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		purgeLoop(ctx, p, time.Millisecond, slog.New(slog.DiscardHandler))
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		n := p.calls
		p.mu.Unlock()
		if n >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("purged %d times", n)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
}
