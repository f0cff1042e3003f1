package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/solver"
)

// decodeSolve parses solve's output.
func decodeSolve(t *testing.T, out string) solveOutput {
	t.Helper()
	var o solveOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return o
}

// wins plays line from s through domain.Decide and reports whether it won.
func wins(t *testing.T, s *domain.State, line []domain.Move) bool {
	t.Helper()
	st := s.Clone()
	for i, m := range line {
		evs, _, err := domain.Decide(st, m, st.LastAt)
		if err != nil {
			t.Fatalf("move %d %v: %v", i, m, err)
		}
		for _, e := range evs {
			st.Apply(e)
		}
	}
	return st.Status == domain.StatusWon
}

func rulesOf(t *testing.T, variant string, o domain.Options) domain.Rules {
	t.Helper()
	v, _ := domain.LookupVariant(variant)
	r, _, err := v.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// R7.1: solve -seed prints a verdict and a line that wins the seeded deal
// under the chosen rules.
func TestR71SolveSeed(t *testing.T) {
	t.Parallel()
	code, out, errs := runTool("solve", "-seed", "1", "-variant", "relaxed", "-draw", "3", "-difficulty",
		"-nodes", "1000000", "-budget", "10m") // nodes decide, not the machine's load
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	o := decodeSolve(t, out)
	if o.Verdict != solver.Winnable || o.Variant != "relaxed" || o.Difficulty == "" {
		t.Fatalf("seed 1 relaxed draw 3: %+v", o)
	}
	r := rulesOf(t, "relaxed", domain.Options{Draw: ptr(3)})
	s, err := dealt(r, domain.Deal(r, 1))
	if err != nil {
		t.Fatal(err)
	}
	if !wins(t, s, o.Line) {
		t.Fatal("the printed line does not win")
	}
}

// R7.1, R6.5: solve -layout takes the body of POST /v1/games with a layout,
// or a bare layout with -variant; a deadlocked layout is unwinnable.
func TestR71SolveLayout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := rulesOf(t, "klondike", domain.Options{})
	deal := domain.Deal(r, 5)
	body, _ := json.Marshal(map[string]any{"variant": "relaxed", "options": map[string]int{"draw": 1},
		"layout": map[string]any{"tableau": deal.Tableau, "stock": deal.Stock}})
	file := filepath.Join(dir, "req.json")
	if err := os.WriteFile(file, body, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runTool("solve", "-layout", file)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	o := decodeSolve(t, out)
	s, _ := dealt(rulesOf(t, "relaxed", domain.Options{Draw: ptr(1)}), deal)
	if o.Variant != "relaxed" || (o.Verdict == solver.Winnable) != (len(o.Line) > 0) {
		t.Fatalf("%+v", o)
	}
	if o.Verdict == solver.Winnable && !wins(t, s, o.Line) {
		t.Fatal("the printed line does not win")
	}

	// A deadlock: 2S needs AS, which lies under 2H, which needs AH, which
	// lies under 2S; clubs and diamonds are home and nothing else moves.
	pos, err := domain.ParsePosition("AHKH3H4H5H6H7H8H9HTHJHQH:2S/ASKS3S4S5S6S7S8S9STSJSQS:2H/:/:/:/:/: - - " +
		"AC2C3C4C5C6C7C8C9CTCJCQCKC/AD2D3D4D5D6D7D8D9DTDJDQDKD 0")
	if err != nil {
		t.Fatal(err)
	}
	bare, _ := json.Marshal(pos)
	if err := os.WriteFile(file, bare, 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runTool("solve", "-layout", file, "-variant", "klondike")
	if o := decodeSolve(t, out); code != 0 || o.Verdict != solver.Unwinnable || len(o.Line) != 0 {
		t.Fatalf("deadlock: exit %d %+v %s", code, o, errs)
	}
}

// R7.1: solve -log -at V solves the position after event V of an exported
// log, as Solve does on the replayed state.
func TestR71SolveLog(t *testing.T) {
	t.Parallel()
	data, _ := playLog(t, "klondike", 3, domain.Options{})
	file := filepath.Join(t.TempDir(), "k.ndjson")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, at := range []string{"1", "6"} {
		code, out, errs := runTool("solve", "-log", file, "-at", at, "-nodes", "20000", "-budget", "10m")
		if code != 0 {
			t.Fatalf("-at %s: exit %d %s", at, code, errs)
		}
		o := decodeSolve(t, out)
		s, err := logState(file, int(at[0]-'0'), nil)
		if err != nil {
			t.Fatal(err)
		}
		want := solver.Solve(context.Background(), s, solver.Budget{Nodes: 20000, Time: 10 * time.Minute})
		if o.Verdict != want.Verdict || o.Nodes != want.Nodes || (o.Verdict == solver.Winnable && !wins(t, s, o.Line)) {
			t.Fatalf("-at %s: %+v, Solve says %s after %d nodes", at, o, want.Verdict, want.Nodes)
		}
	}
	// The final position of a resigned game accepts no move (R2.7).
	code, out, _ := runTool("solve", "-log", file)
	if o := decodeSolve(t, out); code != 0 || o.Verdict != solver.Unwinnable {
		t.Fatalf("resigned game: exit %d %+v", code, o)
	}
}

// Bad input is refused with exit status 2 and a message, never a verdict.
func TestSolveRefusesBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"variant":"klondike","layout":{"tableau":[{"face_down":[],"face_up":["ZZ"]}],"stock":[]}}`), 0o600)
	for _, args := range [][]string{
		{"solve"},
		{"solve", "-seed", "1", "-layout", bad},
		{"solve", "-seed", "-3"},
		{"solve", "-seed", "1", "-variant", "nope"},
		{"solve", "-seed", "1", "-variant", "klondike", "-draw", "3"},
		{"solve", "-layout", bad},
		{"solve", "-layout", filepath.Join(dir, "missing.json")},
		{"solve", "-log", bad},
		{"solve-bench", "-n", "0"},
		{"solve-bench", "-variant", "harp", "-ks", filepath.Join(dir, "ks.txt")},
	} {
		code, out, errs := runTool(args...)
		if code != 2 || out != "" || errs == "" {
			t.Errorf("%v: exit %d, out %q, err %q", args, code, out, errs)
		}
	}
}

// solve-bench prints the figures of BENCHMARKS.md for a few deals, and -ks
// writes deals in Klondike-Solver's format (52 three-digit cards a line).
func TestSolveBench(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "deals.ndjson")
	code, sum, errs := runTool("solve-bench", "-variant", "klondike", "-n", "3", "-budget", "2s", "-out", out)
	if code != 0 || !strings.Contains(sum, "decided") || !strings.Contains(sum, "cpu ms") {
		t.Fatalf("exit %d\n%s%s", code, sum, errs)
	}
	lines, _ := os.ReadFile(out)
	if n := strings.Count(string(lines), "\n"); n != 3 {
		t.Fatalf("%d deal lines, want 3", n)
	}
	code, again, errs := runTool("solve-bench", "-variant", "klondike", "-summarize", out)
	if code != 0 || !strings.Contains(again, "decided") || !strings.Contains(again, "as given by the flags") || strings.Contains(again, "load") {
		t.Fatalf("-summarize: exit %d\n%s%s", code, again, errs)
	}
	// -redo solves the unknowns of a run again; -summarize a,b merges.
	tiny := filepath.Join(dir, "tiny.ndjson")
	if code, _, errs := runTool("solve-bench", "-variant", "relaxed", "-n", "4", "-nodes", "3", "-out", tiny); code != 0 {
		t.Fatalf("tiny run: exit %d %s", code, errs)
	}
	redo := filepath.Join(dir, "redo.ndjson")
	if code, _, errs := runTool("solve-bench", "-variant", "relaxed", "-redo", tiny, "-nodes", "300000", "-out", redo); code != 0 {
		t.Fatalf("-redo: exit %d %s", code, errs)
	}
	first, _ := os.ReadFile(tiny)
	second, _ := os.ReadFile(redo)
	if u, n := strings.Count(string(first), `"unknown"`), strings.Count(string(second), "\n"); u == 0 || n != u {
		t.Fatalf("%d unknowns in the first run, %d deals solved again", u, n)
	}
	code, merged, errs := runTool("solve-bench", "-variant", "relaxed", "-summarize", tiny+","+redo)
	if code != 0 || !strings.Contains(merged, ": 4 deals") || strings.Contains(merged, "unknown 4") {
		t.Fatalf("-summarize merged: exit %d\n%s%s", code, merged, errs)
	}
	ks := filepath.Join(dir, "ks.txt")
	if code, _, errs := runTool("solve-bench", "-variant", "klondike", "-n", "2", "-ks", ks); code != 0 {
		t.Fatalf("-ks: exit %d %s", code, errs)
	}
	data, _ := os.ReadFile(ks)
	rows := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(rows) != 2 || len(rows[0]) != 156 || !strings.HasPrefix(rows[0], "") {
		t.Fatalf("ks file %q", data)
	}
	// Seed 1's first card is the pack's first card.
	c := domain.ShuffledPack(1, 1)[0]
	if want := rows[0][:3]; want[:2] != twoDigits(c.Rank()) {
		t.Fatalf("first card %s written as %s", c, want)
	}
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10), byte('0' + n%10)}) }
