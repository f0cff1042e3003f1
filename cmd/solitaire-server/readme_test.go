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
// It runs in a view of the repository's root (repositoryView), as a reader
// would run it in the root, without touching the reader's files there.
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
		"SOLITAIRE_RATE_LIMIT=5", "SOLITAIRE_RATE_BURST=5", "SOLITAIRE_WINNABLE_WORKERS=1")
	cmd := exec.Command("bash", "-e", "-c", string(m[1]))
	cmd.Dir = repositoryView(t)
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

// repositoryView is a new temporary directory holding a symbolic link to
// each directory of the repository's root and a copy of each of its files
// that the Go command reads there (.go, go.mod, go.sum, .yaml: copies, not
// links, since go:embed refuses a linked file and the root package embeds
// the spec): commands run in it build and run the repository as they
// would in its root, and the files they write (game.ndjson, proof.json, …)
// stay in the temporary directory, never overwriting or removing a
// reader's files of the same names in the root.
func repositoryView(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	view := t.TempDir()
	for _, e := range entries {
		from, to := filepath.Join(root, e.Name()), filepath.Join(view, e.Name())
		switch ext := filepath.Ext(e.Name()); {
		case e.IsDir():
			err = os.Symlink(from, to)
		case ext == ".go", ext == ".mod", ext == ".sum", ext == ".yaml":
			var b []byte
			if b, err = os.ReadFile(from); err == nil {
				err = os.WriteFile(to, b, 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return view
}
