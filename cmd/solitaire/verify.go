package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// logProof is the JSON of GET /v1/games/{id}/proof (api.LogProof).
type logProof struct {
	GameID     string   `json:"game_id"`
	LeafIndex  int64    `json:"leaf_index"`
	TreeSize   int64    `json:"tree_size"`
	Leaf       string   `json:"leaf"`
	Proof      []string `json:"proof"`
	Checkpoint string   `json:"checkpoint"`
}

// verify checks an exported game against the transparency log: the log
// itself (chain, rules, and the commitment with -salt) as audit does, the
// leaf (the canonical record of this log), its inclusion proof, and the
// checkpoint's signature.
func verify(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newKeyedFlags("verify", stderr)
	proofFile := fs.String("proof", "", "the game's proof (GET /v1/games/{id}/proof saved as JSON)")
	server := fs.String("server", "", "fetch the proof from this server instead of -proof")
	token := fs.String("token", os.Getenv("SOLITAIRE_TOKEN"), "bearer token with -server (for your own game; default $SOLITAIRE_TOKEN)")
	cpFile := fs.String("checkpoint", "", "check inclusion in this checkpoint (a signed note you kept) instead of the proof's")
	saltHex := fs.String("salt", "", "the game's salt (hex), revealed after the end, to check the commitment")
	owner := fs.String("owner", "", "the player id the leaf must name (default: taken from the leaf; the export has no owner)")
	pos, verifier, code := fs.parse(args, 1, func() bool { return (*proofFile == "") != (*server == "") })
	if code != 0 {
		return code
	}
	salt, recs, code := readSaltAndLog(*saltHex, pos[0], stdin, stderr)
	if code != 0 {
		return code
	}
	gameID := recs[0].GameID
	var kept []byte
	if *cpFile != "" {
		var err error
		if kept, err = os.ReadFile(*cpFile); err != nil {
			fmt.Fprintf(stderr, "solitaire: -checkpoint: %v\n", err)
			return 2
		}
	}
	var p logProof
	if *proofFile != "" {
		b, err := os.ReadFile(*proofFile)
		if err == nil {
			err = json.Unmarshal(b, &p)
		}
		if err != nil {
			fmt.Fprintf(stderr, "solitaire: -proof: %v\n", err)
			return 2
		}
	} else {
		q := url.Values{}
		if kept != nil {
			c, err := openCheckpoint(kept, verifier)
			if err != nil {
				fmt.Fprintf(stderr, "solitaire: -checkpoint: %v\n", err)
				return 1
			}
			q.Set("tree_size", strconv.FormatInt(c.Size, 10))
		}
		b, err := fetch(*server, *token, q, "v1", "games", gameID, "proof")
		if err == nil {
			err = json.Unmarshal(b, &p)
		}
		if err != nil {
			fmt.Fprintf(stderr, "solitaire: %v\n", err)
			return 1
		}
	}

	a := domain.Audit(gameID, recs, salt)
	ok := a.FirstBroken() == 0
	fmt.Fprintf(stdout, "game %s: %d events, head %s\n", gameID, a.Events, a.HeadHash)
	fmt.Fprintf(stdout, "chain:      %s\n", verdict(a.ChainOK, a.ChainBrokenAt, ""))
	fmt.Fprintf(stdout, "rules:      %s\n", verdict(a.ReplayOK, a.ReplayBrokenAt, a.ReplayProblem))
	switch {
	case a.CommitmentOK == nil:
		fmt.Fprintf(stdout, "commitment: not checked (give -salt)\n")
	case *a.CommitmentOK:
		fmt.Fprintf(stdout, "commitment: ok (%s)\n", a.Commitment)
	default:
		ok = false
		fmt.Fprintf(stdout, "commitment: MISMATCH (%s)\n", a.Commitment)
	}
	leafOK, leafMsg := checkLeaf(gameID, *owner, recs, a, p)
	ok = ok && leafOK
	fmt.Fprintf(stdout, "leaf:       %s\n", leafMsg)
	cpText := []byte(p.Checkpoint)
	if kept != nil {
		cpText = kept
	}
	inclOK, inclMsg, cpMsg := checkInclusion(p, cpText, verifier)
	ok = ok && inclOK
	fmt.Fprintf(stdout, "inclusion:  %s\n", inclMsg)
	fmt.Fprintf(stdout, "checkpoint: %s\n", cpMsg)
	if !ok {
		return 1
	}
	return 0
}

// checkLeaf compares the proof's leaf with the canonical record the log
// gives (app.LeafFromLog).
func checkLeaf(gameID, owner string, recs []domain.RecordedEvent, a domain.AuditReport, p logProof) (bool, string) {
	raw, err := base64.StdEncoding.DecodeString(p.Leaf)
	if err != nil {
		return false, "BROKEN: the proof's leaf is not base64"
	}
	got, err := app.ParseLeaf(raw)
	if err != nil {
		return false, "BROKEN: " + err.Error()
	}
	if owner == "" {
		owner = got.Owner
	}
	want, err := app.LeafFromLog(gameID, owner, recs, a)
	if err != nil {
		return false, "BROKEN: " + err.Error()
	}
	wantRaw, err := app.EncodeLeaf(want)
	if err != nil {
		return false, "BROKEN: " + err.Error()
	}
	if !bytes.Equal(raw, wantRaw) {
		return false, "MISMATCH: the logged record is not this game's: " + leafDiff(got, want)
	}
	return true, fmt.Sprintf("ok (index %d: %s, %d moves, owner %s)", p.LeafIndex, got.Status, got.Moves, got.Owner)
}

// leafDiff names the fields in which two leaves differ.
func leafDiff(got, want app.Leaf) string {
	var g, w map[string]any
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	_ = json.Unmarshal(gb, &g)
	_ = json.Unmarshal(wb, &w)
	var diff []string
	for k, v := range w {
		gv, _ := json.Marshal(g[k])
		wv, _ := json.Marshal(v)
		if !bytes.Equal(gv, wv) {
			diff = append(diff, fmt.Sprintf("%s is %s in the log, %s in this export", k, gv, wv))
		}
	}
	if len(diff) == 0 {
		return "not in canonical form"
	}
	slices.Sort(diff)
	return strings.Join(diff, "; ")
}

// checkInclusion checks the proof against the signed checkpoint cp.
func checkInclusion(p logProof, cp []byte, v note.Verifier) (ok bool, inclusion, checkpoint string) {
	c, err := openCheckpoint(cp, v)
	if err != nil {
		return false, "not checked", "BROKEN: " + err.Error()
	}
	checkpoint = fmt.Sprintf("ok (%s, %d leaves, signed by %s)", c.Origin, c.Size, v.Name())
	if p.TreeSize != c.Size {
		return false, fmt.Sprintf("BROKEN: the proof is against %d leaves, the checkpoint has %d (fetch one with -server and -checkpoint)",
			p.TreeSize, c.Size), checkpoint
	}
	leaf, err := base64.StdEncoding.DecodeString(p.Leaf)
	if err != nil {
		return false, "BROKEN: the leaf is not base64", checkpoint
	}
	proof, err := parseHashes(p.Proof)
	if err != nil {
		return false, "BROKEN: " + err.Error(), checkpoint
	}
	if err := tlog.CheckRecord(proof, c.Size, c.Root, p.LeafIndex, tlog.RecordHash(leaf)); err != nil {
		return false, fmt.Sprintf("BROKEN: leaf %d is not in the tree of %d leaves the checkpoint signs", p.LeafIndex, c.Size), checkpoint
	}
	return true, fmt.Sprintf("ok (leaf %d of %d, %d hashes)", p.LeafIndex, c.Size, len(proof)), checkpoint
}

func parseHashes(hs []string) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(hs))
	for i, s := range hs {
		h, err := tlog.ParseHash(s)
		if err != nil {
			return nil, fmt.Errorf("proof hash %d: %v", i, err)
		}
		out[i] = h
	}
	return out, nil
}

// openCheckpoint checks a signed checkpoint's signature with v and parses
// its body; the origin must be the key's name (C2SP tlog-checkpoint).
func openCheckpoint(msg []byte, v note.Verifier) (app.Checkpoint, error) {
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return app.Checkpoint{}, fmt.Errorf("the checkpoint's signature does not verify with %s's key: %v", v.Name(), err)
	}
	c, err := app.ParseCheckpoint([]byte(n.Text))
	if err != nil {
		return app.Checkpoint{}, err
	}
	if c.Origin != v.Name() {
		return app.Checkpoint{}, fmt.Errorf("the checkpoint's origin %q is not the key's name %q", c.Origin, v.Name())
	}
	return c, nil
}

// keyedFlags is the flag set of a command that checks the log's
// signatures (verify, verify-log, verify-leaderboard): each takes the log's
// verifier key as -key, with one wording, and is bad usage without it.
type keyedFlags struct {
	*flag.FlagSet
	key    *string
	stderr io.Writer
}

// newKeyedFlags is the flag set of the command name, with -key; its
// messages go to stderr.
func newKeyedFlags(name string, stderr io.Writer) keyedFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	key := fs.String("key", "", "the log's verifier key (GET /v1/log/key), or a file holding it (required)")
	return keyedFlags{FlagSet: fs, key: key, stderr: stderr}
}

// parse parses args, which must give n positional arguments and -key, and
// reads the verifier of -key; fits, when not nil, is the command's own
// check that its parsed flags go together. On bad usage or a key that does
// not read it says why on stderr and returns exit status 2, else 0.
func (k keyedFlags) parse(args []string, n int, fits func() bool) ([]string, note.Verifier, int) {
	pos, err := parse(k.FlagSet, args)
	if err != nil || len(pos) != n || *k.key == "" || (fits != nil && !fits()) {
		fmt.Fprint(k.stderr, usage)
		return nil, nil, 2
	}
	verifier, err := readVerifier(*k.key)
	if err != nil {
		fmt.Fprintf(k.stderr, "solitaire: -key: %v\n", err)
		return nil, nil, 2
	}
	return pos, verifier, 0
}

// readVerifier reads a note verifier key given as text or as a file.
func readVerifier(arg string) (note.Verifier, error) {
	text := arg
	if !strings.Contains(arg, "+") {
		b, err := os.ReadFile(arg)
		if err != nil {
			return nil, err
		}
		text = string(b)
	}
	return note.NewVerifier(strings.TrimSpace(text))
}

// verifyLog checks that checkpoint NEW extends checkpoint OLD: both signed
// by the key, and the older tree a prefix of the newer (RFC 6962 §2.1.2),
// proven from the server's hash tiles (C2SP tlog-tiles below /v1/log).
func verifyLog(args []string, stdout, stderr io.Writer) int {
	fs := newKeyedFlags("verify-log", stderr)
	server := fs.String("server", "", "read the tree's hash tiles from this server, C2SP tlog-tiles below URL/v1/log (needed unless the sizes are equal)")
	pos, verifier, code := fs.parse(args, 2, nil)
	if code != 0 {
		return code
	}
	var cps [2]app.Checkpoint
	for i, name := range pos {
		b, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintf(stderr, "solitaire: %v\n", err)
			return 2
		}
		if cps[i], err = openCheckpoint(b, verifier); err != nil {
			fmt.Fprintf(stdout, "%s: BROKEN: %v\n", name, err)
			return 1
		}
		fmt.Fprintf(stdout, "%s: ok (%s, %d leaves)\n", name, cps[i].Origin, cps[i].Size)
	}
	old, cur := cps[0], cps[1]
	switch {
	case cur.Size < old.Size:
		fmt.Fprintf(stdout, "consistency: BROKEN: the newer checkpoint has %d leaves, fewer than the older's %d: the log was rolled back\n",
			cur.Size, old.Size)
		return 1
	case cur.Size == old.Size:
		if cur.Root != old.Root {
			fmt.Fprintf(stdout, "consistency: BROKEN: two different trees of %d leaves signed by one key: the log forked\n", cur.Size)
			return 1
		}
		fmt.Fprintf(stdout, "consistency: ok (the same tree)\n")
		return 0
	case old.Size == 0:
		fmt.Fprintf(stdout, "consistency: ok (every tree extends the empty one)\n")
		return 0
	case *server == "":
		fmt.Fprintf(stderr, "solitaire: give -server to prove %d leaves a prefix of %d\n", old.Size, cur.Size)
		return 2
	}
	tr := &tileFetcher{base: *server}
	thr := tlog.TileHashReader(tlog.Tree{N: cur.Size, Hash: cur.Root}, tr)
	proof, err := tlog.ProveTree(cur.Size, old.Size, thr)
	if err != nil {
		fmt.Fprintf(stdout, "consistency: BROKEN: the server's tiles do not give the newer tree: %v\n", err)
		return 1
	}
	if err := tlog.CheckTree(proof, cur.Size, cur.Root, old.Size, old.Root); err != nil {
		fmt.Fprintf(stdout, "consistency: BROKEN: the tree of %d leaves is not a prefix of the tree of %d: the log was rewritten or forked\n",
			old.Size, cur.Size)
		return 1
	}
	fmt.Fprintf(stdout, "consistency: ok (%d leaves are a prefix of %d, %d hashes)\n", old.Size, cur.Size, len(proof))
	return 0
}

// tileFetcher reads tiles from a server's log prefix, /v1/log, in the C2SP
// tlog-tiles layout (tlog.TileReader); tlog.TileHashReader checks them
// against the tree.
type tileFetcher struct{ base string }

func (f *tileFetcher) Height() int { return 8 }

func (f *tileFetcher) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		segs := append([]string{"v1", "log"}, strings.Split(c2spTilePath(t), "/")...)
		b, err := fetch(f.base, "", nil, segs...)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

func (f *tileFetcher) SaveTiles([]tlog.Tile, [][]byte) {}

// c2spTilePath is tile t's path in the C2SP tlog-tiles layout
// (https://c2sp.org/tlog-tiles), t of height 8: "tile/L/N[.p/W]" for a
// hash tile, "tile/entries/N[.p/W]" for the leaves (t.L = -1); N and
// .p/W are spelled as in t.Path(), the Go checksum database's
// "tile/8/L/N[.p/W]".
func c2spTilePath(t tlog.Tile) string {
	if t.L < 0 {
		return "tile/entries/" + strings.TrimPrefix(t.Path(), "tile/8/data/")
	}
	return "tile/" + strings.TrimPrefix(t.Path(), "tile/8/")
}

// fetch GETs base joined with path segments and query, with a bearer
// token if given, and returns the body of a 200.
func fetch(base, token string, q url.Values, path ...string) ([]byte, error) {
	return fetchAs(base, token, "", q, path...)
}

// fetchAs is fetch asking for media type accept ("" for the server's
// default).
func fetchAs(base, token, accept string, q url.Values, path ...string) ([]byte, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%q is not an http(s) URL", base)
	}
	u = u.JoinPath(path...)
	u.RawQuery = q.Encode()
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s\n%s", u, resp.Status, bytes.TrimSpace(body[:min(len(body), 4096)]))
	}
	return body, nil
}
