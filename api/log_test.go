package api_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
)

// openTestLog opens the store's transparency log with a new key and the
// test's clock (which decides when a competition has closed). The test
// sequences it (Log.Sequence) where a server would run it every second.
func openTestLog(t *testing.T, store *persistence.Store, now func() time.Time) *persistence.Log {
	t.Helper()
	skey, _, err := note.GenerateKey(rand.Reader, "test.example/log")
	if err != nil {
		t.Fatal(err)
	}
	l, err := store.OpenLog(t.Context(), persistence.LogConfig{Key: skey, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// sequence appends the waiting leaves.
func (e *env) sequence() {
	e.t.Helper()
	if _, err := e.tlog.Sequence(e.t.Context()); err != nil {
		e.t.Fatal(err)
	}
}

// checkpoint fetches the latest checkpoint and checks its signature with
// the key the server publishes.
func (e *env) checkpoint() app.Checkpoint {
	e.t.Helper()
	key := e.must(http.StatusOK, req{method: "GET", path: "/v1/log/key", token: "-"})
	v, err := note.NewVerifier(strings.TrimSpace(string(key.body)))
	if err != nil {
		e.t.Fatalf("GET /v1/log/key: %v\n%s", err, key.body)
	}
	r := e.must(http.StatusOK, req{method: "GET", path: "/v1/log/checkpoint", token: "-"})
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		e.t.Errorf("checkpoint Content-Type %q", ct)
	}
	n, err := note.Open(r.body, note.VerifierList(v))
	if err != nil {
		e.t.Fatalf("checkpoint does not verify: %v\n%s", err, r.body)
	}
	c, err := app.ParseCheckpoint([]byte(n.Text))
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// proof fetches a game's proof and checks it against c.
func (e *env) proof(id, token string, c app.Checkpoint) (api.LogProof, []byte) {
	e.t.Helper()
	var p api.LogProof
	e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id + "/proof", token: token}).decode(e.t, &p)
	leaf, err := base64.StdEncoding.DecodeString(p.Leaf)
	if err != nil {
		e.t.Fatal(err)
	}
	var proof tlog.RecordProof
	for _, h := range p.Proof {
		x, err := tlog.ParseHash(h)
		if err != nil {
			e.t.Fatal(err)
		}
		proof = append(proof, x)
	}
	if p.TreeSize != c.Size {
		e.t.Fatalf("proof against %d leaves, checkpoint has %d", p.TreeSize, c.Size)
	}
	if err := tlog.CheckRecord(proof, c.Size, c.Root, p.LeafIndex, tlog.RecordHash(leaf)); err != nil {
		e.t.Fatalf("inclusion proof of %s does not verify: %v", id, err)
	}
	return p, leaf
}

// A game that ends gets a leaf; its proof, fetched by anyone, verifies
// against the signed checkpoint; tiles and consistency proofs describe
// the same tree. A game in progress has none (404 not_logged), and one
// the caller may not read is 404 (RULES R6.4).
func TestLogRoutes(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		if c := e.checkpoint(); c.Size != 0 || c.Origin != "test.example/log" {
			t.Fatalf("new log: %+v", c)
		}
		g := e.createGame(map[string]any{"variant": "klondike"})
		e.play(g.ID, draw())
		// In progress: the owner hears not_logged, anyone else not_found.
		r := e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + g.ID + "/proof"})
		if p := r.problem(t); p.Code != api.CodeNotLogged || r.header.Get("Retry-After") != "" {
			t.Fatalf("proof in progress: %+v, Retry-After %q", p, r.header.Get("Retry-After"))
		}
		r = e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + g.ID + "/proof", token: "-"})
		if p := r.problem(t); p.Code != api.CodeNotFound {
			t.Fatalf("anonymous proof of a running game: %+v", p)
		}
		e.play(g.ID, resign())
		r = e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + g.ID + "/proof"})
		if p := r.problem(t); p.Code != api.CodeNotLogged || r.header.Get("Retry-After") != "1" {
			t.Fatalf("proof before the sequencer: %+v, Retry-After %q", p, r.header.Get("Retry-After"))
		}
		var ids []string
		for range 4 {
			h := e.createGame(map[string]any{"variant": "klondike-draw3"})
			e.play(h.ID, resign())
			ids = append(ids, h.ID)
		}
		e.sequence()
		c := e.checkpoint()
		if c.Size != 5 {
			t.Fatalf("checkpoint of %d leaves, want 5", c.Size)
		}
		p, leaf := e.proof(g.ID, "-", c)
		l, err := app.ParseLeaf(leaf)
		if err != nil || l.GameID != g.ID || l.Status != domain.StatusLost || l.Owner != e.player || l.Head != e.head(g.ID) {
			t.Fatalf("leaf %s: %+v, %v", leaf, l, err)
		}
		// ⌈log2 5⌉ = 3 for the four leaves of the left subtree, 1 for the fifth.
		if want := map[bool]int{true: 3, false: 1}[p.LeafIndex < 4]; len(p.Proof) != want {
			t.Errorf("leaf %d of 5: %d hashes, want %d", p.LeafIndex, len(p.Proof), want)
		}
		_, bad := e.newPlayer("Mallory")
		e.must(http.StatusUnauthorized, req{method: "GET", path: "/v1/games/" + g.ID + "/proof", token: "forged"})
		e.proof(ids[0], bad, c)

		// The entry bundle holds the five records in order, each after
		// its length (C2SP tlog-tiles); the checksum database's data tile
		// the records alone; the hash tile, the same bytes in both
		// layouts, the five leaf hashes.
		records := make([][]byte, 5)
		var bundle []byte
		for _, id := range append([]string{g.ID}, ids...) {
			p, lf := e.proof(id, "", c)
			records[p.LeafIndex] = lf
		}
		for _, rec := range records {
			bundle = append(binary.BigEndian.AppendUint16(bundle, uint16(len(rec))), rec...)
		}
		entries := e.must(http.StatusOK, req{method: "GET", path: "/v1/log/tile/entries/000.p/5", token: "-"})
		if !bytes.Equal(entries.body, bundle) || entries.header.Get("Cache-Control") != "no-cache" {
			t.Errorf("entry bundle (Cache-Control %q):\n%q\nwant the records in order, each after its length", entries.header.Get("Cache-Control"), entries.body)
		}
		data := e.must(http.StatusOK, req{method: "GET", path: "/v1/log/tile/8/data/000.p/5", token: "-"})
		if !bytes.Equal(data.body, bytes.Join(records, nil)) {
			t.Errorf("data tile:\n%s\nwant the records in order", data.body)
		}
		hashes := e.must(http.StatusOK, req{method: "GET", path: "/v1/log/tile/0/000.p/5", token: "-"})
		if len(hashes.body) != 5*32 || hashes.header.Get("Cache-Control") != "no-cache" {
			t.Fatalf("hash tile of %d bytes, Cache-Control %q", len(hashes.body), hashes.header.Get("Cache-Control"))
		}
		if old := e.must(http.StatusOK, req{method: "GET", path: "/v1/log/tile/8/0/000.p/5", token: "-"}); !bytes.Equal(old.body, hashes.body) {
			t.Errorf("hash tile 8/0/000.p/5 is not 0/000.p/5")
		}
		for i, rec := range records {
			if h := tlog.RecordHash(rec); !bytes.Equal(hashes.body[32*i:32*i+32], h[:]) {
				t.Errorf("hash tile entry %d is not the leaf hash of record %d", i, i)
			}
		}

		// A kept checkpoint of 5, a new one of 7: the consistency proof
		// and a proof against the older tree both check.
		for range 2 {
			h := e.createGame(map[string]any{"variant": "klondike"})
			e.play(h.ID, resign())
		}
		e.sequence()
		c7 := e.checkpoint()
		var cp api.LogConsistency
		e.must(http.StatusOK, req{method: "GET", path: "/v1/log/consistency?old=5&new=7", token: "-"}).decode(t, &cp)
		var tp tlog.TreeProof
		for _, h := range cp.Proof {
			x, _ := tlog.ParseHash(h)
			tp = append(tp, x)
		}
		if err := tlog.CheckTree(tp, c7.Size, c7.Root, c.Size, c.Root); err != nil {
			t.Fatalf("consistency 5 -> 7: %v", err)
		}
		var old api.LogProof
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/proof?tree_size=5", token: "-"}).decode(t, &old)
		if old.TreeSize != 5 || strings.Join(old.Proof, ",") != strings.Join(p.Proof, ",") {
			t.Errorf("proof against the kept tree of 5: %+v, want %+v", old.Proof, p.Proof)
		}
	})
}

// head is the hash of a game's last event, hex.
func (e *env) head(id string) string {
	e.t.Helper()
	evs := e.allEvents(id, 500)
	return evs[len(evs)-1].Hash
}

// Bad input to the log's routes gets a 4xx problem and changes nothing.
func TestLogBadInput(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(map[string]any{"variant": "klondike"})
		e.play(g.ID, resign())
		e.sequence()
		before := e.checkpoint()
		cases := []struct {
			path   string
			status int
			code   string
		}{
			{"/v1/log/tile/8/0/001", 404, api.CodeNotFound},                   // beyond the tree
			{"/v1/log/tile/8/0/000.p/2", 404, api.CodeNotFound},               // wider than the tree
			{"/v1/log/tile/4/0/000.p/1", 404, api.CodeNotFound},               // another height
			{"/v1/log/tile/8/zz/000", 404, api.CodeNotFound},                  // not a level
			{"/v1/log/tile/8/1/000.p/1", 404, api.CodeNotFound},               // no level 1 yet
			{"/v1/log/tile/8/data/000.p/0", 404, api.CodeNotFound},            // width 0
			{"/v1/log/tile/8/9223372036854775807/000", 404, api.CodeNotFound}, // a level past int64 (no panic)
			{"/v1/log/tile/8/0/x9223372036854775807", 404, api.CodeNotFound},  // an index past int64
			{"/v1/log/tile/8/entries/000.p/1", 404, api.CodeNotFound},         // C2SP's spelling under tile/8
			{"/v1/log/tile/0/001", 404, api.CodeNotFound},                     // C2SP: beyond the tree
			{"/v1/log/tile/0/000.p/2", 404, api.CodeNotFound},                 // wider than the tree
			{"/v1/log/tile/0/000", 404, api.CodeNotFound},                     // a full tile of a tree of 1
			{"/v1/log/tile/1/000.p/1", 404, api.CodeNotFound},                 // no level 1 yet
			{"/v1/log/tile/00/000.p/1", 404, api.CodeNotFound},                // a leading zero in the level
			{"/v1/log/tile/-1/000.p/1", 404, api.CodeNotFound},                // a negative level
			{"/v1/log/tile/data/000.p/1", 404, api.CodeNotFound},              // the checksum database's spelling
			{"/v1/log/tile/8/000.p/1", 404, api.CodeNotFound},                 // level 8: the checksum database's layout
			{"/v1/log/tile/63/000.p/1", 404, api.CodeNotFound},                // the highest level C2SP spells
			{"/v1/log/tile/64/000.p/1", 404, api.CodeNotFound},                // beyond it
			{"/v1/log/tile/9223372036854775807/000", 404, api.CodeNotFound},   // a level past int64 (no panic)
			{"/v1/log/tile/0/x9223372036854775807", 404, api.CodeNotFound},    // an index past int64
			{"/v1/log/tile/0/0.p/1", 404, api.CodeNotFound},                   // not three digits
			{"/v1/log/tile/0/000.p/01", 404, api.CodeNotFound},                // a leading zero in the width
			{"/v1/log/tile/0/000.p/256", 404, api.CodeNotFound},               // a full width spelled partial
			{"/v1/log/tile/entries/000.p/0", 404, api.CodeNotFound},           // width 0
			{"/v1/log/tile/entries/000.p/2", 404, api.CodeNotFound},           // wider than the tree
			{"/v1/log/tile/entries/000", 404, api.CodeNotFound},               // a full bundle of a tree of 1
			{"/v1/log/tile/entries/001.p/1", 404, api.CodeNotFound},           // beyond the tree
			{"/v1/log/tile/entries/x000/000.p/1", 404, api.CodeNotFound},      // a zero group spelled out
			{"/v1/log/tile/entries/x9223372036854775807", 404, api.CodeNotFound},
			{"/v1/log/tile/entries/000.p", 404, api.CodeNotFound},             // no width
			{"/v1/log/tile/0/x001/x002/x003/x004/005", 404, api.CodeNotFound}, // more segments than any route
			{"/v1/log/consistency?old=1", 400, api.CodeInvalidParameter},
			{"/v1/log/consistency?old=0&new=1", 400, api.CodeInvalidParameter},
			{"/v1/log/consistency?old=2&new=1", 404, api.CodeNotFound},
			{"/v1/log/consistency?old=1&new=2", 404, api.CodeNotFound},
			{"/v1/log/consistency?old=x&new=1", 400, api.CodeInvalidParameter},
			{"/v1/games/" + g.ID + "/proof?tree_size=2", 404, api.CodeNotFound},
			{"/v1/games/" + g.ID + "/proof?tree_size=-1", 400, api.CodeInvalidParameter},
			{"/v1/games/nosuchgame/proof", 404, api.CodeNotFound},
		}
		for _, c := range cases {
			r := e.do(req{method: "GET", path: c.path, token: "-", invalid: true})
			if r.status != c.status || r.problem(t).Code != c.code {
				t.Errorf("GET %s: %d %s, want %d %s", c.path, r.status, r.body, c.status, c.code)
			}
		}
		if after := e.checkpoint(); after != before {
			t.Errorf("bad input changed the log: %+v -> %+v", before, after)
		}
	})
}

// A game on a shared deal gets its leaf only when its competition closes
// (RULES R6.6): before, its owner hears not_logged and anyone else
// not_found, and the tree holds nothing of it; after, anyone may read its
// proof. No log response ever holds its seed, salt or a hidden card.
func TestR6_6_LogSharedDeal(t *testing.T) {
	forEachCompStore(t, func(t *testing.T, e *cenv) {
		_, bobToken := e.newPlayer("Bob")
		e.seeds.next(klassikSeed)
		d := e.createDuel(map[string]any{})
		ga := e.join(e.token, d.ID)
		e.join(bobToken, d.ID)
		e.playAs(e.token, ga.ID, resign())
		from := e.bodiesSoFar()
		e.sequence()
		if c := e.checkpoint(); c.Size != 0 {
			t.Fatalf("a running duel's game was logged: %+v", c)
		}
		r := e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + ga.ID + "/proof"})
		if p := r.problem(t); p.Code != api.CodeNotLogged || r.header.Get("Retry-After") != "" || !strings.Contains(p.Detail, "R6.6") {
			t.Errorf("owner's proof before the close: %+v, Retry-After %q", p, r.header.Get("Retry-After"))
		}
		for _, tok := range []string{"-", bobToken} {
			r := e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + ga.ID + "/proof", token: tok})
			if p := r.problem(t); p.Code != api.CodeNotFound {
				t.Errorf("proof of a running duel's game for %q: %+v", tok, p)
			}
		}
		e.must(http.StatusNotFound, req{method: "GET", path: "/v1/log/tile/8/data/000.p/1", token: "-"})
		e.must(http.StatusNotFound, req{method: "GET", path: "/v1/log/tile/entries/000.p/1", token: "-"})

		// After the deadline the duel is over (the sweeper ends Bob's
		// game): both games get leaves, anyone may read the proofs.
		e.clock.Advance(25 * time.Hour)
		if _, _, err := e.games.Sweep(t.Context(), e.clock.Now()); err != nil {
			t.Fatal(err)
		}
		e.sequence()
		c := e.checkpoint()
		if c.Size != 2 {
			t.Fatalf("after the close: %d leaves, want 2", c.Size)
		}
		e.proof(ga.ID, "-", c)
		tile := e.must(http.StatusOK, req{method: "GET", path: "/v1/log/tile/8/data/000.p/2", token: "-"})
		for _, line := range bytes.SplitAfter(tile.body, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			// ParseLeaf refuses unknown keys: a record is a leaf, nothing more.
			if l, err := app.ParseLeaf(line); err != nil || l.Commitment != d.Commitment {
				t.Fatalf("data tile record %s: %+v, %v", line, l, err)
			}
		}
		rec, err := e.store.Game(t.Context(), ga.ID)
		if err != nil {
			t.Fatal(err)
		}
		salt := []byte(hex.EncodeToString(rec.Salt))
		e.tr.mu.Lock()
		bodies := e.tr.bodies[from:]
		e.tr.mu.Unlock()
		for _, b := range bodies {
			if bytes.Contains(b, []byte(`"salt"`)) && bytes.Contains(b, []byte(`"chain_ok"`)) {
				continue // the audit, after the close, reveals the salt by design (R6.4)
			}
			for _, secret := range [][]byte{salt, []byte(`"seed"`), []byte(`"salt"`), []byte(`"deal"`), []byte(`"face_down"`)} {
				if bytes.Contains(b, secret) {
					t.Errorf("a log response holds %s: %s", secret, truncate(b))
				}
			}
		}
	})
}
