package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"

	"github.com/openpatience/solitaire/domain/supply"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

func init() { gin.SetMode(gin.ReleaseMode) }

// server is a real API server on a real database, for the export tests.
type server struct {
	t     *testing.T
	url   string
	store *persistence.Store
	token string
	log   *persistence.Log // the transparency log, sequenced by the test (verify_test.go)
	skey  string           // its signer key
	shift *atomic.Int64    // the server clock runs this many nanoseconds ahead of the real one

	supply *supply.Supply // the games' Dealer of proven winnable deals (R7.2)
}

func newServer(t *testing.T, backend string) *server {
	t.Helper()
	cfg := persistence.Config{SnapshotEvery: 10}
	if backend == "postgres" {
		cfg.DatabaseURL = pgtest.DSN(t)
	} else {
		cfg.SQLitePath = filepath.Join(t.TempDir(), "solitaire.db")
	}
	store, err := persistence.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	skey, l := openLog(t, store)
	shift := new(atomic.Int64)
	games := app.NewGames(store)
	games.Now = func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }
	dealer := supply.New(supply.Config{Wait: 2 * time.Minute})
	t.Cleanup(dealer.Close)
	games.Dealer = dealer
	h, err := api.New(api.Config{Games: games, Players: store, Idempotency: store,
		Spec: solitaire.OpenAPIYAML, Feed: store, Log: l, Competitions: app.NewCompetitions(games, store), Stats: store})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := &server{t: t, url: srv.URL, store: store, log: l, skey: skey, shift: shift, supply: dealer}
	var p api.PlayerCreated
	s.call("POST", "/v1/players", api.NewPlayer{Name: "Ada"}, http.StatusCreated, &p)
	s.token = p.Token
	return s
}

// call sends a JSON request and decodes the answer into out (if not nil);
// it returns the status, failing the test if it is not want (0: any).
func (s *server) call(method, path string, body any, want int, out any) int {
	s.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if want != 0 && resp.StatusCode != want {
		s.t.Fatalf("%s %s: %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// play plays a game over HTTP by random legal moves, preferring
// autocomplete, take-backs, undos and foundation moves now and then, so
// that its log holds every kind of event; it resigns a game still running
// after maxMoves. It returns the event types seen, counted (with "take-back"
// and "autocomplete" for those moves).
func (s *server) play(id string, maxMoves int, rng *rand.Rand) map[string]int {
	s.t.Helper()
	seen := map[string]int{}
	for i := 0; i < maxMoves; i++ {
		var l api.LegalMoves
		s.call("GET", "/v1/games/"+id+"/legal-moves", nil, http.StatusOK, &l)
		if len(l.Moves) == 0 {
			return seen
		}
		m := l.Moves[rng.IntN(len(l.Moves))]
		for _, x := range l.Moves {
			switch {
			case x.Type == "autocomplete", x.Type == "take-back" && rng.IntN(3) == 0,
				x.Type == "move" && x.To != nil && strings.HasPrefix(*x.To, "foundation") && rng.IntN(2) == 0:
				m = x
			}
		}
		if m.Type == "resign" {
			m = l.Moves[0]
		}
		if i > 0 && i%9 == 0 {
			m = api.MoveRequest{Type: "undo"}
		}
		var res api.MoveResult
		if s.call("POST", "/v1/games/"+id+"/moves", m, 0, &res) != http.StatusOK {
			continue // undo where the variant has none, or nothing to undo
		}
		if m.Type == "take-back" || m.Type == "autocomplete" {
			seen[m.Type]++
		}
		for _, e := range res.Events {
			seen[e.Type]++
		}
		if res.Game.Status != "in_progress" {
			return seen
		}
	}
	var res api.MoveResult
	s.call("POST", "/v1/games/"+id+"/moves", api.MoveRequest{Type: "resign"}, http.StatusOK, &res)
	seen["game_resigned"]++
	return seen
}

// export runs `solitaire export` against the server.
func (s *server) export(id string) []byte {
	s.t.Helper()
	var out, errb bytes.Buffer
	if code := run([]string{"export", s.url, id, "-token", s.token}, strings.NewReader(""), &out, &errb); code != 0 {
		s.t.Fatalf("export %s: exit %d: %s", id, code, errb.String())
	}
	return out.Bytes()
}

// auditFile runs `solitaire audit FILE -json [-salt SALT]` on data.
func auditFile(t *testing.T, data []byte, salt string) (int, map[string]any) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "game.ndjson")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"audit", file, "-json"}
	if salt != "" {
		args = append(args, "-salt", salt)
	}
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	var report map[string]any
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("audit -json: %v\n%s%s", err, out.String(), errb.String())
	}
	return code, report
}

// TestExportAuditOffline: a game of every variant, played over HTTP with
// undos, take-backs and autocomplete, exported from a real server with
// `solitaire export` once it has ended, passes `solitaire audit` with the
// salt the server's audit reveals (exit 0, commitment ok); each line of
// the export is exactly json.Marshal(domain.Export(recorded event)); and
// a tampered export fails.
func TestExportAuditOffline(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s := newServer(t, backend)
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
			total := map[string]int{}
			var ids []string
			variants := []string{"klondike", "relaxed", "harp"} // PostgreSQL: the same code, fewer games
			if backend == "sqlite" {
				variants = variants[:0]
				for _, v := range domain.Variants() {
					variants = append(variants, v.ID)
				}
			}
			for _, v := range variants {
				var g api.Game
				s.call("POST", "/v1/games", map[string]any{"variant": v, "options": map[string]any{"undo": true}},
					http.StatusCreated, &g)
				for k, n := range s.play(g.ID, 50, rng) {
					total[k] += n
				}
				ids = append(ids, g.ID)
			}
			// A take-back and autocomplete for sure, from a layout: AS, AH
			// and 2S to the foundations, 2S back onto 3H, then the rest.
			var g api.Game
			s.call("POST", "/v1/games", map[string]any{"variant": "klondike", "layout": almostWon(),
				"options": map[string]any{"take_back": true}}, http.StatusCreated, &g)
			for _, from := range []string{"tableau/0", "tableau/1", "tableau/1"} {
				s.call("POST", "/v1/games/"+g.ID+"/moves", map[string]any{"type": "move", "from": from, "to": "foundation"},
					http.StatusOK, nil)
			}
			var now api.Game
			s.call("GET", "/v1/games/"+g.ID, nil, http.StatusOK, &now)
			for i, f := range now.Foundations {
				if n := len(f.Cards); n > 0 && f.Cards[n-1].Code == "2S" {
					s.call("POST", "/v1/games/"+g.ID+"/moves", map[string]any{"type": "take-back",
						"from": fmt.Sprintf("foundation/%d", i), "to": "tableau/1"}, http.StatusOK, nil)
					total["take-back"]++
				}
			}
			var res api.MoveResult
			s.call("POST", "/v1/games/"+g.ID+"/moves", map[string]any{"type": "autocomplete"}, http.StatusOK, &res)
			if res.Game.Status != "won" {
				t.Fatalf("autocomplete: %s", res.Game.Status)
			}
			total["autocomplete"]++
			ids = append(ids, now.ID)
			for _, kind := range []string{"move_undone", "take-back", "autocomplete"} {
				if total[kind] == 0 {
					t.Errorf("no %s in any game: %v", kind, total)
				}
			}

			for _, id := range ids {
				data := s.export(id)
				var a api.Audit
				s.call("GET", "/v1/games/"+id+"/audit", nil, http.StatusOK, &a)
				if a.Salt == nil || a.CommitmentOK == nil || !*a.CommitmentOK || !a.ChainOK || !a.ReplayOK {
					t.Fatalf("server audit of %s: %+v", id, a)
				}
				code, report := auditFile(t, data, *a.Salt)
				if code != 0 || report["commitment_ok"] != true || report["head_hash"] != a.HeadHash ||
					report["events"] != float64(a.Events) {
					t.Fatalf("offline audit of %s: exit %d %v\n%s", id, code, report, data)
				}
				// Byte for byte the wire form of the stored events.
				recs, err := s.store.Events(context.Background(), id, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				var want bytes.Buffer
				for _, r := range recs {
					line, _ := json.Marshal(domain.Export(r))
					want.Write(line)
					want.WriteByte('\n')
				}
				if !bytes.Equal(data, want.Bytes()) {
					t.Fatalf("export of %s is not json.Marshal(domain.Export(event)) per line:\n%s\nwant\n%s", id, data, want.Bytes())
				}
				// A changed byte of the file fails.
				bad := append([]byte(nil), data...)
				for {
					i := rng.IntN(len(bad))
					if bad[i] == '\n' {
						continue
					}
					bad[i] ^= byte(1 + rng.IntN(127))
					if bad[i] == '\n' {
						bad[i] = 'x'
					}
					break
				}
				if code, report := auditFile(t, bad, *a.Salt); code != 1 {
					t.Errorf("a tampered export of %s passed: %v", id, report)
				}
			}
		})
	}
}

// almostWon is a klondike layout all but won: four face-up runs from king
// to ace (the aces on top), an empty stock.
func almostWon() map[string]any {
	pile := func(s string) map[string]any {
		up := []string{}
		for i := 0; i < len(s); i += 2 {
			up = append(up, s[i:i+2])
		}
		return map[string]any{"face_down": []string{}, "face_up": up}
	}
	empty := map[string]any{"face_down": []string{}, "face_up": []string{}}
	return map[string]any{"tableau": []any{
		pile("KSQHJSTH9S8H7S6H5S4H3S2HAS"),
		pile("KHQSJHTS9H8S7H6S5H4S3H2SAH"),
		pile("KCQDJCTD9C8D7C6D5C4D3C2DAC"),
		pile("KDQCJDTC9D8C7D6C5D4C3D2CAD"),
		empty, empty, empty,
	}, "stock": []string{}}
}

// tamperStored changes one stored byte of event version of game id, in a
// column picked by rng (payload, type, version, occurred_at, hash,
// prev_hash), and returns what it changed and how to put it back.
// maxVersion is the game's last version: a changed version stays above it.
func tamperStored(t *testing.T, s *persistence.Store, id string, version, maxVersion int, rng *rand.Rand) (string, func()) {
	t.Helper()
	db := s.DB()
	var (
		position        int64
		payload, prev   []byte
		hash            []byte
		typ             string
		occurredAt      int64
		exec            func(q string, args ...any)
		flipByte        func(b []byte) []byte
		letters         = "abcdefghijklmnopqrstuvwxyz_"
		restoreColumn   string
		what            string // what changed, for the messages; restoreColumn if empty
		restoreOriginal any
	)
	if err := db.QueryRow(s.Rebind(`SELECT position, payload, type, occurred_at, prev_hash, hash FROM events
		WHERE game_id = ? AND version = ?`), id, version).Scan(&position, &payload, &typ, &occurredAt, &prev, &hash); err != nil {
		t.Fatal(err)
	}
	exec = func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(s.Rebind(q), args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	flipByte = func(b []byte) []byte {
		out := append([]byte(nil), b...)
		out[rng.IntN(len(out))] ^= byte(1 + rng.IntN(255))
		return out
	}
	var changed any
	switch rng.IntN(7) {
	case 0:
		restoreColumn, restoreOriginal, changed = "payload", payload, flipByte(payload)
	case 5:
		// The same JSON value, one more space: the export must carry the
		// stored bytes, not a compacted copy that would verify.
		i := bytes.IndexByte(payload, ':') + 1
		spaced := append(append(append([]byte(nil), payload[:i]...), ' '), payload[i:]...)
		restoreColumn, restoreOriginal, changed = "payload", payload, spaced
		what = "payload (a space)"
	case 1:
		b := []byte(typ)
		i := rng.IntN(len(b))
		for c := b[i]; c == b[i]; {
			b[i] = letters[rng.IntN(len(letters))]
		}
		restoreColumn, restoreOriginal, changed = "type", typ, string(b)
	case 2:
		nv := version ^ 1<<(8+rng.IntN(14))
		for nv <= maxVersion {
			nv = version ^ 1<<(8+rng.IntN(14))
		}
		restoreColumn, restoreOriginal, changed = "version", version, nv
	case 3:
		restoreColumn, restoreOriginal, changed = "occurred_at", occurredAt, occurredAt^1<<rng.IntN(40)
	case 4:
		restoreColumn, restoreOriginal, changed = "hash", hash, flipByte(hash)
	default:
		restoreColumn, restoreOriginal, changed = "prev_hash", prev, flipByte(prev)
	}
	q := `UPDATE events SET ` + restoreColumn + ` = ? WHERE position = ?`
	exec(q, changed, position)
	if what == "" {
		what = restoreColumn
	}
	return what, func() { exec(q, restoreOriginal, position) }
}

// TestTamperedLogDetected: a single byte changed in a stored event (its
// payload, type, version, time, hash or previous hash), at random events
// of finished games, is found at exactly that version both by the
// server's audit and by `solitaire audit` on the export, every time.
func TestTamperedLogDetected(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			s := newServer(t, backend)
			rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
			var ids []string
			for _, variant := range []string{"klondike", "relaxed", "harp"} {
				var g api.Game
				s.call("POST", "/v1/games", map[string]any{"variant": variant, "options": map[string]any{"undo": true}},
					http.StatusCreated, &g)
				s.play(g.ID, 30, rng)
				ids = append(ids, g.ID)
			}
			rounds := 50
			if backend == "postgres" {
				rounds = 30
			}
			kinds := map[string]int{}
			for i := 0; i < rounds; i++ {
				id := ids[i%len(ids)]
				var before api.Audit
				s.call("GET", "/v1/games/"+id+"/audit", nil, http.StatusOK, &before)
				n := before.Events
				v := 1 + rng.IntN(n)
				what, restore := tamperStored(t, s.store, id, v, n, rng)
				kinds[what]++
				var a api.Audit
				s.call("GET", "/v1/games/"+id+"/audit", nil, http.StatusOK, &a)
				if a.ChainOK || a.FirstBrokenVersion == nil || *a.FirstBrokenVersion != v {
					t.Errorf("%s of event %d/%d changed: server audit %+v", what, v, n, a)
				}
				code, report := auditFile(t, s.export(id), "")
				if code != 1 || report["chain_broken_at"] != float64(v) || report["first_broken"] != float64(v) {
					t.Errorf("%s of event %d/%d changed: offline audit exit %d %v", what, v, n, code, report)
				}
				restore()
			}
			t.Logf("changed: %v", kinds)
			for _, id := range ids {
				salt := ""
				var a api.Audit
				s.call("GET", "/v1/games/"+id+"/audit", nil, http.StatusOK, &a)
				if a.Salt != nil {
					salt = *a.Salt
				}
				if code, report := auditFile(t, s.export(id), salt); code != 0 || !a.ChainOK {
					t.Errorf("after restoring: offline exit %d %v, server %+v", code, report, a)
				}
			}
		})
	}
}

// R6.6: `solitaire export` of a daily game that a second account resigned
// at once is redacted while the day runs (the deal lists no face-down or
// stock card, no card shows that its owner did not see face up); the
// offline audit of it checks every link from the deal's hash on and exits
// 3 (the deal is hidden), catches a changed event, and replay exits 3.
// After the day it is the whole log, and the offline audit checks its
// commitment with the salt the server then reveals, or with the salt the
// deal event carries (R6.8).
func TestR6_6_ExportSealed(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, backend)
			var main, alt api.Game
			s.call("POST", "/v1/daily/klondike/games", nil, http.StatusCreated, &main)
			var p api.PlayerCreated
			s.call("POST", "/v1/players", api.NewPlayer{Name: "Alt"}, http.StatusCreated, &p)
			s.token = p.Token
			s.call("POST", "/v1/daily/klondike/games", nil, http.StatusCreated, &alt)
			s.call("POST", "/v1/games/"+alt.ID+"/moves", api.MoveRequest{Type: "resign"}, http.StatusOK, nil)
			seen := map[string]bool{}
			for _, pile := range alt.Tableau {
				for _, c := range pile.Cards {
					seen[c.Code] = true
				}
			}
			sealed := s.export(alt.ID)
			var first struct {
				Data struct {
					Deal struct {
						Tableau []struct {
							FaceDown []string `json:"face_down"`
						} `json:"tableau"`
						Stock []string `json:"stock"`
					} `json:"deal"`
					Hidden *struct{ Stock int } `json:"hidden"`
				} `json:"data"`
			}
			line, _, _ := bytes.Cut(sealed, []byte("\n"))
			if err := json.Unmarshal(line, &first); err != nil {
				t.Fatal(err)
			}
			if d := first.Data; len(d.Deal.Stock) != 0 || d.Hidden == nil || d.Hidden.Stock != 24 || len(d.Deal.Tableau) != 7 ||
				len(d.Deal.Tableau[6].FaceDown) != 0 {
				t.Errorf("sealed export's deal: %s", line)
			}
			for _, c := range cardCodes(sealed) {
				if !seen[c] {
					t.Errorf("the sealed export shows %s, never seen face up", c)
				}
			}
			// Offline, the sealed export checks what it can (every link from
			// the deal's hash on) and says the deal is hidden: exit 3.
			if code, report := auditFile(t, sealed, ""); code != exitDealHidden || report["deal_hidden"] != true ||
				report["chain_ok"] != true || report["first_broken"] != 0.0 {
				t.Errorf("offline audit of the sealed export: exit %d %v", code, report)
			}
			forged := bytes.Replace(sealed, []byte(`"game_resigned","occurred_at":"`), []byte(`"game_won","occurred_at":"`), 1)
			if code, report := auditFile(t, forged, ""); code != 1 || report["chain_broken_at"] != 2.0 {
				t.Errorf("offline audit of a sealed export with a changed event: exit %d %v", code, report)
			}
			file := filepath.Join(t.TempDir(), "sealed.ndjson")
			if err := os.WriteFile(file, sealed, 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			if code := run([]string{"replay", file}, strings.NewReader(""), &out, &errb); code != exitDealHidden ||
				!strings.Contains(errb.String(), "hidden until the game ends") {
				t.Errorf("replay of the sealed export: exit %d, %s", code, errb.String())
			}
			var a api.Audit
			s.call("GET", "/v1/games/"+alt.ID+"/audit", nil, http.StatusOK, &a)
			if !a.Sealed || a.Salt != nil {
				t.Fatalf("audit during the day: %+v", a)
			}

			s.shift.Store(int64(25 * time.Hour)) // the day is over
			s.call("GET", "/v1/games/"+alt.ID+"/audit", nil, http.StatusOK, &a)
			if a.Sealed || a.Salt == nil || a.CommitmentOK == nil || !*a.CommitmentOK {
				t.Fatalf("audit after the day: %+v", a)
			}
			whole := s.export(alt.ID)
			if n := len(cardCodes(whole)); n != 52 {
				t.Errorf("the export after the day shows %d cards, want 52", n)
			}
			if code, report := auditFile(t, whole, *a.Salt); code != 0 || report["commitment_ok"] != true {
				t.Errorf("offline audit after the day: exit %d %v", code, report)
			}
			// R6.8: the revealed deal carries its salt, so the export alone
			// checks the commitment.
			if code, report := auditFile(t, whole, ""); code != 0 || report["commitment_ok"] != true || report["deal_hidden"] != false {
				t.Errorf("offline audit after the day, no -salt: exit %d %v", code, report)
			}
		})
	}
}

// cardCodes lists the distinct card codes (RULES R1.1) quoted in data.
func cardCodes(data []byte) []string {
	set := map[string]bool{}
	for _, m := range regexp.MustCompile(`"([A2-9TJQK][CDHS])"`).FindAllSubmatch(data, -1) {
		set[string(m[1])] = true
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	return out
}
