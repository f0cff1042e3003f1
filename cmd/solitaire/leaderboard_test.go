package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// TestLeaderboardVerifiedFacts: boards rank only what the transparency
// log can back (docs/transparency.md "Boards"). Ada wins a ranked game and
// Bob and Cat resign theirs, on a real server on both databases; once the
// log is sequenced `solitaire verify-leaderboard` checks the board against
// the log (exit 0). Then Bob's games row is edited after his game was
// logged (resigned -> won, fast, few moves), and Cat's before hers was:
// neither reaches the board; the sequencer flags Cat's game and logs the
// result its log gives (lost), the re-check flags Bob's; the players'
// statistics leave both out. A board that lies (an entry with a changed
// result, or Bob's forged win added) fails verify-leaderboard (exit 1).
func TestLeaderboardVerifiedFacts(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s := newServer(t, backend)
			ctx := context.Background()
			adaToken := s.token
			win := s.newWinnable()
			for _, m := range s.solutionOf(win) {
				s.call("POST", "/v1/games/"+win+"/moves", fromMove(m), http.StatusOK, nil)
			}
			resigned := func(name string) (string, string) {
				var p api.PlayerCreated
				s.call("POST", "/v1/players", api.NewPlayer{Name: name}, http.StatusCreated, &p)
				s.token = p.Token
				id := s.newWinnable()
				s.call("POST", "/v1/games/"+id+"/moves", api.MoveRequest{Type: "resign"}, http.StatusOK, nil)
				return id, p.ID
			}
			bob, _ := resigned("Bob")
			s.token = adaToken
			forge := func(id string) {
				t.Helper()
				if _, err := s.store.DB().Exec(s.store.Rebind(`UPDATE games SET status = 'won', moves = 2, elapsed_ms = 1
					WHERE id = ?`), id); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.log.Sequence(ctx); err != nil {
				t.Fatal(err)
			}
			vkey := s.log.VerifierKey()
			verifyBoard := func(extra ...string) (int, string) {
				var out, errb bytes.Buffer
				args := append([]string{"verify-leaderboard", s.url, "relaxed", "-key", vkey, "-token", s.token,
					"-query", "winnable=true"}, extra...)
				code := run(args, strings.NewReader(""), &out, &errb)
				return code, out.String() + errb.String()
			}
			if code, out := verifyBoard(); code != 0 || !strings.Contains(out, "1 entries") {
				t.Fatalf("verify-leaderboard of the honest board: exit %d\n%s", code, out)
			}

			forge(bob) // after its leaf
			cat, catID := resigned("Cat")
			forge(cat) // before its leaf: the sequencer logs what the log gives
			var board api.Leaderboard
			s.call("GET", "/v1/leaderboards/relaxed?winnable=true", nil, http.StatusOK, &board)
			if len(board.Entries) != 1 || board.Entries[0].GameID != win || board.Entries[0].Proof != "/v1/games/"+win+"/proof" {
				t.Fatalf("the board after the row edits: %+v", board.Entries)
			}
			if _, err := s.log.Sequence(ctx); err != nil {
				t.Fatal(err)
			}
			if n, err := s.log.Recheck(ctx); err != nil || n != 1 {
				t.Fatalf("Recheck = %d, %v; want Bob's game flagged", n, err)
			}
			for _, id := range []string{bob, cat} {
				var flagged *int64
				if err := s.store.DB().QueryRow(s.store.Rebind(`SELECT flagged_at FROM games WHERE id = ?`), id).Scan(&flagged); err != nil || flagged == nil {
					t.Errorf("game %s not flagged (%v)", id, err)
				}
			}
			var p logProof
			s.call("GET", "/v1/games/"+cat+"/proof", nil, http.StatusOK, &p)
			leaf, _ := base64.StdEncoding.DecodeString(p.Leaf)
			if l, err := app.ParseLeaf(leaf); err != nil || l.Status != domain.StatusLost || l.Owner != catID {
				t.Fatalf("Cat's leaf: %+v %v; want the log's result, lost", l, err)
			}
			s.call("GET", "/v1/leaderboards/relaxed?winnable=true", nil, http.StatusOK, &board)
			if len(board.Entries) != 1 || board.Entries[0].GameID != win {
				t.Fatalf("the board after sequencing: %+v", board.Entries)
			}
			var stats api.PlayerStats
			s.call("GET", "/v1/players/me/stats?winnable=true", nil, http.StatusOK, &stats)
			s.token = adaToken
			for _, st := range stats.Stats {
				if st.Played != 0 || st.Won != 0 {
					t.Errorf("Cat's statistics count her flagged game: %+v", st)
				}
			}
			if code, out := verifyBoard(); code != 0 {
				t.Fatalf("verify-leaderboard after the edits: exit %d\n%s", code, out)
			}

			// Boards that lie: a changed result; a forged win added.
			honest, err := json.Marshal(board)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			lie := func(name string, b []byte) (int, string) {
				f := filepath.Join(dir, name)
				if err := os.WriteFile(f, b, 0o600); err != nil {
					t.Fatal(err)
				}
				return verifyBoard("-board", f)
			}
			changed := board
			changed.Entries = append([]api.LeaderboardEntry{}, board.Entries...)
			changed.Entries[0].Moves--
			b, _ := json.Marshal(changed)
			if code, out := lie("changed.json", b); code != 1 || !strings.Contains(out, "FAILED") {
				t.Errorf("a board with a changed result: exit %d\n%s", code, out)
			}
			added := board
			added.Entries = append([]api.LeaderboardEntry{{Rank: 1, PlayerID: board.Entries[0].PlayerID, GameID: bob,
				Moves: 2, ElapsedMS: 1, FinishedAt: board.Entries[0].FinishedAt}}, board.Entries...)
			added.Entries[1].Rank = 2
			b, _ = json.Marshal(added)
			if code, out := lie("added.json", b); code != 1 || !strings.Contains(out, "game "+bob+": FAILED") {
				t.Errorf("a board with a forged win: exit %d\n%s", code, out)
			}
			if code, out := lie("honest.json", honest); code != 0 {
				t.Errorf("the honest board from a file: exit %d\n%s", code, out)
			}
		})
	}
}

// newWinnable creates a winnable relaxed game (RULES R7.2) as the server's
// current player and returns its id.
func (s *server) newWinnable() string {
	s.t.Helper()
	var g api.Game
	s.call("POST", "/v1/games", map[string]any{"variant": "relaxed", "winnable": true}, http.StatusCreated, &g)
	return g.ID
}

// solutionOf is the winning line the server committed to for game id,
// read from the store: the test plays it, as a player who found it would.
func (s *server) solutionOf(id string) []domain.Move {
	s.t.Helper()
	g, err := s.store.Game(context.Background(), id)
	if err != nil || len(g.Solution) == 0 {
		s.t.Fatalf("game %s: no solution (%v)", id, err)
	}
	return g.Solution
}

// fromMove is a domain move as a move request, through its canonical
// encoding (domain.EncodeLine writes move requests).
func fromMove(m domain.Move) api.MoveRequest {
	var r []api.MoveRequest
	if err := json.Unmarshal([]byte(domain.EncodeLine([]domain.Move{m})), &r); err != nil || len(r) != 1 {
		panic(err)
	}
	return r[0]
}
