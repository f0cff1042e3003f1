package main

import (
	"bytes"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
)

// openLog opens the store's transparency log with a new key and returns
// the signer key too (a test plays the operator who holds it).
func openLog(t *testing.T, store *persistence.Store) (string, *persistence.Log) {
	t.Helper()
	skey, _, err := note.GenerateKey(rand.Reader, "verify.example/log")
	if err != nil {
		t.Fatal(err)
	}
	l, err := store.OpenLog(t.Context(), persistence.LogConfig{Key: skey})
	if err != nil {
		t.Fatal(err)
	}
	return skey, l
}

// get fetches a path of the server as bytes.
func (s *server) get(path string) []byte {
	s.t.Helper()
	b, err := fetch(s.url, s.token, nil, strings.Split(strings.TrimPrefix(path, "/"), "/")...)
	if err != nil {
		s.t.Fatal(err)
	}
	return b
}

// sequence appends the waiting leaves, as the server's sequencer would.
func (s *server) sequence() {
	s.t.Helper()
	if _, err := s.log.Sequence(s.t.Context()); err != nil {
		s.t.Fatal(err)
	}
}

// endGame creates a game and ends it: won (a layout autocomplete
// finishes) or resigned after a few moves.
func (s *server) endGame(won bool) string {
	s.t.Helper()
	var g api.Game
	if won {
		s.call("POST", "/v1/games", map[string]any{"variant": "klondike", "layout": almostWon()}, http.StatusCreated, &g)
		s.call("POST", "/v1/games/"+g.ID+"/moves", api.MoveRequest{Type: "autocomplete"}, http.StatusOK, nil)
		return g.ID
	}
	s.call("POST", "/v1/games", map[string]any{"variant": "klondike"}, http.StatusCreated, &g)
	s.call("POST", "/v1/games/"+g.ID+"/moves", api.MoveRequest{Type: "draw"}, http.StatusOK, nil)
	s.call("POST", "/v1/games/"+g.ID+"/moves", api.MoveRequest{Type: "resign"}, http.StatusOK, nil)
	return g.ID
}

// files writes what verify reads: the export, the proof, the key and the
// checkpoint, and returns their paths and the salt.
type files struct{ game, proof, key, checkpoint, salt string }

func (s *server) files(id string) files {
	s.t.Helper()
	dir := s.t.TempDir()
	f := files{game: filepath.Join(dir, "game.ndjson"), proof: filepath.Join(dir, "proof.json"),
		key: filepath.Join(dir, "log.key"), checkpoint: filepath.Join(dir, "checkpoint")}
	for path, data := range map[string][]byte{f.game: s.export(id), f.proof: s.get("/v1/games/" + id + "/proof"),
		f.key: s.get("/v1/log/key"), f.checkpoint: s.get("/v1/log/checkpoint")} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			s.t.Fatal(err)
		}
	}
	var a api.Audit
	s.call("GET", "/v1/games/"+id+"/audit", nil, http.StatusOK, &a)
	if a.Salt != nil {
		f.salt = *a.Salt
	}
	return f
}

// verifyArgs runs `solitaire verify` and returns the exit status and output.
func verifyArgs(t *testing.T, args ...string) (int, string) {
	t.Helper()
	code, out, errs := runTool(append([]string{"verify"}, args...)...)
	return code, out + errs
}

// saveCheckpoint keeps the server's latest checkpoint in a file.
func (s *server) saveCheckpoint() string {
	s.t.Helper()
	f := filepath.Join(s.t.TempDir(), "checkpoint")
	if err := os.WriteFile(f, s.get("/v1/log/checkpoint"), 0o600); err != nil {
		s.t.Fatal(err)
	}
	return f
}

// exec runs a statement on the server's database.
func (s *server) exec(q string, args ...any) {
	s.t.Helper()
	if _, err := s.store.DB().Exec(s.store.Rebind(q), args...); err != nil {
		s.t.Fatalf("%s: %v", q, err)
	}
}

// verifyLogArgs runs `solitaire verify-log OLD NEW -key KEY -server URL`.
func (s *server) verifyLog(old, cur, key string) (int, string) {
	s.t.Helper()
	code, out, errs := runTool("verify-log", old, cur, "-key", key, "-server", s.url)
	return code, out + errs
}

// A finished game exported from the server passes `solitaire verify`
// against its proof, the checkpoint and the public key, whether the proof
// comes from a file or from the server, and against a checkpoint kept
// earlier. Rewriting the game's events (coherently re-chained), its games
// row before the leaf is made, or its leaf makes verify fail; a rebuilt
// tree re-signed with the same key fails verify-log against the checkpoint
// kept before.
func TestVerifyGame(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, backend)
			won := s.endGame(true)
			lost := s.endGame(false)
			s.sequence()
			kept := s.saveCheckpoint()
			for _, id := range []string{won, lost} {
				f := s.files(id)
				code, out := verifyArgs(t, f.game, "-key", f.key, "-proof", f.proof, "-salt", f.salt)
				if code != 0 || !strings.Contains(out, "inclusion:  ok") || !strings.Contains(out, "commitment: ok") {
					t.Fatalf("verify %s: exit %d\n%s", id, code, out)
				}
				if code, out := verifyArgs(t, f.game, "-key", f.key, "-server", s.url); code != 0 {
					t.Fatalf("verify -server: exit %d\n%s", code, out)
				}
				if code, out := verifyArgs(t, f.game, "-key", f.key, "-proof", f.proof, "-owner", "someone-else"); code != 1 ||
					!strings.Contains(out, "owner is") {
					t.Fatalf("verify -owner of another player: exit %d\n%s", code, out)
				}
			}
			// Another game's proof does not fit this export.
			fw, fl := s.files(won), s.files(lost)
			if code, out := verifyArgs(t, fw.game, "-key", fw.key, "-proof", fl.proof); code != 1 || !strings.Contains(out, "game_id is") {
				t.Fatalf("another game's proof: exit %d\n%s", code, out)
			}
			// More games: a proof against the kept, older checkpoint.
			s.endGame(false)
			s.sequence()
			f := s.files(won)
			if code, out := verifyArgs(t, f.game, "-key", f.key, "-server", s.url, "-checkpoint", kept); code != 0 ||
				!strings.Contains(out, "of 2,") {
				t.Fatalf("verify against the kept checkpoint: exit %d\n%s", code, out)
			}
			if code, out := verifyArgs(t, f.game, "-key", f.key, "-proof", f.proof, "-checkpoint", kept); code != 1 {
				t.Fatalf("a proof of 3 leaves against a checkpoint of 2: exit %d\n%s", code, out)
			}
			if code, out := s.verifyLog(kept, f.checkpoint, f.key); code != 0 {
				t.Fatalf("verify-log of an honest log: exit %d\n%s", code, out)
			}
			_, otherV, _ := note.GenerateKey(rand.Reader, "verify.example/log")
			if code, out := verifyArgs(t, f.game, "-key", otherV, "-proof", f.proof); code != 1 || !strings.Contains(out, "checkpoint: BROKEN") {
				t.Fatalf("another key: exit %d\n%s", code, out)
			}

			// 1. The events rewritten and re-chained: chain and rules hold,
			// the head is not the logged one.
			restore := rechainLast(t, s, lost)
			g := s.files(lost)
			code, out := verifyArgs(t, g.game, "-key", g.key, "-proof", g.proof)
			if code != 1 || !strings.Contains(out, "chain:      ok") || !strings.Contains(out, "leaf:       MISMATCH") ||
				!strings.Contains(out, "head is") {
				t.Fatalf("rewritten events: exit %d\n%s", code, out)
			}
			restore()

			// 2. The games row rewritten between the end and the leaf: the
			// leaf records what the log gives, not the forged row, and the
			// game is flagged (docs/transparency.md "Boards").
			forged := s.endGame(false)
			s.exec(`UPDATE games SET moves = 40 WHERE id = ?`, forged)
			s.sequence()
			g = s.files(forged)
			if code, out := verifyArgs(t, g.game, "-key", g.key, "-proof", g.proof); code != 0 || strings.Contains(out, "40 moves") {
				t.Fatalf("rewritten games row: exit %d\n%s", code, out)
			}
			var flagged *int64
			if err := s.store.DB().QueryRow(s.store.Rebind(`SELECT flagged_at FROM games WHERE id = ?`), forged).Scan(&flagged); err != nil || flagged == nil {
				t.Fatalf("the rewritten row is not flagged (%v)", err)
			}
			beforeRebuild := s.saveCheckpoint()

			// 3. The leaf rewritten in the database: its hash is not in the
			// signed tree.
			var rec []byte
			if err := s.store.DB().QueryRow(s.store.Rebind(`SELECT record FROM tlog_leaves WHERE game_id = ?`), won).Scan(&rec); err != nil {
				t.Fatal(err)
			}
			s.exec(`UPDATE tlog_leaves SET record = ? WHERE game_id = ?`, bytes.Replace(rec, []byte(`"status":"won"`), []byte(`"status":"lost"`), 1), won)
			g = s.files(won)
			code, out = verifyArgs(t, g.game, "-key", g.key, "-proof", g.proof)
			if code != 1 || !strings.Contains(out, "leaf:       MISMATCH") || !strings.Contains(out, "inclusion:  BROKEN") {
				t.Fatalf("rewritten leaf: exit %d\n%s", code, out)
			}
			// The operator rebuilds the tree over the rewritten leaf and
			// re-signs with the same key: the proof checks, the export does
			// not match, and the new tree does not extend the kept one.
			rebuild(t, s)
			g = s.files(won)
			code, out = verifyArgs(t, g.game, "-key", g.key, "-proof", g.proof)
			if code != 1 || !strings.Contains(out, "inclusion:  ok") || !strings.Contains(out, "status is \"lost\" in the log") {
				t.Fatalf("rebuilt tree: exit %d\n%s", code, out)
			}
			if code, out := s.verifyLog(beforeRebuild, g.checkpoint, g.key); code != 1 || !strings.Contains(out, "forked") {
				t.Fatalf("verify-log across the rebuild: exit %d\n%s", code, out)
			}
			s.endGame(true)
			s.sequence()
			if code, out := s.verifyLog(beforeRebuild, s.saveCheckpoint(), g.key); code != 1 || !strings.Contains(out, "consistency: BROKEN") {
				t.Fatalf("verify-log across the rebuild, grown: exit %d\n%s", code, out)
			}
		})
	}
}

// A server whose tree was rolled back (its last leaves dropped and the
// smaller tree re-signed with the same key) or forked (the dropped leaves
// replaced by others) is caught by verify-log against a checkpoint kept
// before; the honest continuation passes.
func TestVerifyLogRollbackFork(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			s := newServer(t, backend)
			var ids []string
			for i := range 6 {
				ids = append(ids, s.endGame(i%2 == 0))
			}
			s.sequence()
			key := filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(key, s.get("/v1/log/key"), 0o600); err != nil {
				t.Fatal(err)
			}
			kept := s.saveCheckpoint()

			// Rolled back to 4 leaves and re-signed.
			truncate(t, s, 4)
			rolled := s.saveCheckpoint()
			if code, out := s.verifyLog(kept, rolled, key); code != 1 || !strings.Contains(out, "rolled back") {
				t.Fatalf("rollback: exit %d\n%s", code, out)
			}
			// Forked: the two dropped games come back with another result
			// in another order, and one more game; the tree is as large
			// as before and larger, but not an extension.
			s.exec(`UPDATE games SET finished_at = finished_at - 1000000, moves = moves + 1 WHERE id = ?`, ids[5])
			s.sequence()
			forked := s.saveCheckpoint()
			if code, out := s.verifyLog(kept, forked, key); code != 1 || !strings.Contains(out, "forked") {
				t.Fatalf("fork of the same size: exit %d\n%s", code, out)
			}
			s.endGame(false)
			s.sequence()
			grown := s.saveCheckpoint()
			if code, out := s.verifyLog(kept, grown, key); code != 1 || !strings.Contains(out, "consistency: BROKEN") {
				t.Fatalf("fork, grown: exit %d\n%s", code, out)
			}
			// The rolled-back tree of 4 is a prefix of what the server
			// serves now: that part is honest.
			if code, out := s.verifyLog(rolled, grown, key); code != 0 {
				t.Fatalf("from the rolled-back checkpoint: exit %d\n%s", code, out)
			}
		})
	}
}

// rechainLast rewrites the last event of game id one millisecond later
// and re-chains it (a coherent rewrite: chain and rules still hold), and
// returns how to undo it.
func rechainLast(t *testing.T, s *server, id string) func() {
	t.Helper()
	recs, err := s.store.Events(t.Context(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := len(recs)
	last := recs[n-1]
	e, err := domain.DecodeEvent(last.Version, last.Type, last.OccurredAt, last.Payload)
	if err != nil {
		t.Fatal(err)
	}
	e.OccurredAt = e.OccurredAt.Add(time.Millisecond)
	re, err := domain.Record(id, recs[n-2].Hash, []domain.Event{e})
	if err != nil {
		t.Fatal(err)
	}
	q := `UPDATE events SET occurred_at = ?, payload = ?, hash = ? WHERE game_id = ? AND version = ?`
	s.exec(q, re[0].OccurredAt.UnixMilli(), re[0].Payload, re[0].Hash, id, last.Version)
	return func() { s.exec(q, last.OccurredAt.UnixMilli(), last.Payload, last.Hash, id, last.Version) }
}

// rebuild plays an operator who recomputes the whole tree from the leaf
// rows as they now are and re-signs it with the log's key.
func rebuild(t *testing.T, s *server) {
	t.Helper()
	rows, err := s.store.DB().Query(`SELECT record FROM tlog_leaves ORDER BY idx`)
	if err != nil {
		t.Fatal(err)
	}
	var records [][]byte
	for rows.Next() {
		var r []byte
		if err := rows.Scan(&r); err != nil {
			t.Fatal(err)
		}
		records = append(records, r)
	}
	rows.Close()
	s.exec(`DELETE FROM tlog_hashes`)
	hashes := map[int64]tlog.Hash{}
	reader := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = hashes[x]
		}
		return out, nil
	})
	for n, r := range records {
		hs, err := tlog.StoredHashes(int64(n), r, reader)
		if err != nil {
			t.Fatal(err)
		}
		base := tlog.StoredHashCount(int64(n))
		for i, h := range hs {
			hashes[base+int64(i)] = h
			s.exec(`INSERT INTO tlog_hashes (idx, hash) VALUES (?, ?)`, base+int64(i), h[:])
		}
	}
	root, err := tlog.TreeHash(int64(len(records)), reader)
	if err != nil {
		t.Fatal(err)
	}
	s.resign(int64(len(records)), root)
}

// truncate drops the leaves from index n on (their games wait for leaves
// again) and re-signs the smaller tree with the log's key.
func truncate(t *testing.T, s *server, n int64) {
	t.Helper()
	s.exec(`UPDATE games SET log_index = NULL WHERE log_index >= ?`, n)
	s.exec(`DELETE FROM tlog_leaves WHERE idx >= ?`, n)
	s.exec(`DELETE FROM tlog_hashes WHERE idx >= ?`, tlog.StoredHashCount(n))
	root, err := tlog.TreeHash(n, tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			var h []byte
			if err := s.store.DB().QueryRow(s.store.Rebind(`SELECT hash FROM tlog_hashes WHERE idx = ?`), x).Scan(&h); err != nil {
				return nil, err
			}
			copy(out[i][:], h)
		}
		return out, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	s.resign(n, root)
}

// resign stores a checkpoint of the tree of n leaves and root, signed with
// the log's own key, as the latest.
func (s *server) resign(n int64, root tlog.Hash) {
	s.t.Helper()
	signer, err := note.NewSigner(s.skey)
	if err != nil {
		s.t.Fatal(err)
	}
	msg, err := note.Sign(&note.Note{Text: string(app.Checkpoint{Origin: signer.Name(), Size: n, Root: root}.Text())}, signer)
	if err != nil {
		s.t.Fatal(err)
	}
	s.exec(`UPDATE tlog_state SET size = ?, root = ?, checkpoint = ? WHERE id = 1`, n, root[:], msg)
}

// verify-log reads the tree's hash tiles in the C2SP tlog-tiles layout
// (tile/L/N[.p/W] below /v1/log): it proves a kept checkpoint a prefix
// of a newer one through a server that answers only those paths, and
// fails through one that answers only the Go checksum database's layout
// (tile/8/L/N). The paths it asks for are torchwood's, a client this
// project did not write.
func TestVerifyLogTilesC2SP(t *testing.T) {
	s := newServer(t, "sqlite")
	s.endGame(false)
	s.sequence()
	kept := s.saveCheckpoint()
	for range 2 {
		s.endGame(false)
	}
	s.sequence()
	cur, key := s.saveCheckpoint(), strings.TrimSpace(string(s.get("/v1/log/key")))
	only := func(allowed func(path string) bool) string {
		target, _ := url.Parse(s.url)
		proxy := httputil.NewSingleHostReverseProxy(target)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/v1/log/tile/") && !allowed(strings.TrimPrefix(r.URL.Path, "/v1/log/")) {
				http.NotFound(w, r)
				return
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	c2sp := only(func(p string) bool { return !strings.HasPrefix(p, "tile/8/") })
	if code, out, errs := runTool("verify-log", kept, cur, "-key", key, "-server", c2sp); code != 0 ||
		!strings.Contains(out, "consistency: ok (1 leaves are a prefix of 3") {
		t.Fatalf("verify-log through C2SP tiles: exit %d\n%s%s", code, out, errs)
	}
	sumdb := only(func(p string) bool { return strings.HasPrefix(p, "tile/8/") })
	if code, out, errs := runTool("verify-log", kept, cur, "-key", key, "-server", sumdb); code != 1 ||
		!strings.Contains(out, "404") {
		t.Fatalf("verify-log without C2SP tiles: exit %d, want 1 (404)\n%s%s", code, out, errs)
	}
	for _, tile := range []tlog.Tile{{H: 8, L: 0, N: 0, W: 3}, {H: 8, L: 0, N: 1234067, W: 256}, {H: 8, L: 2, N: 5, W: 17},
		{H: 8, L: 7, N: 0, W: 1}, {H: 8, L: -1, N: 1000, W: 256}, {H: 8, L: -1, N: 0, W: 44}} {
		if got, want := c2spTilePath(tile), torchwood.TilePath(tile); got != want {
			t.Errorf("c2spTilePath(%+v) = %s, torchwood says %s", tile, got, want)
		}
	}
}
