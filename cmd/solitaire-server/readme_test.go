package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEWalkthrough runs the README's "A game with curl" block as
// written, with bash, against this server started as a process on SQLite
// (S names its address; every other line is the README's): the game is
// won, the offline audit of its export and the verification of its leaf
// pass, and the walkthrough paces itself by the RateLimit field under a
// limit it would otherwise exceed (SOLITAIRE_RATE_LIMIT=5, bursts of 5).
// It runs in the repository's root, as a reader would, and removes the
// files the walkthrough writes (which git ignores).
func TestREADMEWalkthrough(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## A game with curl\n.*?```sh\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal(`README.md has no "A game with curl" section with a sh block`)
	}
	srv := startServerProcess(t, buildBinary(t), "SOLITAIRE_ADDR=127.0.0.1:0",
		"SOLITAIRE_SQLITE_PATH="+filepath.Join(t.TempDir(), "solitaire.db"), "SOLITAIRE_LOG_EVERY=200ms",
		"SOLITAIRE_RATE_LIMIT=5", "SOLITAIRE_RATE_BURST=5")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range []string{"game.ndjson", "proof.json", "log.key", "rate.txt"} {
			os.Remove(filepath.Join(root, f))
		}
	})
	cmd := exec.Command("bash", "-e", "-c", string(m[1]))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "S="+srv.base)
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil {
		t.Fatalf("the walkthrough failed: %v\n%s", err, text)
	}
	for _, want := range []string{`"status":"won"`, "chain:      ok", "commitment: ok", "leaf:       ok", "inclusion:  ok"} {
		if !strings.Contains(text, want) {
			t.Errorf("the walkthrough's output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, `"code":"rate_limited"`) {
		t.Errorf("the walkthrough met the rate limit: it must pace itself:\n%s", text)
	}
}
