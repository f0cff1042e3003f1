package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
)

// TestR7_2_AuditSolutionOffline: a winnable game (R7.2), resigned and
// exported, passes `solitaire audit FILE -solution AUDIT.json` with the
// audit the server gives (its line and salt): the line wins the deal in
// the export and matches the solution commitment. A line one move short, a
// reordered line, another salt or an export whose commitment was changed
// fails (exit 1).
func TestR7_2_AuditSolutionOffline(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s := newServer(t, backend)
			var g api.Game
			s.call("POST", "/v1/games", map[string]any{"variant": "relaxed", "winnable": true}, http.StatusCreated, &g)
			if !g.Winnable || g.SolutionCommitment == nil {
				t.Fatalf("not a winnable game: %+v", g)
			}
			s.call("POST", "/v1/games/"+g.ID+"/moves", api.MoveRequest{Type: "resign"}, http.StatusOK, nil)
			var raw json.RawMessage
			s.call("GET", "/v1/games/"+g.ID+"/audit", nil, http.StatusOK, &raw)
			var a api.Audit
			if err := json.Unmarshal(raw, &a); err != nil || a.SolutionOK == nil || !*a.SolutionOK {
				t.Fatalf("online audit: %v %s", err, raw)
			}
			export := s.export(g.ID)
			dir := t.TempDir()
			write := func(name string, b []byte) string {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, b, 0o600); err != nil {
					t.Fatal(err)
				}
				return p
			}
			logFile := write("game.ndjson", export)
			audit := func(logFile, solFile string, extra ...string) (int, string) {
				var out, errb bytes.Buffer
				code := run(append([]string{"audit", logFile, "-solution", solFile}, extra...), strings.NewReader(""), &out, &errb)
				return code, out.String() + errb.String()
			}
			if code, out := audit(logFile, write("audit.json", raw)); code != 0 || !strings.Contains(out, "solution:   ok") {
				t.Fatalf("the server's audit: exit %d\n%s", code, out)
			}
			// A bare line with -salt works too.
			line, _ := json.Marshal(a.Solution)
			if code, out := audit(logFile, write("line.json", line), "-salt", *a.Salt); code != 0 {
				t.Fatalf("a bare line: exit %d\n%s", code, out)
			}

			short, _ := json.Marshal(a.Solution[:len(a.Solution)-1])
			sw := append([]api.MoveRequest{}, a.Solution...)
			sw[0], sw[len(sw)-1] = sw[len(sw)-1], sw[0]
			swapped, _ := json.Marshal(sw)
			otherSalt := []byte(*a.Salt)
			if otherSalt[0] == '0' {
				otherSalt[0] = '1'
			} else {
				otherSalt[0] = '0'
			}
			tampered := bytes.Replace(export, []byte(*g.SolutionCommitment), []byte("sha256:"+strings.Repeat("0", 64)), 1)
			for what, c := range map[string][]string{
				"a line one move short": {logFile, write("short.json", short), "-salt", *a.Salt},
				"a reordered line":      {logFile, write("swapped.json", swapped), "-salt", *a.Salt},
				"another salt":          {logFile, write("line2.json", line), "-salt", string(otherSalt)},
				"another commitment":    {write("tampered.ndjson", tampered), write("audit2.json", raw)},
			} {
				if code, out := audit(c[0], c[1], c[2:]...); code != 1 || !strings.Contains(out, "solution:   FAILED") {
					t.Errorf("%s: exit %d\n%s", what, code, out)
				}
			}
			// The line the audit revealed is the one committed at creation.
			moves, err := domain.DecodeLine(string(line))
			if err != nil || len(moves) != len(a.Solution) {
				t.Fatalf("decode the line: %v", err)
			}
		})
	}
}
