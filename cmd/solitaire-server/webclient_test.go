package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openpatience/solitaire/docs/npmtest"
)

// webClientDir is the web client, from this package's directory.
var webClientDir = filepath.Join("..", "..", "clients", "web")

// chromiumPath is Debian's headless-capable Chromium, which the web
// client's script drives (playwright-core downloads no browser).
const chromiumPath = "/usr/bin/chromium"

// webVariants are the variants the script screenshots, one PNG each.
var webVariants = []string{"klondike", "klondike-draw3", "klassik", "relaxed", "tripleharp", "harp"}

// TestWebClient builds the web client (clients/web: a client generated
// from openapi.yaml, type-checked by tsc, bundled by esbuild), serves its
// dist/ from a static server on another origin, starts this server on
// SQLite allowing that origin (SOLITAIRE_CORS_ORIGINS), and runs
// e2e/play.mjs in headless Chromium: it wins a winnable relaxed game by
// clicking the hinted moves the page highlights, plays an undo and a redo
// and compares the drawn board with GET /v1/games/{id}, screenshots every
// variant after a few clicked moves, and plays the daily deal and a duel.
// The test then checks the screenshots and, through the API, the won
// game's log. SOLITAIRE_WEB_SCREENSHOTS names a directory to keep the
// screenshots in (default: the test's temporary directory).
func TestWebClient(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("%s: %v: install Debian's chromium package (apt-get install -y chromium); .ci/run does", chromiumPath, err)
	}
	npmtest.Install(t, webClientDir)
	npmtest.Run(t, webClientDir, "node_modules/.bin/openapi-typescript", "../../openapi.yaml", "-o", "src/schema.gen.ts")
	npmtest.Run(t, webClientDir, "node_modules/.bin/tsc", "-p", "tsconfig.json")
	npmtest.Run(t, webClientDir, "node", "build.mjs")

	web := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(webClientDir, "dist"))))
	t.Cleanup(web.Close)
	srv := startServerProcess(t, buildBinary(t), "SOLITAIRE_ADDR=127.0.0.1:0",
		"SOLITAIRE_SQLITE_PATH="+filepath.Join(t.TempDir(), "solitaire.db"),
		"SOLITAIRE_CORS_ORIGINS="+web.URL, "SOLITAIRE_WINNABLE_WORKERS=1")
	shots := os.Getenv("SOLITAIRE_WEB_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}

	start := time.Now()
	out := npmtest.Run(t, webClientDir, "node", "e2e/play.mjs", web.URL, srv.base, shots)
	var result struct {
		Won   string `json:"won"`
		Token string `json:"token"`
		Hints int    `json:"hints"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &result); err != nil || result.Won == "" {
		t.Fatalf("the script's answer %q: %v", out, err)
	}
	t.Logf("won %s with %d hints; the browser's part took %s", result.Won, result.Hints, time.Since(start).Round(time.Second))

	for _, name := range append(webVariants, "won", "duel") {
		path := filepath.Join(shots, name+".png")
		f, err := os.Open(path)
		if err != nil {
			t.Errorf("screenshot %s: %v", name, err)
			continue
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width < 1000 || cfg.Height < 600 {
			t.Errorf("screenshot %s: %dx%d, %v", path, cfg.Width, cfg.Height, err)
		}
	}

	// The won game, as the API tells it: won on a winnable deal, with the
	// hints, the undo and the redo the page played in its log.
	var g struct {
		Status   string `json:"status"`
		Variant  string `json:"variant"`
		Winnable bool   `json:"winnable"`
	}
	if code, err := jsonCall(http.DefaultClient, "GET", srv.base+"/v1/games/"+result.Won, result.Token, nil, nil, &g); err != nil || code != 200 {
		t.Fatalf("GET the won game: %d %v", code, err)
	}
	if g.Status != "won" || g.Variant != "relaxed" || !g.Winnable {
		t.Errorf("the won game: %+v", g)
	}
	seen := map[string]int{}
	for after := 0; ; {
		var page struct {
			Events []struct {
				Type string `json:"type"`
			} `json:"events"`
			NextAfter *int `json:"next_after"`
		}
		url := fmt.Sprintf("%s/v1/games/%s/events?after=%d&limit=500", srv.base, result.Won, after)
		if code, err := jsonCall(http.DefaultClient, "GET", url, result.Token, nil, nil, &page); err != nil || code != 200 {
			t.Fatalf("GET the won game's events: %d %v", code, err)
		}
		for _, e := range page.Events {
			seen[e.Type]++
		}
		if page.NextAfter == nil {
			break
		}
		after = *page.NextAfter
	}
	if seen["hint_given"] != result.Hints || seen["move_undone"] != 1 || seen["move_redone"] != 1 || seen["game_won"] != 1 {
		t.Errorf("the won game's log has %v; the page asked for %d hints", seen, result.Hints)
	}
}
