package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// lockedBuffer is a bytes.Buffer safe for the server's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDebugLogsKeepSecrets: at the most verbose level (debug, which traces
// every SQL statement) the logs of a whole game on each database hold no
// seed, salt, token, token hash or hidden card: statements are logged
// without their bound values (RULES R6.4: these never leave the server
// early, and logs leave it).
func TestDebugLogsKeepSecrets(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			logs := &lockedBuffer{}
			log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			cfg := persistence.Config{SnapshotEvery: 2, Logger: log, StateCacheBytes: 1 << 20}
			if backend == "postgres" {
				cfg.DatabaseURL = pgtest.DSN(t)
			} else {
				cfg.SQLitePath = filepath.Join(t.TempDir(), "s.db")
			}
			store, err := persistence.Open(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			clk := &clock{t: start}
			games := &app.Games{Store: store, Now: clk.Now, Random: rand.Reader, Retries: 3}
			h, err := api.New(api.Config{Games: games, Players: store, Idempotency: store,
				Ready: store.Ping, Spec: solitaire.OpenAPIYAML, Logger: log,
				MaxGamesInProgress: 10, InProgress: store})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			tr := &validating{t: t, base: http.DefaultTransport}
			e := &env{t: t, store: store, games: games, clock: clk, srv: srv, tr: tr, client: &http.Client{Transport: tr}}
			e.player, e.token = e.newPlayer("Ada")

			// A ranked game from a secret seed: draw through the stock,
			// read it, its events and a past state, then resign.
			g := e.createGame(api.CreateGameRequest{Variant: "klondike"})
			secret, err := store.Game(context.Background(), g.ID)
			if err != nil {
				t.Fatal(err)
			}
			_, st, err := store.Load(context.Background(), g.ID)
			if err != nil {
				t.Fatal(err)
			}
			var hidden []string // every face-down card and the stock, in order
			for _, c := range st.Stock {
				hidden = append(hidden, c.String())
			}
			for _, p := range st.Tableau {
				for _, c := range p.Cards[:p.Down] {
					hidden = append(hidden, c.String())
				}
			}
			for range 5 {
				e.play(g.ID, draw())
			}
			e.getGame(g.ID)
			e.allEvents(g.ID, 2)
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/states/2"})
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/legal-moves"})

			out := logs.String()
			if !strings.Contains(out, "persistence: statement") || !strings.Contains(out, "INSERT INTO") {
				t.Fatalf("no SQL traced at debug level; the test proves nothing:\n%s", truncate([]byte(out)))
			}
			placeholder := map[string]string{"postgres": "$1", "sqlite": "?"}[backend]
			if !strings.Contains(out, "WHERE id = "+placeholder) {
				t.Errorf("no statement traced with its placeholder %s:\n%s", placeholder, truncate([]byte(out)))
			}
			hash := sha256.Sum256([]byte(e.token))
			secrets := map[string]string{
				"seed":             strconv.FormatUint(secret.Seed, 10),
				"salt (hex)":       hex.EncodeToString(secret.Salt),
				"salt (base64)":    base64.StdEncoding.EncodeToString(secret.Salt),
				"token":            e.token,
				"token hash (hex)": hex.EncodeToString(hash[:]),
				"token hash (b64)": base64.StdEncoding.EncodeToString(hash[:]),
			}
			// Any three hidden cards in their order, as JSON or as text.
			for i := 0; i+3 <= len(hidden); i++ {
				run := hidden[i : i+3]
				j, _ := json.Marshal(run)
				secrets["hidden cards "+strings.Join(run, ",")] = strings.Trim(string(j), "[]")
			}
			for what, s := range secrets {
				if s != "" && strings.Contains(out, s) {
					i := strings.Index(out, s)
					t.Errorf("the debug log shows the %s: …%s…", what, out[max(0, i-200):min(len(out), i+len(s)+50)])
				}
			}
		})
	}
}
