package api_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/persistence"
)

// audit is GET …/audit for the default player.
func (e *env) audit(id string) api.Audit {
	e.t.Helper()
	var a api.Audit
	r := e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id + "/audit"})
	r.decode(e.t, &a)
	if r.header.Get("ETag") == "" {
		e.t.Errorf("audit without ETag")
	}
	return a
}

// clean reports whether an audit found nothing wrong.
func clean(a api.Audit) bool {
	return a.ChainOK && a.ReplayOK && a.ProjectionOK && a.FirstBrokenVersion == nil &&
		a.ChainBrokenAt == nil && a.ReplayBrokenAt == nil
}

// TestAudit: the audit of an intact game finds nothing wrong; while the
// game is in progress it reveals nothing (R6.4) and only its owner may ask;
// after the end it reveals seed and salt, which check the commitment
// against the deal in the log, and anyone may ask.
func TestAudit(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(map[string]any{"variant": "klondike", "seed": 42, "options": map[string]any{"undo": true}})
		e.playQuietly(g.ID, 8, time.Second)
		e.play(g.ID, undo())
		e.playQuietly(g.ID, 4, time.Second)
		evs := e.allEvents(g.ID, 500)

		a := e.audit(g.ID)
		if !clean(a) || a.Events != len(evs) || a.HeadHash != evs[len(evs)-1].Hash || a.Commitment != g.Commitment {
			t.Errorf("audit in progress: %+v", a)
		}
		if a.CommitmentOK != nil || a.Seed != nil || a.Salt != nil || a.Problem != nil {
			t.Errorf("audit in progress reveals: %+v", a)
		}
		_, other := e.newPlayer("Eve")
		e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + g.ID + "/audit", token: other})
		e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/nope/audit"})
		e.must(http.StatusUnauthorized, req{method: "GET", path: "/v1/games/" + g.ID + "/audit", token: "-"})

		e.play(g.ID, resign())
		var b api.Audit
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/audit", token: other}).decode(t, &b)
		if !clean(b) || b.CommitmentOK == nil || !*b.CommitmentOK || b.Seed == nil || *b.Seed != 42 ||
			b.Salt == nil || len(*b.Salt) != 64 || b.Events != len(evs)+1 {
			t.Fatalf("audit after the end: %+v", b)
		}
		// Anyone can check the commitment from the log and the salt.
		var page struct {
			Events []struct {
				Data domain.EventData `json:"data"`
			} `json:"events"`
		}
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/events?limit=1"}).decode(t, &page)
		salt, _ := hex.DecodeString(*b.Salt)
		if deal := page.Events[0].Data.Deal; deal == nil || !domain.CheckCommitment(g.Commitment, *deal, salt) {
			t.Errorf("the revealed deal and salt do not give the commitment %s", g.Commitment)
		}

		// A custom layout won by autocomplete: no seed to reveal.
		l := e.createGame(api.CreateGameRequest{Variant: "klondike", Layout: runs()})
		if r := e.play(l.ID, api.MoveRequest{Type: "autocomplete"}); r.Game.Status != "won" {
			t.Fatalf("autocomplete: %s", r.Game.Status)
		}
		c := e.audit(l.ID)
		if !clean(c) || c.Seed != nil || c.CommitmentOK == nil || !*c.CommitmentOK {
			t.Errorf("audit of a won layout: %+v", c)
		}

		// The stored projection is checked against the replay.
		if _, err := e.store.DB().Exec(e.store.Rebind(`UPDATE games SET moves = moves + 1 WHERE id = ?`), l.ID); err != nil {
			t.Fatal(err)
		}
		d := e.audit(l.ID)
		if d.ProjectionOK || !d.ChainOK || !d.ReplayOK || d.FirstBrokenVersion == nil || *d.FirstBrokenVersion != c.Events {
			t.Errorf("audit of a changed projection: %+v", d)
		}
	})
}

// storedEvent is one row of the events table, as tamper changes it.
type storedEvent struct {
	position   int64
	payload    []byte
	typ        string
	occurredAt int64
	prevHash   []byte
	hash       []byte
}

// tamper changes one stored byte of event version of game id, in a column
// picked by rng: a payload byte, a type character, a version bit, an
// occurred_at bit, a hash or prev_hash byte. It returns what it changed
// and a function that puts the original back. maxVersion is the game's
// last version (a changed version must not collide with another).
func tamper(t *testing.T, s *persistence.Store, id string, version, maxVersion int, rng *rand.Rand) (string, func()) {
	t.Helper()
	db := s.DB()
	var r storedEvent
	if err := db.QueryRow(s.Rebind(`SELECT position, payload, type, occurred_at, prev_hash, hash FROM events
		WHERE game_id = ? AND version = ?`), id, version).
		Scan(&r.position, &r.payload, &r.typ, &r.occurredAt, &r.prevHash, &r.hash); err != nil {
		t.Fatal(err)
	}
	flipByte := func(b []byte) []byte {
		out := append([]byte(nil), b...)
		out[rng.IntN(len(out))] ^= byte(1 + rng.IntN(255))
		return out
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(s.Rebind(q), args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	switch rng.IntN(6) {
	case 0:
		exec(`UPDATE events SET payload = ? WHERE position = ?`, flipByte(r.payload), r.position)
		return "payload", func() { exec(`UPDATE events SET payload = ? WHERE position = ?`, r.payload, r.position) }
	case 1:
		b := []byte(r.typ)
		i := rng.IntN(len(b))
		const letters = "abcdefghijklmnopqrstuvwxyz_"
		for c := b[i]; c == b[i]; {
			b[i] = letters[rng.IntN(len(letters))]
		}
		exec(`UPDATE events SET type = ? WHERE position = ?`, string(b), r.position)
		return "type", func() { exec(`UPDATE events SET type = ? WHERE position = ?`, r.typ, r.position) }
	case 2:
		// A bit of the second or third byte: a version above every other,
		// so no collision with the (game_id, version) key.
		nv := version ^ 1<<(8+rng.IntN(14))
		for nv <= maxVersion {
			nv = version ^ 1<<(8+rng.IntN(14))
		}
		exec(`UPDATE events SET version = ? WHERE position = ?`, nv, r.position)
		return "version", func() { exec(`UPDATE events SET version = ? WHERE position = ?`, version, r.position) }
	case 3:
		exec(`UPDATE events SET occurred_at = ? WHERE position = ?`, r.occurredAt^1<<rng.IntN(40), r.position)
		return "occurred_at", func() {
			exec(`UPDATE events SET occurred_at = ? WHERE position = ?`, r.occurredAt, r.position)
		}
	case 4:
		exec(`UPDATE events SET hash = ? WHERE position = ?`, flipByte(r.hash), r.position)
		return "hash", func() { exec(`UPDATE events SET hash = ? WHERE position = ?`, r.hash, r.position) }
	default:
		exec(`UPDATE events SET prev_hash = ? WHERE position = ?`, flipByte(r.prevHash), r.position)
		return "prev_hash", func() { exec(`UPDATE events SET prev_hash = ? WHERE position = ?`, r.prevHash, r.position) }
	}
}

// TestAuditTamper: one changed byte anywhere in a stored event (payload,
// type, version, time, hashes), at random positions of an ended and of a
// running game, is reported by the audit as the chain broken at exactly
// that version, every time; the events and the stream still answer. (The
// offline tool on the export is checked in cmd/solitaire.)
func TestAuditTamper(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
		ended := e.createGame(map[string]any{"variant": "klondike", "seed": 5, "options": map[string]any{"undo": true}})
		e.playQuietly(ended.ID, 15, time.Second)
		e.play(ended.ID, undo())
		e.play(ended.ID, resign())
		running := e.createGame(map[string]any{"variant": "klondike", "seed": 6})
		e.playQuietly(running.ID, 15, time.Second)
		plain := &http.Client{}
		const rounds = 24
		for i := 0; i < rounds; i++ {
			id := ended.ID
			if i%3 == 2 {
				id = running.ID
			}
			n := e.version(id)
			v := 1 + rng.IntN(n)
			what, restore := tamper(t, e.store, id, v, n, rng)
			a := e.audit(id)
			if a.ChainOK || a.ChainBrokenAt == nil || *a.ChainBrokenAt != v ||
				a.FirstBrokenVersion == nil || *a.FirstBrokenVersion != v {
				t.Errorf("%s of event %d/%d changed: audit %+v", what, v, n, a)
			}
			// The export still answers, with the stored bytes (not
			// validated: a changed log need not fit the spec).
			hr, _ := http.NewRequestWithContext(context.Background(), "GET", e.srv.URL+"/v1/games/"+id+"/events", nil)
			hr.Header.Set("Authorization", "Bearer "+e.token)
			hr.Header.Set("Accept", "application/x-ndjson")
			resp, err := plain.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			var lines int
			dec := json.NewDecoder(resp.Body)
			for {
				var x json.RawMessage
				if err := dec.Decode(&x); err != nil {
					break
				}
				lines++
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || lines != n {
				t.Errorf("%s of event %d changed: export %d with %d lines, want %d", what, v, resp.StatusCode, lines, n)
			}
			restore()
		}
		for _, id := range []string{ended.ID, running.ID} {
			if a := e.audit(id); !clean(a) {
				t.Errorf("audit after restoring: %+v", a)
			}
		}

		// A lost tail event: the record counts one more than the log.
		n := e.version(ended.ID)
		if _, err := e.store.DB().Exec(e.store.Rebind(`DELETE FROM events WHERE game_id = ? AND version = ?`), ended.ID, n); err != nil {
			t.Fatal(err)
		}
		a := e.audit(ended.ID)
		if a.ChainOK || a.ChainBrokenAt == nil || *a.ChainBrokenAt != n || a.Events != n-1 {
			t.Errorf("audit without the last event: %+v", a)
		}
	})
}
