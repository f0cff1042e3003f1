package api

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain/app"
)

// CodeNotLogged is the problem code of a proof asked for a game that has
// no leaf in the transparency log yet: 404 while it is in progress, until
// its competition closes for a game on a shared deal (RULES R6.6), or,
// with Retry-After, in the second after it ended, before the sequencer
// appended it.
const CodeNotLogged = "not_logged"

// mimeText is the type of checkpoints and keys (C2SP signed notes are
// UTF-8 text); mimeTile the type of tiles.
const (
	mimeText = "text/plain; charset=utf-8"
	mimeTile = "application/octet-stream"
)

// LogProof is a finished game's leaf in the transparency log and the
// proof that the log's tree contains it (GET /v1/games/{id}/proof). To
// check it: the leaf hash is SHA-256(0x00 || leaf bytes) (RFC 6962 §2.1);
// hashing it up with proof, by leaf_index within tree_size, must give the
// root of a checkpoint of tree_size leaves signed by the key of GET
// /v1/log/key. `solitaire verify` does all of it, and checks that the
// leaf is the canonical record of the game's exported log.
type LogProof struct {
	GameID     string   `json:"game_id"`                                       // the game
	LeafIndex  int64    `json:"leaf_index" minimum:"0"`                        // the leaf's position in the log, 0-based
	TreeSize   int64    `json:"tree_size" minimum:"1"`                         // leaves in the tree the proof is against
	Leaf       string   `json:"leaf" format:"byte"`                            // the canonical leaf record (one line of JSON, docs/transparency.md), base64
	Proof      []string `json:"proof" format:"byte"`                           // RFC 6962 audit path, leaf to root: at most ⌈log2 tree_size⌉ hashes, each 32 bytes in base64
	Checkpoint string   `json:"checkpoint" example:"solitaire.example/v1/log"` // the latest signed checkpoint (C2SP tlog-checkpoint in a signed note); its size is tree_size unless tree_size was asked for
} // @name LogProof

// LogConsistency is the proof that an older tree of the log is a prefix
// of a newer one (GET /v1/log/consistency): RFC 6962 §2.1.2.
type LogConsistency struct {
	Old     int64    `json:"old" minimum:"1"`        // leaves in the older tree
	New     int64    `json:"new" minimum:"1"`        // leaves in the newer tree
	OldRoot string   `json:"old_root" format:"byte"` // the older tree's root hash, base64
	NewRoot string   `json:"new_root" format:"byte"` // the newer tree's root hash, base64
	Proof   []string `json:"proof" format:"byte"`    // the consistency proof's hashes, base64
} // @name LogConsistency

// logRoutes adds the transparency log's routes: public, no token needed.
func (s *server) logRoutes(v1 *gin.RouterGroup) {
	v1.GET("/log/checkpoint", s.handle(s.logCheckpoint))
	v1.GET("/log/key", s.handle(s.logKey))
	v1.GET("/log/consistency", s.handle(s.logConsistency))
	// Tiles in two layouts (docs/transparency.md), one route per number
	// of segments after the level: C2SP tlog-tiles, hash tiles and entry
	// bundles, and the Go checksum database's layout under tile/8/ (a
	// C2SP level 8 never exists: maxTileLevel in persistence).
	for i, h := range []func(*gin.Context) reply{s.logTile, s.logTile2, s.logTile3, s.logTile4} {
		v1.GET("/log/tile/:level"+tileSegments[i], s.handle(h))
	}
	for i, h := range []func(*gin.Context) reply{s.logEntries, s.logEntries2, s.logEntries3, s.logEntries4} {
		v1.GET("/log/tile/entries"+tileSegments[i], s.handle(h))
	}
	for i, h := range []func(*gin.Context) reply{s.logSumDBTile, s.logSumDBTile2, s.logSumDBTile3, s.logSumDBTile4} {
		v1.GET("/log/tile/8/:level"+tileSegments[i], s.handle(h))
	}
	v1.GET("/games/:id/proof", s.optionalAuth, s.handle(s.gameProof))
}

// optionalAuth authenticates a request that sends a token (a bad one gets
// 401) and lets one without through as nobody's.
func (s *server) optionalAuth(c *gin.Context) {
	if c.GetHeader("Authorization") == "" {
		c.Next()
		return
	}
	s.auth(c)
}

// logCheckpoint serves the latest checkpoint.
//
//	@Summary		The log's latest checkpoint
//	@Description	The latest signed checkpoint of the transparency log of finished games: a C2SP tlog-checkpoint (origin line, tree size, base64 RFC 6962 root hash) in a C2SP signed note, signed with Ed25519 by the key of GET /v1/log/key. A new one is signed at most once a second while games wait for their leaves. Keep the ones you see: `solitaire verify-log OLD NEW` proves a later one extends an earlier one. No token needed.
//	@Tags			log
//	@Produce		plain
//	@Success		200	{string}	string	"the signed note"
//	@Failure		500	{object}	Problem
//	@ID				logCheckpoint
//	@Router			/v1/log/checkpoint [get]
func (s *server) logCheckpoint(c *gin.Context) reply {
	b, err := s.cfg.Log.Checkpoint(c.Request.Context())
	if err != nil {
		return s.fail(c, err)
	}
	return reply{status: http.StatusOK, contentType: mimeText, body: b}.with("Cache-Control", "no-cache")
}

// logKey serves the checkpoints' public key.
//
//	@Summary		The log's public key
//	@Description	The note verifier key of the checkpoints' signer ("name+hash+key", golang.org/x/mod/sumdb/note; Ed25519), followed by a newline. Its name is the log's origin. Get it once, from a source you trust, and keep it. No token needed.
//	@Tags			log
//	@Produce		plain
//	@Success		200	{string}	string	"the verifier key"
//	@ID				logKey
//	@Router			/v1/log/key [get]
func (s *server) logKey(c *gin.Context) reply {
	return reply{status: http.StatusOK, contentType: mimeText, body: []byte(s.cfg.Log.VerifierKey() + "\n")}
}

// logConsistency serves a consistency proof.
//
//	@Summary		Prove an older tree a prefix of a newer one
//	@Description	The RFC 6962 §2.1.2 consistency proof that the log's tree of `old` leaves is a prefix of its tree of `new` leaves (1 ≤ old ≤ new ≤ the latest checkpoint's size), with both roots. Check the roots against checkpoints you kept; a server that rewrote or dropped a leaf cannot give a proof that checks. No token needed.
//	@Tags			log
//	@Produce		json
//	@Param			old	query		int	true	"leaves in the older tree"	minimum(1)
//	@Param			new	query		int	true	"leaves in the newer tree"	minimum(1)
//	@Success		200	{object}	LogConsistency
//	@Failure		400	{object}	Problem	"old or new missing or not a whole number ≥ 1"
//	@Failure		404	{object}	Problem	"no such trees: old > new, or new beyond the latest checkpoint"
//	@Failure		500	{object}	Problem
//	@ID				logConsistency
//	@Router			/v1/log/consistency [get]
func (s *server) logConsistency(c *gin.Context) reply {
	old, err := treeSizeParam(c, "old", true)
	if err != nil {
		return s.fail(c, err)
	}
	newSize, err := treeSizeParam(c, "new", true)
	if err != nil {
		return s.fail(c, err)
	}
	p, err := s.cfg.Log.Consistency(c.Request.Context(), old, newSize)
	if errors.Is(err, app.ErrBadTreeSize) {
		return s.fail(c, noTree("want old ≤ new ≤ the size of the latest checkpoint"))
	}
	if err != nil {
		return s.fail(c, err)
	}
	return s.jsonReply(http.StatusOK, LogConsistency{Old: p.Old, New: p.New,
		OldRoot: b64(p.OldRoot), NewRoot: b64(p.NewRoot), Proof: b64s(p.Proof)})
}

// treeSizeParam reads a tree size from the query: a whole number 1..2^62;
// absent is 0, or an error when required.
func treeSizeParam(c *gin.Context, name string, required bool) (int64, error) {
	v, ok := c.GetQuery(name)
	if !ok && !required {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > 1<<62 {
		return 0, badParam(name, name+" must be a whole number of leaves, 1 or more")
	}
	return n, nil
}

// tileSegments are the route patterns of a tile index: one to four path
// segments (an index of up to four three-digit groups, or three and a
// partial width), as both layouts spell it after the level: tile 1234567
// is x001/x234/567, its partial tile of 5 x001/x234/567.p/5.
var tileSegments = []string{"/:p1", "/:p1/:p2", "/:p1/:p2/:p3", "/:p1/:p2/:p3/:p4"}

// logTile serves a C2SP hash tile whose index is one segment.
//
//	@Summary		A hash tile of the log (C2SP tlog-tiles)
//	@Description	A tile of the log's Merkle tree in the C2SP tlog-tiles layout (https://c2sp.org/tlog-tiles), with /v1/log as the log's prefix: `tile/L/N` is the N-th tile at level L, 256 hashes of 32 bytes concatenated (level 0: the leaves' RFC 6962 hashes; level L: the roots of full tiles of level L−1). N is written in three-digit groups, all but the last prefixed `x` (tile 1234067 is `x001/x234/067`: see the routes with more path parameters). A partial tile (the tree's right edge) has `.p/W` after its index and W hashes (1 ≤ W ≤ 255). Full tiles never change (`Cache-Control: immutable`), partial ones are `no-cache`. Level 8 and above never exist: `tile/8/...` is the Go checksum database's layout (GET /v1/log/tile/8/{level}/{p1}). A malformed path, or a tile beyond the latest checkpoint's tree, is 404. No token needed.
//	@Tags			log
//	@Produce		octet-stream
//	@Param			level	path		int		true	"level in the tiling, 0 to 7 for any tree of int64 leaves"	minimum(0)	maximum(63)
//	@Param			p1		path		string	true	"the tile index, three digits (NNN)"
//	@Success		200		{string}	string	"the tile's hashes"
//	@Failure		404		{object}	Problem	"malformed path, or beyond the tree"
//	@Failure		500		{object}	Problem
//	@ID				logTile
//	@Router			/v1/log/tile/{level}/{p1} [get]
func (s *server) logTile(c *gin.Context) reply { return s.logTileAt(c, c.Param("level")+"/") }

// logTile2 serves a C2SP hash tile whose path after the level has two
// segments.
//
//	@Summary		A hash tile of the log (two index segments)
//	@Description	As GET /v1/log/tile/{level}/{p1}, for paths like `0/000.p/5` (a partial tile of 5 hashes) or `0/x001/234` (the full tile of index 1234). No token needed.
//	@Tags			log
//	@Produce		octet-stream
//	@Param			level	path		int		true	"level in the tiling"	minimum(0)	maximum(63)
//	@Param			p1		path		string	true	"first segment: NNN.p, or xNNN"
//	@Param			p2		path		string	true	"second segment: the width W, or NNN"
//	@Success		200		{string}	string	"the tile's hashes"
//	@Failure		404		{object}	Problem	"malformed path, or beyond the tree"
//	@Failure		500		{object}	Problem
//	@ID				logTile2
//	@Router			/v1/log/tile/{level}/{p1}/{p2} [get]
func (s *server) logTile2(c *gin.Context) reply { return s.logTile(c) }

// logTile3 serves a C2SP hash tile whose path after the level has three
// segments.
//
//	@Summary		A hash tile of the log (three index segments)
//	@Description	As GET /v1/log/tile/{level}/{p1}, for paths like `0/x001/234.p/7` or `0/x001/x234/567`. No token needed.
//	@Tags			log
//	@Produce		octet-stream
//	@Param			level	path		int		true	"level in the tiling"	minimum(0)	maximum(63)
//	@Param			p1		path		string	true	"first segment"
//	@Param			p2		path		string	true	"second segment"
//	@Param			p3		path		string	true	"third segment"
//	@Success		200		{string}	string	"the tile's hashes"
//	@Failure		404		{object}	Problem	"malformed path, or beyond the tree"
//	@Failure		500		{object}	Problem
//	@ID				logTile3
//	@Router			/v1/log/tile/{level}/{p1}/{p2}/{p3} [get]
func (s *server) logTile3(c *gin.Context) reply { return s.logTile(c) }

// logTile4 serves a C2SP hash tile whose path after the level has four
// segments.
//
//	@Summary		A hash tile of the log (four index segments)
//	@Description	As GET /v1/log/tile/{level}/{p1}, for paths like `0/x001/x234/567.p/9` or `0/x001/x234/x567/890`. No token needed.
//	@Tags			log
//	@Produce		octet-stream
//	@Param			level	path		int		true	"level in the tiling"	minimum(0)	maximum(63)
//	@Param			p1		path		string	true	"first segment"
//	@Param			p2		path		string	true	"second segment"
//	@Param			p3		path		string	true	"third segment"
//	@Param			p4		path		string	true	"fourth segment"
//	@Success		200		{string}	string	"the tile's hashes"
//	@Failure		404		{object}	Problem	"malformed path, or beyond the tree"
//	@Failure		500		{object}	Problem
//	@ID				logTile4
//	@Router			/v1/log/tile/{level}/{p1}/{p2}/{p3}/{p4} [get]
func (s *server) logTile4(c *gin.Context) reply { return s.logTile(c) }

// logEntries serves a C2SP entry bundle whose index is one segment.
//
//	@Summary		An entry bundle of the log (C2SP tlog-tiles)
//	@Description	The leaves of the log in the C2SP tlog-tiles layout (https://c2sp.org/tlog-tiles), with /v1/log as the log's prefix: `tile/entries/N` holds leaves 256·N to 256·N+255, each as its length (a big-endian uint16) followed by the leaf record, exactly the bytes its RFC 6962 leaf hash covers (SHA-256 of 0x00 and the record: the level-0 hash tile's entry). A record is one line of JSON ending in a newline (docs/transparency.md), at most 4096 bytes. N is written as in hash tiles (`x001/x234/067`: see the routes with more path parameters); a partial bundle (the tree's right edge) has `.p/W` after its index and W entries (1 ≤ W ≤ 255). Full bundles never change (`Cache-Control: immutable`), partial ones are `no-cache`. A malformed path, or a bundle beyond the latest checkpoint's tree, is 404. No token needed.
//	@Tags			log
//	@Produce		octet-stream
//	@Param			p1	path		string	true	"the bundle index, three digits (NNN)"
//	@Success		200	{string}	string	"the entry bundle"
//	@Failure		404	{object}	Problem	"malformed path, or beyond the tree"
//	@Failure		500	{object}	Problem
//	@ID				logEntries
//	@Router			/v1/log/tile/entries/{p1} [get]
func (s *server) logEntries(c *gin.Context) reply { return s.logTileAt(c, "entries/") }

// logEntries2 serves a C2SP entry bundle whose path has two segments.
//
//	@Summary		An entry bundle of the log (two index segments)
//	@Description	As GET /v1/log/tile/entries/{p1}, for paths like `000.p/5` (a partial bundle of 5 entries) or `x001/234` (the full bundle of index 1234). No token needed.
//	@Tags			log
//	@Produce		octet-stream
//	@Param			p1	path		string	true	"first segment: NNN.p, or xNNN"
//	@Param			p2	path		string	true	"second segment: the width W, or NNN"
//	@Success		200	{string}	string	"the entry bundle"
//	@Failure		404	{object}	Problem	"malformed path, or beyond the tree"
//	@Failure		500	{object}	Problem
//	@ID				logEntries2
//	@Router			/v1/log/tile/entries/{p1}/{p2} [get]
func (s *server) logEntries2(c *gin.Context) reply { return s.logEntries(c) }

// logEntries3 serves a C2SP entry bundle whose path has three segments.
//
//	@Summary		An entry bundle of the log (three index segments)
//	@Description	As GET /v1/log/tile/entries/{p1}, for paths like `x001/234.p/7` or `x001/x234/567`. No token needed.
//	@Tags			log
//	@Produce		octet-stream
//	@Param			p1	path		string	true	"first segment"
//	@Param			p2	path		string	true	"second segment"
//	@Param			p3	path		string	true	"third segment"
//	@Success		200	{string}	string	"the entry bundle"
//	@Failure		404	{object}	Problem	"malformed path, or beyond the tree"
//	@Failure		500	{object}	Problem
//	@ID				logEntries3
//	@Router			/v1/log/tile/entries/{p1}/{p2}/{p3} [get]
func (s *server) logEntries3(c *gin.Context) reply { return s.logEntries(c) }

// logEntries4 serves a C2SP entry bundle whose path has four segments.
//
//	@Summary		An entry bundle of the log (four index segments)
//	@Description	As GET /v1/log/tile/entries/{p1}, for paths like `x001/x234/567.p/9` or `x001/x234/x567/890`. No token needed.
//	@Tags			log
//	@Produce		octet-stream
//	@Param			p1	path		string	true	"first segment"
//	@Param			p2	path		string	true	"second segment"
//	@Param			p3	path		string	true	"third segment"
//	@Param			p4	path		string	true	"fourth segment"
//	@Success		200	{string}	string	"the entry bundle"
//	@Failure		404	{object}	Problem	"malformed path, or beyond the tree"
//	@Failure		500	{object}	Problem
//	@ID				logEntries4
//	@Router			/v1/log/tile/entries/{p1}/{p2}/{p3}/{p4} [get]
func (s *server) logEntries4(c *gin.Context) reply { return s.logEntries(c) }

// logSumDBTile serves a tile of the Go checksum database's layout whose
// index is one segment.
//
//	@Summary		A tile of the log (Go checksum database layout)
//	@Description	The log's tiles in the Go checksum database's layout (https://research.swtch.com/tlog#serving_tiles; golang.org/x/mod/sumdb/tlog Tile.Path, height 8), which tlog.TileHashReader reads: `8/L/N` is the hash tile of GET /v1/log/tile/{level}/{p1} (the same bytes), `8/data/N` the leaf records of leaves 256·N.. concatenated, without length prefixes (each record one line of JSON ending in a newline). N and `.p/W` are as in the C2SP layout (a partial width 1..255). Full tiles never change (`Cache-Control: immutable`), partial ones are `no-cache`. A malformed path, or a tile beyond the latest checkpoint's tree, is 404. No token needed.
//	@Tags			log
//	@Produce		octet-stream
//	@Param			level	path		string	true	"level in the tiling (0, 1, ...), or data for leaf records"
//	@Param			p1		path		string	true	"the tile index, three digits (NNN)"
//	@Success		200		{string}	string	"the tile's bytes"
//	@Failure		404		{object}	Problem	"malformed path, or beyond the tree"
//	@Failure		500		{object}	Problem
//	@ID				logSumDBTile
//	@Router			/v1/log/tile/8/{level}/{p1} [get]
func (s *server) logSumDBTile(c *gin.Context) reply { return s.logTileAt(c, "8/"+c.Param("level")+"/") }

// logSumDBTile2 serves a tile of the Go checksum database's layout whose
// path after the level has two segments.
//
//	@Summary		A tile of the log (Go checksum database layout, two index segments)
//	@Description	As GET /v1/log/tile/8/{level}/{p1}, for paths like `8/0/000.p/5` (a partial tile of 5 hashes) or `8/data/x001/234` (the records of the data tile of index 1234). No token needed.
//	@Tags			log
//	@Produce		octet-stream
//	@Param			level	path		string	true	"level in the tiling (0, 1, ...), or data for leaf records"
//	@Param			p1		path		string	true	"first segment: NNN.p, or xNNN"
//	@Param			p2		path		string	true	"second segment: the width W, or NNN"
//	@Success		200		{string}	string	"the tile's bytes"
//	@Failure		404		{object}	Problem	"malformed path, or beyond the tree"
//	@Failure		500		{object}	Problem
//	@ID				logSumDBTile2
//	@Router			/v1/log/tile/8/{level}/{p1}/{p2} [get]
func (s *server) logSumDBTile2(c *gin.Context) reply { return s.logSumDBTile(c) }

// logSumDBTile3 serves a tile of the Go checksum database's layout whose
// path after the level has three segments.
//
//	@Summary		A tile of the log (Go checksum database layout, three index segments)
//	@Description	As GET /v1/log/tile/8/{level}/{p1}, for paths like `8/0/x001/234.p/7` or `8/0/x001/x234/567`. No token needed.
//	@Tags			log
//	@Produce		octet-stream
//	@Param			level	path		string	true	"level in the tiling (0, 1, ...), or data for leaf records"
//	@Param			p1		path		string	true	"first segment"
//	@Param			p2		path		string	true	"second segment"
//	@Param			p3		path		string	true	"third segment"
//	@Success		200		{string}	string	"the tile's bytes"
//	@Failure		404		{object}	Problem	"malformed path, or beyond the tree"
//	@Failure		500		{object}	Problem
//	@ID				logSumDBTile3
//	@Router			/v1/log/tile/8/{level}/{p1}/{p2}/{p3} [get]
func (s *server) logSumDBTile3(c *gin.Context) reply { return s.logSumDBTile(c) }

// logSumDBTile4 serves a tile of the Go checksum database's layout whose
// path after the level has four segments.
//
//	@Summary		A tile of the log (Go checksum database layout, four index segments)
//	@Description	As GET /v1/log/tile/8/{level}/{p1}, for paths like `8/0/x001/x234/567.p/9`. No token needed.
//	@Tags			log
//	@Produce		octet-stream
//	@Param			level	path		string	true	"level in the tiling (0, 1, ...), or data for leaf records"
//	@Param			p1		path		string	true	"first segment"
//	@Param			p2		path		string	true	"second segment"
//	@Param			p3		path		string	true	"third segment"
//	@Param			p4		path		string	true	"fourth segment"
//	@Success		200		{string}	string	"the tile's bytes"
//	@Failure		404		{object}	Problem	"malformed path, or beyond the tree"
//	@Failure		500		{object}	Problem
//	@ID				logSumDBTile4
//	@Router			/v1/log/tile/8/{level}/{p1}/{p2}/{p3}/{p4} [get]
func (s *server) logSumDBTile4(c *gin.Context) reply { return s.logSumDBTile(c) }

// logTileAt serves the tile whose path below /v1/log/tile/ is prefix
// followed by the route's index segments (Log.Tile reads both layouts).
func (s *server) logTileAt(c *gin.Context, prefix string) reply {
	segs := make([]string, 0, 4)
	for _, p := range []string{"p1", "p2", "p3", "p4"} {
		if v := c.Param(p); v != "" {
			segs = append(segs, v)
		}
	}
	data, full, err := s.cfg.Log.Tile(c.Request.Context(), prefix+strings.Join(segs, "/"))
	if errors.Is(err, app.ErrNoTile) {
		return s.fail(c, noTree("no such tile: want tile/LEVEL/N[.p/W] or tile/entries/N[.p/W] (C2SP tlog-tiles), or tile/8/LEVEL/N[.p/W], within the latest checkpoint's tree"))
	}
	if err != nil {
		return s.fail(c, err)
	}
	r := reply{status: http.StatusOK, contentType: mimeTile, body: data}
	if full {
		return r.with("Cache-Control", "public, max-age=31536000, immutable")
	}
	return r.with("Cache-Control", "no-cache")
}

// gameProof serves a finished game's leaf and inclusion proof.
//
//	@Summary		A game's leaf and inclusion proof
//	@Description	The game's leaf in the transparency log and the RFC 6962 proof that the tree of the latest checkpoint (or of `tree_size` leaves, to check against a checkpoint you kept) contains it. Every game that ends (won, lost, expired) gets one leaf, within about a second of its end, or for a game on a shared deal (duel, daily deal) when its competition closes (RULES R6.6: the leaf's head hash could otherwise be tried against the few card orders a rival has not seen); until then 404 not_logged (with Retry-After when it is a matter of a second).
//	@Description	Readable where the game is (RULES R6.4, R6.6): by anyone once it has ended, except a game on a shared deal (duel, daily deal) before its competition closes; always by its owner. No token is needed; send one to read your own game. `solitaire verify GAME.ndjson -proof PROOF.json -key KEY` checks it offline.
//	@Tags			log
//	@Produce		json
//	@Param			id			path		string	true	"game id"
//	@Param			tree_size	query		int		false	"prove against the tree of this many leaves (default: the latest checkpoint's)"	minimum(1)
//	@Success		200			{object}	LogProof
//	@Failure		400			{object}	Problem	"tree_size not a whole number ≥ 1"
//	@Failure		401			{object}	Problem	"a token was sent and is not valid"
//	@Failure		404			{object}	Problem	"no such game, not readable by the caller, no leaf yet (not_logged), or no tree of tree_size leaves holding it"
//	@Header			404			{integer}	Retry-After	"not_logged of a game that ended moments ago: its leaf is appended within about a second"
//	@Failure		500			{object}	Problem
//	@ID				gameProof
//	@Router			/v1/games/{id}/proof [get]
func (s *server) gameProof(c *gin.Context) reply {
	id, err := gameID(c)
	if err != nil {
		return s.fail(c, err)
	}
	size, err := treeSizeParam(c, "tree_size", false)
	if err != nil {
		return s.fail(c, err)
	}
	caller := ""
	if p := playerOf(c); p != nil {
		caller = p.ID
	}
	ctx := c.Request.Context()
	// Whether the caller may read the game is the service's one rule
	// (R6.4, R6.6), never decided here.
	game, _, err := s.cfg.Games.Get(ctx, caller, id)
	if err != nil {
		return s.fail(c, err)
	}
	p, err := s.cfg.Log.Proof(ctx, id, size)
	switch {
	case errors.Is(err, app.ErrNotLogged):
		detail := "the game is in progress: it gets its leaf when it ends"
		pr := newProblem(http.StatusNotFound, CodeNotLogged, detail)
		pr.Title = "Not in the log yet"
		pr.RequestID = requestIDOf(c)
		r := s.problemReply(pr)
		switch {
		case game.Status.Ended() && (game.CompetitionID != "" || game.DailyDate != ""):
			pr.Detail = "the game is on a shared deal: it gets its leaf when the duel or the day closes (RULES R6.6)"
			r = s.problemReply(pr)
		case game.Status.Ended():
			pr.Detail = "the game ended moments ago; its leaf is appended within about a second: retry"
			r = s.problemReply(pr).with("Retry-After", "1")
		}
		return r
	case errors.Is(err, app.ErrBadTreeSize):
		return s.fail(c, noTree("the log has no tree of tree_size leaves that holds this game's leaf: want the leaf's index < tree_size ≤ the latest checkpoint's size"))
	case err != nil:
		return s.fail(c, err)
	}
	return s.jsonReply(http.StatusOK, LogProof{GameID: p.GameID, LeafIndex: p.Index, TreeSize: p.TreeSize,
		Leaf: base64.StdEncoding.EncodeToString(p.Record), Proof: b64s(p.Proof), Checkpoint: string(p.Checkpoint)})
}

// noTree is the problem of a tree, or a tile, the log does not have.
func noTree(detail string) error {
	return &requestError{status: http.StatusNotFound, code: CodeNotFound, detail: detail}
}

func b64(h [32]byte) string { return base64.StdEncoding.EncodeToString(h[:]) }

func b64s(hs [][32]byte) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = b64(h)
	}
	return out
}
