package api_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
)

// Helpers of the robustness tests (spec fuzzing, outage, limits, leaks).

// figuresEnv names a file the robustness tests append their one-line
// summaries to (CI prints it after the run: `go test` shows the output of
// passing packages only with -v).
const figuresEnv = "SOLITAIRE_TEST_FIGURES"

var figuresMu sync.Mutex

// figures prints a test's one-line summary (requests sent, 5xx seen,
// events lost, ...) on standard output, in the test log, and appended to
// the file named by $SOLITAIRE_TEST_FIGURES if set.
func figures(t testing.TB, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf("reliability: %s: %s", t.Name(), fmt.Sprintf(format, args...))
	t.Log(line)
	figuresMu.Lock()
	defer figuresMu.Unlock()
	fmt.Println(line)
	if path := os.Getenv(figuresEnv); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Logf("figures file: %v", err)
			return
		}
		defer f.Close()
		fmt.Fprintln(f, line)
	}
}

// newEnvOn is newEnv on a store the test opened itself (through a proxy,
// say), with the api.Config changed by mod (nil: as newEnv).
func newEnvOn(t *testing.T, store *persistence.Store, mod func(*api.Config)) *env {
	clk := &clock{t: start}
	games := &app.Games{Store: store, Now: clk.Now, Random: rand.Reader, Retries: 3}
	cfg := api.Config{Games: games, Players: store, Idempotency: store,
		Ready: store.Ping, Spec: solitaire.OpenAPIYAML,
		Logger: slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelError}))}
	if mod != nil {
		mod(&cfg)
	}
	h, err := api.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := &validating{t: t, base: http.DefaultTransport}
	e := &env{t: t, store: store, games: games, clock: clk, srv: srv, tr: tr,
		client: &http.Client{Transport: &counting{base: tr}}}
	e.player, e.token = e.newPlayer("Ada")
	return e
}

// counting counts the answers of status 500..599 other than 503 (which
// the validating transport already reports as errors).
type counting struct {
	base   http.RoundTripper
	fiveXX atomic.Int64
}

func (c *counting) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := c.base.RoundTrip(r)
	if err == nil && res.StatusCode >= 500 && res.StatusCode != http.StatusServiceUnavailable {
		c.fiveXX.Add(1)
	}
	return res, err
}

// serverErrors is the count of 5xx answers other than 503 an env of
// newEnvOn has seen.
func serverErrors(e *env) int {
	if c, ok := e.client.Transport.(*counting); ok {
		return int(c.fiveXX.Load())
	}
	return 0
}

// rawReq is one request sent from any goroutine (env.do may only be called
// from the test's): it returns transport errors instead of failing.
type rawReq struct {
	method, path string
	body         []byte
	token        string // "-": none
	header       map[string]string
	invalid      bool          // breaks the spec on purpose
	timeout      time.Duration // 0: 10 s
}

// sendRaw does q through the validating transport.
func (e *env) sendRaw(q rawReq) (resp, error) {
	timeout := q.timeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if q.invalid {
		ctx = specInvalid(ctx)
	}
	hr, err := newRequest(ctx, q.method, e.srv.URL+q.path, q.body, q.token, q.header)
	if err != nil {
		return resp{}, err
	}
	res, err := e.client.Do(hr)
	if err != nil {
		return resp{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return resp{}, err
	}
	return resp{status: res.StatusCode, header: res.Header, body: b}, nil
}

// tableList lists the tables of the store's database that tableCounter
// counts: all but the ones a rejected request may write (kept idempotent
// replies) and the migration bookkeeping.
func tableList(t testing.TB, s *persistence.Store) []string {
	t.Helper()
	q := `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
	if s.Dialect() == persistence.DialectPostgres {
		q = `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`
	}
	rows, err := s.DB().QueryContext(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		if name != "idempotency_keys" && !strings.HasPrefix(name, "goose_") {
			tables = append(tables, name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return tables
}

// tableCounter counts the rows of tables, plus the sum of the games'
// versions: a request that changes none of them has appended, created and
// updated nothing. One prepared statement, so the figures are of one
// moment and cheap to take before and after every request.
type tableCounter struct {
	store  *persistence.Store
	tables []string
	stmt   *sql.Stmt
}

// newTableCounter prepares the count of the tables on the store's database.
func newTableCounter(t testing.TB, s *persistence.Store, tables []string) *tableCounter {
	t.Helper()
	cols := []string{"(SELECT COALESCE(SUM(version), 0) FROM games)"}
	for _, name := range tables {
		cols = append(cols, "(SELECT COUNT(*) FROM "+name+")")
	}
	stmt, err := s.DB().PrepareContext(context.Background(), "SELECT "+strings.Join(cols, ", "))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stmt.Close() })
	return &tableCounter{store: s, tables: tables, stmt: stmt}
}

// counts are the counts now, by table ("games.version" for the sum).
func (c *tableCounter) counts(t testing.TB) map[string]int64 {
	t.Helper()
	// Snapshots are written after their append commits (persistence
	// snapshots.go): the ones an earlier request queued are written
	// first, so they are not taken for the next request's doing.
	c.store.FlushSnapshots()
	vals := make([]int64, len(c.tables)+1)
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := c.stmt.QueryRowContext(context.Background()).Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{"games.version": vals[0]}
	for i, name := range c.tables {
		out[name] = vals[i+1]
	}
	return out
}

// tableCounts counts every table of tableList once (see tableCounter).
func tableCounts(t testing.TB, s *persistence.Store) map[string]int64 {
	t.Helper()
	return newTableCounter(t, s, tableList(t, s)).counts(t)
}

// sameCounts reports how two tableCounts differ ("" if not).
func sameCounts(a, b map[string]int64) string {
	var diffs []string
	for k, v := range a {
		if b[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s %d -> %d", k, v, b[k]))
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s new: %d", k, v))
		}
	}
	return strings.Join(diffs, ", ")
}
