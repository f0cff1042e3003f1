package api_test

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// tiledGames is how many ended games TestLogTilesTorchwood logs: one full
// tile of 256 leaves and a partial one of 44, so a level-1 tile exists.
const tiledGames = 300

// A tlog-tiles client this project did not write, filippo.io/torchwood
// with its defaults (C2SP tlog-tiles paths, entry bundles), reads every
// leaf of a log of 300 ended games from the server's prefix /v1/log over
// HTTP; each leaf is checked by torchwood against the hash tiles of the
// signed checkpoint's tree, and the root recomputed here from the entries
// alone (RFC 6962, with crypto/sha256) is the checkpoint's. The same
// client reads the Go checksum database's layout under tile/8/, told its
// paths and that its records are lines.
func TestLogTilesTorchwood(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		ended := map[string]bool{}
		for range tiledGames {
			g, _, err := e.games.Create(t.Context(), app.NewGame{Owner: e.player, Variant: "klondike"})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := e.games.Play(t.Context(), e.player, g.ID, domain.Move{Type: domain.MoveResign}, -1, nil); err != nil {
				t.Fatal(err)
			}
			ended[g.ID] = true
		}
		e.sequence()
		prefix := e.srv.URL + "/v1/log"
		cp := signedCheckpoint(t, prefix)
		if cp.N != tiledGames {
			t.Fatalf("checkpoint of %d leaves, want %d", cp.N, tiledGames)
		}

		fetcher, err := torchwood.NewTileFetcher(prefix)
		if err != nil {
			t.Fatal(err)
		}
		client, err := torchwood.NewClient(fetcher)
		if err != nil {
			t.Fatal(err)
		}
		entries := readAll(t, client, cp.Tree)
		if got := mth(entries); got != cp.Hash {
			t.Fatalf("root of the %d entries %x, the checkpoint's %x", len(entries), got, cp.Hash)
		}
		for i, rec := range entries {
			l, err := app.ParseLeaf(rec)
			if err != nil || !ended[l.GameID] {
				t.Fatalf("entry %d %q: %+v, %v; want the leaf of a game ended here", i, rec, l, err)
			}
			delete(ended, l.GameID)
		}
		if len(ended) != 0 {
			t.Fatalf("%d ended games have no entry", len(ended))
		}
		// One entry at a time, with its inclusion proof from the tiles.
		for _, i := range []int64{0, 255, 256, tiledGames - 1} {
			rec, _, err := client.Entry(t.Context(), cp.Tree, i)
			if err != nil || !bytes.Equal(rec, entries[i]) {
				t.Fatalf("Entry(%d) = %q, %v; want %q", i, rec, err, entries[i])
			}
		}

		// Full tiles are immutable, partial ones are not.
		for path, want := range map[string]string{"tile/0/000": "immutable", "tile/entries/000": "immutable",
			"tile/1/000.p/1": "no-cache", "tile/entries/001.p/44": "no-cache", "tile/8/data/000": "immutable"} {
			resp, err := http.Get(prefix + "/" + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if cc := resp.Header.Get("Cache-Control"); resp.StatusCode != http.StatusOK || !strings.Contains(cc, want) ||
				resp.Header.Get("Content-Type") != "application/octet-stream" {
				t.Errorf("GET %s: %d, Cache-Control %q, Content-Type %q; want 200, %s, application/octet-stream",
					path, resp.StatusCode, cc, resp.Header.Get("Content-Type"), want)
			}
		}

		// The checksum database's layout: the same tree, records as lines.
		old, err := torchwood.NewTileFetcher(prefix, torchwood.WithTilePath(tlog.Tile.Path))
		if err != nil {
			t.Fatal(err)
		}
		oldClient, err := torchwood.NewClient(old, torchwood.WithCutEntry(cutLine))
		if err != nil {
			t.Fatal(err)
		}
		oldEntries := readAll(t, oldClient, cp.Tree)
		if !slices.EqualFunc(oldEntries, entries, bytes.Equal) {
			t.Fatal("the checksum database's layout gives other entries than C2SP tlog-tiles")
		}
	})
}

// signedCheckpoint fetches the log's key and checkpoint from prefix and
// opens the checkpoint: a signed note verified with that key, whose body
// torchwood parses (C2SP tlog-checkpoint) and whose origin is the key's
// name.
func signedCheckpoint(t *testing.T, prefix string) torchwood.Checkpoint {
	t.Helper()
	get := func(path string) []byte {
		resp, err := http.Get(prefix + "/" + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s, %v", path, resp.StatusCode, b, err)
		}
		return b
	}
	v, err := note.NewVerifier(strings.TrimSpace(string(get("key"))))
	if err != nil {
		t.Fatal(err)
	}
	n, err := note.Open(get("checkpoint"), note.VerifierList(v))
	if err != nil {
		t.Fatalf("checkpoint does not verify with the server's key: %v", err)
	}
	cp, err := torchwood.ParseCheckpoint(n.Text)
	if err != nil || cp.Origin != v.Name() {
		t.Fatalf("checkpoint %q: %+v, %v; want the origin %q", n.Text, cp, err, v.Name())
	}
	return cp
}

// readAll reads every entry of tree with c. Client.Entries stops before a
// partial entry bundle unless it starts within it, so it is called again
// from where it stopped until the tree is read or a call reads nothing.
func readAll(t *testing.T, c *torchwood.Client, tree tlog.Tree) [][]byte {
	t.Helper()
	var out [][]byte
	for int64(len(out)) < tree.N {
		before := len(out)
		for i, rec := range c.Entries(t.Context(), tree, int64(len(out))) {
			if i != int64(len(out)) {
				t.Fatalf("entry %d after %d entries", i, len(out))
			}
			out = append(out, bytes.Clone(rec))
		}
		if err := c.Err(); err != nil {
			t.Fatalf("torchwood read %d of %d entries: %v", len(out), tree.N, err)
		}
		if len(out) == before {
			t.Fatalf("torchwood read %d of %d entries and stopped", len(out), tree.N)
		}
	}
	return out
}

// cutLine splits a checksum-database data tile of this log: each record
// is one line, ending in "\n", hashed as RFC 6962 leaf.
func cutLine(tile []byte) (entry []byte, rh tlog.Hash, rest []byte, err error) {
	i := bytes.IndexByte(tile, '\n')
	if i < 0 {
		i = len(tile) - 1
	}
	entry, rest = tile[:i+1], tile[i+1:]
	return entry, tlog.RecordHash(entry), rest, nil
}

// mth is the RFC 6962 §2.1 Merkle Tree Hash of entries, computed here
// from its definition: SHA-256(0x00 ‖ entry) for a leaf, SHA-256(0x01 ‖
// left ‖ right) for a node whose left subtree holds the largest power of
// two of leaves below their number.
func mth(entries [][]byte) [32]byte {
	switch len(entries) {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return sha256.Sum256(append([]byte{0}, entries[0]...))
	}
	k := 1
	for k*2 < len(entries) {
		k *= 2
	}
	l, r := mth(entries[:k]), mth(entries[k:])
	return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
}
