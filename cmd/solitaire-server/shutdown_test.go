package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// serverProcess is solitaire-server built by `go build` and run as its own
// process, as in production.
type serverProcess struct {
	t    *testing.T
	cmd  *exec.Cmd
	base string // http://host:port
	logs *syncBuffer
	done chan struct{} // closed when the process has exited
	err  error         // its exit, once done
}

// buildBinary builds this command into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin, err := buildInto(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// buildInto builds this command into dir and returns the binary's path;
// unlike buildBinary it may run on a goroutine of its own (it does not
// fail the test), while the test starts what else it needs.
func buildInto(dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil && os.Getenv("GOROOT") != "" { // go test sets GOROOT for the binaries it runs
		goTool, err = filepath.Join(os.Getenv("GOROOT"), "bin", "go"), nil
	}
	if err != nil {
		return "", fmt.Errorf("no go command to build the server with: %v", err)
	}
	bin := filepath.Join(dir, "solitaire-server")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// testOrigin is the log origin the tests' server processes get unless
// env names another: the name an operator gives a log on PostgreSQL,
// where a new key has no default (TestLogOrigin).
const testOrigin = "SOLITAIRE_LOG_ORIGIN=test.example/v1/log"

// noSupply turns the supply of proven deals off in the tests' server
// processes unless env turns it on again (SOLITAIRE_WINNABLE_WORKERS=1):
// at start-up it proves two deals of every variant, Harp and Tripleharp
// included, a few seconds of one core, and the robustness tests start
// and restart dozens of servers that deal no winnable game.
const noSupply = "SOLITAIRE_WINNABLE_WORKERS=0"

// startServerProcess runs bin with a clean environment plus testOrigin,
// noSupply and env, and waits for its "serving" log line, which names its
// address.
func startServerProcess(t *testing.T, bin string, env ...string) *serverProcess {
	t.Helper()
	cmd := exec.Command(bin)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SOLITAIRE_") && !strings.HasPrefix(kv, "DATABASE_URL=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, testOrigin, noSupply), env...) // the last of a name wins
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serverProcess{t: t, cmd: cmd, logs: &syncBuffer{}, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			p.logs.Write(append(sc.Bytes(), '\n'))
			var line struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving" {
				addr <- line.Addr
			}
		}
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	select {
	case a := <-addr:
		p.base = "http://" + a
	case <-p.done:
		t.Fatalf("server exited: %v\n%s", p.err, p.logs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("server did not report its address\n%s", p.logs.String())
	}
	return p
}

// jsonCall sends a JSON request and decodes a JSON answer into out.
func jsonCall(client *http.Client, method, url, token string, header map[string]string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			return res.StatusCode, fmt.Errorf("%s: %w", b, err)
		}
	}
	return res.StatusCode, nil
}

// shutdownClient plays its own game as fast as it can until the server
// goes away, counting what it was told.
type shutdownClient struct {
	token, game string
	acked       int // events listed by 200 answers
	ok, failed  int // moves answered 200; requests without an answer
	throttled   int // answered 429 (the default rate limit applies)
	others      []int
}

// TestGracefulShutdown runs the real binary, keeps it busy with a burst of
// moves from many clients and one request whose body is still arriving,
// and sends SIGTERM: the request in flight completes with 200, the process
// exits 0 within the shutdown timeout, and afterwards every game's log
// holds exactly the events the clients were told about (nothing lost,
// nothing applied without an answer) and its hash chain verifies.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			var storeCfg persistence.Config
			env := []string{"SOLITAIRE_ADDR=127.0.0.1:0", "SOLITAIRE_LOG_LEVEL=info"}
			if backend == "postgres" {
				storeCfg.DatabaseURL = pgtest.DSN(t)
				env = append(env, "DATABASE_URL="+storeCfg.DatabaseURL)
			} else {
				storeCfg.SQLitePath = filepath.Join(t.TempDir(), "s.db")
				env = append(env, "SOLITAIRE_SQLITE_PATH="+storeCfg.SQLitePath)
			}
			p := startServerProcess(t, bin, env...)
			client := &http.Client{Timeout: 20 * time.Second}
			newGame := func() (token, game string) {
				var pl struct{ Token string }
				if s, err := jsonCall(client, "POST", p.base+"/v1/players", "", nil, map[string]string{"name": "p"}, &pl); s != 201 {
					t.Fatalf("new player: %d %v", s, err)
				}
				var g struct{ ID string }
				if s, err := jsonCall(client, "POST", p.base+"/v1/games", pl.Token, nil, map[string]string{"variant": "relaxed"}, &g); s != 201 {
					t.Fatalf("new game: %d %v", s, err)
				}
				return pl.Token, g.ID
			}

			const n = 8
			clients := make([]*shutdownClient, n)
			for i := range clients {
				tok, g := newGame()
				clients[i] = &shutdownClient{token: tok, game: g}
			}
			slowToken, slowGame := newGame()

			// The slow request: headers and half a body now, the rest after
			// SIGTERM.
			conn, err := net.Dial("tcp", strings.TrimPrefix(p.base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			body := `{"type":"draw"}`
			fmt.Fprintf(conn, "POST /v1/games/%s/moves HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", slowGame, slowToken, len(body), body[:7])

			var stop atomic.Bool
			var wg sync.WaitGroup
			for _, c := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c.play(client, p.base, &stop)
				}()
			}
			time.Sleep(400 * time.Millisecond)
			if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			sigAt := time.Now()
			// Shutdown has begun once new connections are refused.
			refused := false
			for deadline := time.Now().Add(5 * time.Second); !refused && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				c, err := net.DialTimeout("tcp", strings.TrimPrefix(p.base, "http://"), time.Second)
				if refused = err != nil; !refused {
					c.Close()
				}
			}
			if !refused {
				t.Fatalf("new connections still accepted 5 s after SIGTERM")
			}
			select {
			case <-p.done:
				t.Fatalf("the process exited with a request in flight: %v\n%s", p.err, p.logs.String())
			default:
			}
			if _, err := io.WriteString(conn, body[7:]); err != nil {
				t.Fatalf("finishing the slow request: %v", err)
			}
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("the slow request got no answer: %v", err)
			}
			var slowRes struct {
				Events []json.RawMessage `json:"events"`
			}
			if err := json.NewDecoder(res.Body).Decode(&slowRes); err != nil || res.StatusCode != http.StatusOK {
				t.Errorf("the slow request: %d (%v), want 200", res.StatusCode, err)
			}
			res.Body.Close()
			select {
			case <-p.done:
			case <-time.After(shutdownTimeout + 5*time.Second):
				t.Fatalf("still running %v after SIGTERM\n%s", time.Since(sigAt), p.logs.String())
			}
			exitAfter := time.Since(sigAt)
			stop.Store(true)
			wg.Wait()
			if p.err != nil {
				t.Errorf("exit: %v, want 0\n%s", p.err, p.logs.String())
			}
			if logs := p.logs.String(); !strings.Contains(logs, `"msg":"shutting down"`) || !strings.Contains(logs, `"msg":"stopped"`) {
				t.Errorf("the logs do not show a graceful shutdown:\n%s", logs)
			}

			// Afterwards, from the database itself.
			store, err := persistence.Open(context.Background(), storeCfg)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			ctx := context.Background()
			var moves, failed, throttled, lost, unanswered int
			for _, c := range append(clients, &shutdownClient{game: slowGame, acked: len(slowRes.Events)}) {
				moves += c.ok
				failed += c.failed
				throttled += c.throttled
				for _, s := range c.others {
					t.Errorf("game %s: answer %d", c.game, s)
				}
				if bad, err := store.VerifyChain(ctx, c.game); err != nil || bad != 0 {
					t.Errorf("game %s: chain broken at %d (%v)", c.game, bad, err)
				}
				recs, err := store.Events(ctx, c.game, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				switch got := len(recs) - 1; {
				case got < c.acked:
					lost += c.acked - got
					t.Errorf("game %s: %d events acknowledged, %d in the log", c.game, c.acked, got)
				case got > c.acked:
					unanswered += got - c.acked
					t.Errorf("game %s: %d events in the log, only %d acknowledged", c.game, got, c.acked)
				}
			}
			if moves == 0 {
				t.Errorf("no move was played before the shutdown")
			}
			t.Logf("%d requests throttled by the default rate limit", throttled)
			figure(t, "%d clients, %d moves answered 200, %d requests refused after shutdown began, "+
				"slow request in flight %d, exit status %v after %v, events lost %d, applied without an answer %d",
				n, moves, failed, res.StatusCode, exitStatus(p.err), exitAfter.Round(time.Millisecond), lost, unanswered)
		})
	}
}

// figure prints a test's one-line summary on standard output and appends
// it to the file named by $SOLITAIRE_TEST_FIGURES, if set (as the api
// tests do; CI prints the file).
func figure(t *testing.T, format string, args ...any) {
	line := fmt.Sprintf("reliability: %s: %s", t.Name(), fmt.Sprintf(format, args...))
	t.Log(line)
	fmt.Println(line)
	if path := os.Getenv("SOLITAIRE_TEST_FIGURES"); path != "" {
		if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
			fmt.Fprintln(f, line)
			f.Close()
		}
	}
}

// exitStatus is a process's exit status for the figures.
func exitStatus(err error) string {
	if err == nil {
		return "0"
	}
	return err.Error()
}

// play sends moves (each with If-Match, so one can apply at most once)
// until the server is gone.
func (c *shutdownClient) play(client *http.Client, base string, stop *atomic.Bool) {
	for !stop.Load() {
		var l struct {
			Version int `json:"version"`
			Moves   []map[string]any
		}
		s, err := jsonCall(client, "GET", base+"/v1/games/"+c.game+"/legal-moves", c.token, nil, nil, &l)
		if err != nil {
			c.failed++
			if errors.Is(err, syscall.ECONNREFUSED) {
				return
			}
			continue
		}
		if s == http.StatusTooManyRequests {
			c.throttled++
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if s != 200 || len(l.Moves) == 0 {
			c.others = append(c.others, s)
			return
		}
		m := l.Moves[0]
		for _, x := range l.Moves {
			if x["type"] == "draw" || x["type"] == "move" {
				m = x
				break
			}
		}
		var res struct {
			Events []json.RawMessage `json:"events"`
		}
		s, err = jsonCall(client, "POST", base+"/v1/games/"+c.game+"/moves", c.token,
			map[string]string{"If-Match": strconv.Quote(strconv.Itoa(l.Version))}, m, &res)
		switch {
		case err != nil:
			c.failed++
			if errors.Is(err, syscall.ECONNREFUSED) {
				return
			}
		case s == 200:
			c.ok++
			c.acked += len(res.Events)
		case s == http.StatusTooManyRequests:
			c.throttled++
			time.Sleep(100 * time.Millisecond)
		default:
			c.others = append(c.others, s)
			return
		}
	}
}

// TestSlowHeaders: a client that starts a request and never finishes its
// headers (slowloris) is cut off after the read-header timeout, while
// everyone else is served as usual.
func TestSlowHeaders(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"SOLITAIRE_ADDR": "127.0.0.1:0", "SOLITAIRE_SQLITE_PATH": filepath.Join(t.TempDir(), "s.db")}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, nil, env(vars), io.Discard, func(a net.Addr) { addrs <- a }) }()
	var addr string
	select {
	case a := <-addrs:
		addr = a.String()
	case err := <-done:
		t.Fatalf("run: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start")
	}
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}()

	const slow = 20
	type result struct {
		after time.Duration
		sent  int
	}
	results := make(chan result, slow)
	for i := 0; i < slow; i++ {
		go func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				results <- result{-1, 0}
				return
			}
			defer conn.Close()
			start := time.Now()
			// One header line every 250 ms, never the blank line that ends them.
			go func() {
				io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
				for i := 0; ; i++ {
					time.Sleep(250 * time.Millisecond)
					if _, err := fmt.Fprintf(conn, "X-Slow-%d: 1\r\n", i); err != nil {
						return
					}
				}
			}()
			conn.SetReadDeadline(time.Now().Add(20 * time.Second))
			b, _ := io.ReadAll(conn) // until the server closes the connection
			results <- result{time.Since(start), len(b)}
		}()
	}
	// Meanwhile the server answers others.
	time.Sleep(time.Second)
	for i := 0; i < 5; i++ {
		res, err := http.Get("http://" + addr + "/healthz")
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("/healthz during the slow clients: %v %v", res, err)
		}
		res.Body.Close()
	}
	var longest time.Duration
	for i := 0; i < slow; i++ {
		r := <-results
		if r.after < readHeaderTimeout-500*time.Millisecond || r.after > readHeaderTimeout+3*time.Second {
			t.Errorf("a slow client was cut off after %v, want about %v", r.after, readHeaderTimeout)
		}
		longest = max(longest, r.after)
	}
	figure(t, "%d clients that never finish their headers cut off within %v (read-header timeout %v); others served meanwhile",
		slow, longest.Round(time.Millisecond), readHeaderTimeout)
}

// TestLoadLimits: SOLITAIRE_RATE_LIMIT, SOLITAIRE_RATE_BURST,
// SOLITAIRE_PLAYER_CREATE_LIMIT, SOLITAIRE_PROBE_RATE_LIMIT and
// SOLITAIRE_CORS_ORIGINS.
func TestLoadLimits(t *testing.T) {
	c, err := loadConfig(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.rateLimit != defaultRateLimit || c.rateBurst != 2*defaultRateLimit || c.corsOrigins != nil ||
		c.playersPerHour != defaultPlayersPerHour || c.gamesInProgress != defaultGamesInProgress || c.probeRate != defaultProbeRate {
		t.Errorf("defaults: limit %v, burst %d, origins %q, players %d", c.rateLimit, c.rateBurst, c.corsOrigins, c.playersPerHour)
	}
	c, err = loadConfig(env(map[string]string{"SOLITAIRE_RATE_LIMIT": "2.5", "SOLITAIRE_RATE_BURST": "7",
		"SOLITAIRE_CORS_ORIGINS": " https://a.example, http://localhost:5173 ,,", "SOLITAIRE_PLAYER_CREATE_LIMIT": "0",
		"SOLITAIRE_PROBE_RATE_LIMIT": "0.5"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.rateLimit != 2.5 || c.rateBurst != 7 || len(c.corsOrigins) != 2 || c.corsOrigins[1] != "http://localhost:5173" ||
		c.playersPerHour != 0 || c.probeRate != 0.5 {
		t.Errorf("from env: limit %v, burst %d, origins %q, players %d", c.rateLimit, c.rateBurst, c.corsOrigins, c.playersPerHour)
	}
	if c, err := loadConfig(env(map[string]string{"SOLITAIRE_SHARED_MIN_ACCOUNT_AGE": "24h"})); err != nil || c.minAccountAge != 24*time.Hour {
		t.Errorf("SOLITAIRE_SHARED_MIN_ACCOUNT_AGE=24h: %v, %v", c.minAccountAge, err)
	}
	if c, _ := loadConfig(env(map[string]string{"SOLITAIRE_RATE_LIMIT": "0"})); c.rateLimit != 0 || c.rateBurst != 1 {
		t.Errorf("no limit: %v %d", c.rateLimit, c.rateBurst)
	}
	for _, bad := range []map[string]string{
		{"SOLITAIRE_RATE_LIMIT": "-1"}, {"SOLITAIRE_RATE_LIMIT": "fast"}, {"SOLITAIRE_RATE_LIMIT": "NaN"},
		{"SOLITAIRE_RATE_LIMIT": "+Inf"}, {"SOLITAIRE_RATE_BURST": "0"}, {"SOLITAIRE_RATE_BURST": "1.5"},
		{"SOLITAIRE_PLAYER_CREATE_LIMIT": "-1"}, {"SOLITAIRE_PLAYER_CREATE_LIMIT": "many"},
		{"SOLITAIRE_MAX_GAMES_IN_PROGRESS": "-5"}, {"SOLITAIRE_PROBE_RATE_LIMIT": "-1"},
		{"SOLITAIRE_PROBE_RATE_LIMIT": "often"}, {"SOLITAIRE_PROBE_RATE_LIMIT": "+Inf"},
		{"SOLITAIRE_SHARED_MIN_ACCOUNT_AGE": "-1h"}, {"SOLITAIRE_SHARED_MIN_ACCOUNT_AGE": "a day"},
		{"SOLITAIRE_SHARED_MIN_ACCOUNT_AGE": "9000h"},
	} {
		_, err := loadConfig(env(bad))
		for name := range bad {
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%v: %v, want an error naming %s", bad, err, name)
			}
		}
	}
	// A bad origin stops the server before it listens.
	vars := map[string]string{"SOLITAIRE_ADDR": "127.0.0.1:0", "SOLITAIRE_SQLITE_PATH": filepath.Join(t.TempDir(), "s.db"),
		"SOLITAIRE_CORS_ORIGINS": "cards.example"}
	if err := run(context.Background(), nil, env(vars), io.Discard, nil); err == nil || !strings.Contains(err.Error(), "CORS") {
		t.Errorf("a bad CORS origin: %v", err)
	}
}

// TestLoadStreamAndDatabaseSettings: the streams' bounds (the server's
// from the open-file limit), the exec mode and the direct URLs of a
// pooled database.
func TestLoadStreamAndDatabaseSettings(t *testing.T) {
	for nofile, want := range map[uint64]int{0: 4096, 1024: 512, 100_000: 4096, 1: 1} {
		if got := streamBound(nofile); got != want {
			t.Errorf("streamBound(%d) = %d, want %d", nofile, got, want)
		}
	}
	c, err := loadConfig(env(map[string]string{"DATABASE_URL": "postgres://pool/db", "SOLITAIRE_DB_EXEC_MODE": "cache_describe",
		"SOLITAIRE_MIGRATE_DATABASE_URL": "postgres://db/db", "SOLITAIRE_LISTEN_DATABASE_URL": "postgres://db/db2",
		"SOLITAIRE_READ_DATABASE_URL": "postgres://standby/db", "SOLITAIRE_MAX_STREAMS_PER_ADDRESS": "5", "SOLITAIRE_MAX_STREAMS": "7"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.store.ExecMode != "cache_describe" || c.store.MigrateURL != "postgres://db/db" || c.store.ListenURL != "postgres://db/db2" ||
		c.store.ReadURL != "postgres://standby/db" || c.maxStreamsPerAddress != 5 || c.maxStreamsAll != 7 {
		t.Errorf("from env: %+v", c)
	}
	if c, _ := loadConfig(env(nil)); c.maxStreamsPerAddress != 64 || c.maxStreamsAll != streamBound(openFileLimit()) {
		t.Errorf("defaults: per address %d, server %d", c.maxStreamsPerAddress, c.maxStreamsAll)
	}
	bad := []map[string]string{
		{"SOLITAIRE_DB_EXEC_MODE": "fast"}, {"SOLITAIRE_LISTEN_DATABASE_URL": "postgres://db/db"},
		{"SOLITAIRE_MIGRATE_DATABASE_URL": "postgres://db/db"}, {"SOLITAIRE_READ_DATABASE_URL": "postgres://db/db"},
		{"SOLITAIRE_MAX_STREAMS": "0"},
		{"SOLITAIRE_MAX_STREAMS_PER_ADDRESS": "x"},
	}
	if nofile := openFileLimit(); nofile != 0 && nofile/2 < 1_000_000 {
		// A set bound above half the open-file limit is refused too.
		bad = append(bad, map[string]string{"SOLITAIRE_MAX_STREAMS": strconv.FormatUint(nofile/2+1, 10)})
	}
	for _, bad := range bad {
		if _, err := loadConfig(env(bad)); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
