package persistence_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
	"github.com/openpatience/solitaire/persistence"
	"github.com/openpatience/solitaire/persistence/pgtest"
)

// logStores are the databases the log's tests run on.
var logStores = []struct {
	name string
	open func(t *testing.T) *persistence.Store
}{{"sqlite", openSQLite}, {"postgres", openPostgres}}

// openLog opens the store's log with a new key.
func openLog(t *testing.T, s *persistence.Store) (*persistence.Log, note.Verifier) {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, "test.example/log")
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.OpenLog(t.Context(), persistence.LogConfig{Key: skey})
	if err != nil {
		t.Fatal(err)
	}
	if l.VerifierKey() != vkey {
		t.Fatalf("VerifierKey = %q, want %q", l.VerifierKey(), vkey)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return l, v
}

// endGames creates n games and resigns them (RULES R2.7: ended, lost).
func endGames(t *testing.T, s *persistence.Store, n int) []string {
	t.Helper()
	g := app.NewGames(s)
	var ids []string
	for range n {
		game, _, err := g.Create(t.Context(), app.NewGame{Owner: "p1", Variant: "klondike"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := g.Play(t.Context(), "p1", game.ID, domain.Move{Type: domain.MoveResign}, -1, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, game.ID)
	}
	return ids
}

// openCheckpoint checks a signed checkpoint with v and parses it.
func openCheckpoint(t *testing.T, msg []byte, v note.Verifier) app.Checkpoint {
	t.Helper()
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		t.Fatalf("checkpoint does not verify: %v\n%s", err, msg)
	}
	c, err := app.ParseCheckpoint([]byte(n.Text))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkInclusion verifies p against checkpoint c.
func checkInclusion(p *app.LeafProof, c app.Checkpoint) error {
	proof := make(tlog.RecordProof, len(p.Proof))
	for i, h := range p.Proof {
		proof[i] = h
	}
	return tlog.CheckRecord(proof, c.Size, c.Root, p.Index, tlog.RecordHash(p.Record))
}

// A game that ends gets exactly one leaf: the canonical record of its
// games row and head, which is also what its log alone gives; the proof
// verifies against the signed checkpoint.
func TestLogSequence(t *testing.T) {
	for _, db := range logStores {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			s := db.open(t)
			l, v := openLog(t, s)
			c0 := openCheckpoint(t, mustCheckpoint(t, l), v)
			if c0.Size != 0 || c0.Origin != "test.example/log" {
				t.Fatalf("new log's checkpoint = %+v, want size 0 of test.example/log", c0)
			}
			// A game in progress has no leaf.
			g := app.NewGames(s)
			running, _, err := g.Create(t.Context(), app.NewGame{Owner: "p1", Variant: "klondike"})
			if err != nil {
				t.Fatal(err)
			}
			ids := endGames(t, s, 5)
			if _, err := l.Proof(t.Context(), ids[0], 0); !errors.Is(err, app.ErrNotLogged) {
				t.Fatalf("proof before sequencing: %v, want ErrNotLogged", err)
			}
			n, err := l.Sequence(t.Context())
			if err != nil || n != 5 {
				t.Fatalf("Sequence = %d, %v; want 5 leaves", n, err)
			}
			if n, err := l.Sequence(t.Context()); err != nil || n != 0 {
				t.Fatalf("second Sequence = %d, %v; want 0 (no leaf twice)", n, err)
			}
			if _, err := l.Proof(t.Context(), running.ID, 0); !errors.Is(err, app.ErrNotLogged) {
				t.Fatalf("proof of a running game: %v, want ErrNotLogged", err)
			}
			c := openCheckpoint(t, mustCheckpoint(t, l), v)
			if c.Size != 5 {
				t.Fatalf("checkpoint size %d, want 5", c.Size)
			}
			seen := map[int64]bool{}
			for _, id := range ids {
				p, err := l.Proof(t.Context(), id, 0)
				if err != nil {
					t.Fatal(err)
				}
				if seen[p.Index] {
					t.Fatalf("leaf index %d twice", p.Index)
				}
				seen[p.Index] = true
				if err := checkInclusion(p, c); err != nil {
					t.Fatalf("inclusion of %s: %v", id, err)
				}
				recs, err := s.Events(t.Context(), id, 0, 0)
				if err != nil {
					t.Fatal(err)
				}
				leaf, err := app.LeafFromLog(id, "p1", recs, domain.Audit(id, recs, nil))
				if err != nil {
					t.Fatal(err)
				}
				want, _ := app.EncodeLeaf(leaf)
				if !bytes.Equal(p.Record, want) {
					t.Fatalf("leaf of %s:\n%s\nthe log gives\n%s", id, p.Record, want)
				}
				if got, err := app.ParseLeaf(p.Record); err != nil || got.Status != domain.StatusLost {
					t.Fatalf("ParseLeaf = %+v, %v", got, err)
				}
			}
			// Older tree sizes: proofs against them, and consistency.
			p, err := l.Proof(t.Context(), ids[0], 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Proof(t.Context(), ids[0], 6); !errors.Is(err, app.ErrBadTreeSize) {
				t.Fatalf("proof against size 6 of 5: %v, want ErrBadTreeSize", err)
			}
			old, err := l.Proof(t.Context(), ids[0], p.Index+1)
			if err != nil {
				t.Fatal(err)
			}
			cp, err := l.Consistency(t.Context(), p.Index+1, 5)
			if err != nil {
				t.Fatal(err)
			}
			if cp.NewRoot != c.Root {
				t.Fatal("consistency's new root is not the checkpoint's")
			}
			if err := checkInclusion(old, app.Checkpoint{Size: p.Index + 1, Root: cp.OldRoot}); err != nil {
				t.Fatalf("inclusion against the older tree: %v", err)
			}
			if err := tlog.CheckTree(treeProof(cp.Proof), 5, c.Root, cp.Old, cp.OldRoot); err != nil {
				t.Fatalf("consistency: %v", err)
			}
		})
	}
}

func mustCheckpoint(t *testing.T, l *persistence.Log) []byte {
	t.Helper()
	b, err := l.Checkpoint(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func treeProof(hs [][32]byte) tlog.TreeProof {
	p := make(tlog.TreeProof, len(hs))
	for i, h := range hs {
		p[i] = h
	}
	return p
}

// 10,000 finished games (rows inserted directly, one event each) give
// inclusion proofs of ⌈log2 n⌉ = 14 hashes: exactly 14 for every leaf of
// the left, complete subtree of 8192, at most 14 for the rest (RFC 6962
// §2.1.1), and every one verifies.
func TestLogTenThousand(t *testing.T) {
	const n = 10_000
	for _, db := range logStores {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			s := db.open(t)
			insertEnded(t, s, n)
			l, v := openLog(t, s)
			total := 0
			for {
				k, err := l.Sequence(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if k == 0 {
					break
				}
				total += k
			}
			if total != n {
				t.Fatalf("sequenced %d leaves, want %d", total, n)
			}
			c := openCheckpoint(t, mustCheckpoint(t, l), v)
			want := bits.Len(uint(n - 1)) // ⌈log2 n⌉
			if want != 14 {
				t.Fatalf("⌈log2 %d⌉ = %d", n, want)
			}
			for i := 0; i < n; i += 97 {
				id := fmt.Sprintf("g%05d", i)
				p, err := l.Proof(t.Context(), id, 0)
				if err != nil {
					t.Fatal(err)
				}
				if p.Index != int64(i) {
					t.Fatalf("%s has index %d, want %d (order finished_at, id)", id, p.Index, i)
				}
				if len(p.Proof) > want || (i < 8192 && len(p.Proof) != want) {
					t.Fatalf("proof of leaf %d has %d hashes, want %d", i, len(p.Proof), want)
				}
				if err := checkInclusion(p, c); err != nil {
					t.Fatalf("leaf %d: %v", i, err)
				}
			}
		})
	}
}

// insertEnded inserts n ended games (id g00000.., finished in that order,
// as insertGame makes them) with their logs, straight into the tables, 500
// games a statement.
func insertEnded(t *testing.T, s *persistence.Store, n int) {
	t.Helper()
	for lo := 0; lo < n; lo += 500 {
		var games, events []string
		var gargs, eargs []any
		for i := lo; i < min(lo+500, n); i++ {
			id := fmt.Sprintf("g%05d", i)
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
			g, recs := resignedGame(t, id, uint64(i), at)
			games = append(games, "(?, 'klondike', ?, '{}', 'p1', true, '1', true, ?, ?, '', '', ?, 'lost', ?, ?, NULL, ?, ?, ?, ?)")
			gargs = append(gargs, id, rulesJSON(t), g.Salt, g.Commitment, at.UnixMilli(), g.Version, g.Moves, g.ElapsedMS,
				at.UnixMilli(), at.UnixMilli(), g.Rules.Draw)
			for _, r := range recs {
				events = append(events, "(?, ?, ?, ?, ?, ?, ?)")
				eargs = append(eargs, id, r.Version, string(r.Type), r.Payload, r.OccurredAt.UnixMilli(), r.PrevHash, r.Hash)
			}
		}
		if _, err := s.DB().Exec(s.Rebind(`INSERT INTO games (id, variant, rules, options, owner, ranked, seed, has_seed,
			salt, commitment, duel_id, daily_date, created_at, status, version, moves, score, elapsed_ms, finished_at, updated_at, draw)
			VALUES `+strings.Join(games, ", ")), gargs...); err != nil {
			t.Fatal(err)
		}
		if _, err := s.DB().Exec(s.Rebind(`INSERT INTO events (game_id, version, type, payload, occurred_at, prev_hash, hash)
			VALUES `+strings.Join(events, ", ")), eargs...); err != nil {
			t.Fatal(err)
		}
	}
}

// rulesJSON is the stored form of klondike's default rules.
func rulesJSON(t testing.TB) string {
	v, err := domain.LookupVariant("klondike")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v.Defaults)
	return string(b)
}

// resignedGame is a klondike game id dealt from seed and resigned at at
// (RULES R2.7): its record with the projection, and its log, chained as
// the store chains it.
func resignedGame(t testing.TB, id string, seed uint64, at time.Time) (*app.Game, []domain.RecordedEvent) {
	t.Helper()
	v, err := domain.LookupVariant("klondike")
	if err != nil {
		t.Fatal(err)
	}
	salt := bytes.Repeat([]byte{byte(seed)}, 32)
	deal := domain.Deal(v.Defaults, seed)
	g := &app.Game{ID: id, Variant: "klondike", Rules: v.Defaults, Owner: "p1", Ranked: true, HasSeed: true,
		DealSecret: app.DealSecret{Seed: seed, Salt: salt, Commitment: domain.Commitment(deal, salt)}, CreatedAt: at}
	first := domain.DealtEvent(v.Defaults, deal, g.Commitment, at)
	first.Data.V, first.Data.Salt = domain.DealPayloadVersion, hex.EncodeToString(salt)
	s := &domain.State{}
	s.Apply(first)
	evs, _, err := domain.Decide(s, domain.Move{Type: domain.MoveResign}, at)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		s.Apply(e)
	}
	g.Project(s)
	recs, err := domain.Record(id, domain.GenesisHash, append([]domain.Event{first}, evs...))
	if err != nil {
		t.Fatal(err)
	}
	return g, recs
}

// insertGame inserts an ended (lost) klondike game of duel duelID and
// daily date daily (both may be ""), finished at (ms), with its log; b
// picks its deal.
func insertGame(t testing.TB, exec func(q string, args ...any) error, id, duelID, daily string, at int64, b byte) error {
	g, recs := resignedGame(t, id, uint64(b), time.UnixMilli(at).UTC())
	rules, _ := json.Marshal(g.Rules)
	if err := exec(`INSERT INTO games (id, variant, rules, options, owner, ranked, seed, has_seed,
		salt, commitment, duel_id, daily_date, created_at, status, version, moves, score, elapsed_ms, finished_at, updated_at, draw)
		VALUES (?, 'klondike', ?, '{}', 'p1', true, '1', true, ?, ?, ?, ?, ?, 'lost', ?, ?, NULL, ?, ?, ?, ?)`,
		id, string(rules), g.Salt, g.Commitment, duelID, daily, at, g.Version, g.Moves, g.ElapsedMS, at, at, g.Rules.Draw); err != nil {
		return err
	}
	for _, r := range recs {
		if err := exec(`INSERT INTO events (game_id, version, type, payload, occurred_at, prev_hash, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, id, r.Version, string(r.Type), r.Payload, r.OccurredAt.UnixMilli(), r.PrevHash, r.Hash); err != nil {
			return err
		}
	}
	return nil
}

// RULES R6.6: a game on a shared deal gets its leaf only once its
// competition has closed: a daily deal's after its UTC day, a duel's at
// its end or deadline; other ended games at once.
func TestR6_6_LogWaitsForTheClose(t *testing.T) {
	for _, db := range logStores {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			s := db.open(t)
			now := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
			exec := func(q string, args ...any) error {
				_, err := s.DB().Exec(s.Rebind(q), args...)
				return err
			}
			for _, d := range []struct {
				id       string
				deadline time.Time
				ended    any
			}{
				{"open", now.Add(time.Hour), nil},
				{"due", now.Add(-time.Hour), nil},
				{"ended", now.Add(time.Hour), now.Add(-time.Minute).UnixMilli()},
			} {
				if err := exec(`INSERT INTO duels (id, variant, rules, options, ranked, created_by, seed, salt, commitment,
					created_at, deadline_at, ended_at) VALUES (?, 'klondike', '{}', '{}', true, 'p1', '1', ?, 'sha256:00', 0, ?, ?)`,
					d.id, []byte{1}, d.deadline.UnixMilli(), d.ended); err != nil {
					t.Fatal(err)
				}
			}
			at := now.Add(-2 * time.Hour).UnixMilli()
			games := []struct {
				id, duel, daily string
				logged          bool
			}{
				{"plain", "", "", true},
				{"today", "", "2026-06-15", false},
				{"yesterday", "", "2026-06-14", true},
				{"duel-open", "open", "", false},
				{"duel-due", "due", "", true},
				{"duel-ended", "ended", "", true},
			}
			for i, g := range games {
				if err := insertGame(t, exec, g.id, g.duel, g.daily, at, byte(i)); err != nil {
					t.Fatal(err)
				}
			}
			skey, _, _ := note.GenerateKey(rand.Reader, "test.example/log")
			l, err := s.OpenLog(t.Context(), persistence.LogConfig{Key: skey, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			if n, err := l.Sequence(t.Context()); err != nil || n != 4 {
				t.Fatalf("Sequence = %d, %v; want 4", n, err)
			}
			for _, g := range games {
				_, err := l.Proof(t.Context(), g.id, 0)
				if logged := err == nil; logged != g.logged {
					t.Errorf("%s: logged %v (%v), want %v", g.id, logged, err, g.logged)
				}
			}
		})
	}
}

// The SQLite default keeps a generated key in a file beside the database
// (mode 0600) and reuses it on the next start; a configured origin that is
// not the key's name is refused; a key to create needs a name (Origin, or
// DefaultOrigin, which names only a key it creates).
func TestLogKeyFile(t *testing.T) {
	dir := t.TempDir()
	s, err := persistence.Open(t.Context(), persistence.Config{SQLitePath: filepath.Join(dir, "solitaire.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	file := filepath.Join(dir, "solitaire.db.logkey")
	if _, err := s.OpenLog(t.Context(), persistence.LogConfig{KeyFile: file, CreateKeyFile: true}); !errors.Is(err, persistence.ErrNoOrigin) {
		t.Fatalf("a key to create without a name: %v, want ErrNoOrigin", err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a key file without a name was created (%v)", err)
	}
	cfg := persistence.LogConfig{KeyFile: file, CreateKeyFile: true, Origin: "games.example/log", DefaultOrigin: "dev.example/log"}
	l1, err := s.OpenLog(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := s.OpenLog(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l1.VerifierKey() != l2.VerifierKey() || l1.Origin() != "games.example/log" {
		t.Fatalf("keys %q and %q, origin %q", l1.VerifierKey(), l2.VerifierKey(), l1.Origin())
	}
	fi, err := os.Stat(file)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	if _, err := s.OpenLog(t.Context(), persistence.LogConfig{KeyFile: file, Origin: "other.example/log"}); err == nil {
		t.Fatal("an origin other than the key's name was accepted")
	}
	// A default origin names only a key it creates.
	if l, err := s.OpenLog(t.Context(), persistence.LogConfig{KeyFile: file, DefaultOrigin: "dev.example/log"}); err != nil ||
		l.Origin() != "games.example/log" {
		t.Fatalf("an existing key with a default origin: %v", err)
	}
	devFile := filepath.Join(dir, "dev.logkey")
	if l, err := s.OpenLog(t.Context(), persistence.LogConfig{KeyFile: devFile, CreateKeyFile: true, DefaultOrigin: "dev.example/log"}); err != nil ||
		l.Origin() != "dev.example/log" {
		t.Fatalf("a new key with a default origin: %v", err)
	}
	if _, err := s.OpenLog(t.Context(), persistence.LogConfig{}); err == nil {
		t.Fatal("SQLite without a key or key file was accepted")
	}
}

// On PostgreSQL without a configured key, the first server generates one,
// named by its origin (none: ErrNoOrigin, and nothing is kept), and keeps
// it in the database; every later one signs with the same key, with or
// without an origin.
func TestLogKeyInDatabase(t *testing.T) {
	dsn := pgtest.DSN(t)
	var keys []string
	for _, origin := range []string{"", "db.example/log", "db.example/log", ""} {
		s, err := persistence.Open(t.Context(), persistence.Config{DatabaseURL: dsn})
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.OpenLog(t.Context(), persistence.LogConfig{Origin: origin})
		s.Close()
		if len(keys) == 0 {
			if !errors.Is(err, persistence.ErrNoOrigin) {
				t.Fatalf("a new key without a name: %v, want ErrNoOrigin", err)
			}
			keys = append(keys, "")
			continue
		}
		if err != nil || l.Origin() != "db.example/log" {
			t.Fatalf("origin %q: %v", origin, err)
		}
		keys = append(keys, l.VerifierKey())
	}
	if keys[1] != keys[2] || keys[2] != keys[3] {
		t.Fatalf("three servers got keys %q", keys[1:])
	}
}

// TestLogTilePaths fuzzes the tile paths (Log.Tile) over a tree of 300
// leaves in both layouts, C2SP tlog-tiles ("L/N[.p/W]",
// "entries/N[.p/W]") and the Go checksum database's ("8/L/N[.p/W]",
// "8/data/N[.p/W]"): every path either can spell, with levels and
// indices up to the int64 limits, widths past a tile and malformed
// segments, answers a tile or app.ErrNoTile, never another error and
// never a panic; a tile answered has the size its path says (as tlog, or
// for C2SP paths torchwood, parses it), and an entry bundle holds exactly
// its width of length-prefixed records, the checksum database's data tile
// of the same index the same records without the prefixes. A seeded
// random generator, so a failure repeats.
func TestLogTilePaths(t *testing.T) {
	for _, db := range logStores {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			s := db.open(t)
			l, _ := openLog(t, s)
			insertEnded(t, s, 300)
			if n, err := l.Sequence(t.Context()); err != nil || n != 300 {
				t.Fatalf("Sequence = %d, %v", n, err)
			}
			// Paths no layout spells: never a tile.
			for _, p := range []string{"data/000.p/1", "00/000.p/1", "0/000.p/256", "0/000.p/01", "8/000.p/1",
				"8/entries/000", "entries/data/000", "entries/0/000", "-1/000", "entries/-01", "entries/000.p/0",
				"entries/x000/000", "0/000/", "/0/000", "0//000", "tile/0/000", "entries/001.p/045", ""} {
				if _, _, err := l.Tile(t.Context(), p); !errors.Is(err, app.ErrNoTile) {
					t.Errorf("tile %q: %v, want ErrNoTile", p, err)
				}
			}
			paths := []string{"8/9223372036854775807/000", "8/7/000", "8/8/000", "8/0/x9223372036854775807",
				"8/0/x036/028/854/775/807", "8/data/x036/028/854/775/807.p/1", "8/-1/000", "8/0/000.p/0",
				"8/0/000.p/257", "8/0/001.p/44", "8/1/000.p/1", "8/data/001.p/44", "8/data/000", "8/0/000",
				"9223372036854775807/000", "7/000", "0/x9223372036854775807", "0/x036/028/854/775/807",
				"entries/x036/028/854/775/807.p/1", "0/000.p/0", "0/000.p/257", "0/001.p/44", "1/000.p/1",
				"entries/001.p/44", "entries/000", "0/000"}
			rng := mrand.New(mrand.NewPCG(11, 30))
			levels := []string{"0", "1", "2", "7", "8", "63", "64", "data", "-1", "9223372036854775807", "x", "00"}
			for range 6000 {
				var p string
				switch rng.IntN(3) {
				case 0: // the checksum database's layout
					p = "8/" + levels[rng.IntN(len(levels))]
				case 1: // a C2SP hash tile
					p = levels[rng.IntN(len(levels))]
				default: // a C2SP entry bundle
					p = "entries"
				}
				for k := rng.IntN(4); k >= 0; k-- {
					switch rng.IntN(3) {
					case 0:
						p += fmt.Sprintf("/%03d", rng.IntN(1000))
					case 1:
						p += fmt.Sprintf("/x%03d", rng.IntN(1000))
					default:
						p += fmt.Sprintf("/%03d", rng.IntN(3))
					}
				}
				if rng.IntN(2) == 0 {
					p += fmt.Sprintf(".p/%d", rng.IntN(300))
				}
				paths = append(paths, p)
			}
			served := map[string]int{}
			for _, p := range paths {
				data, _, err := l.Tile(t.Context(), p)
				if errors.Is(err, app.ErrNoTile) {
					continue
				}
				if err != nil {
					t.Fatalf("tile %s: %v", p, err)
				}
				sumdb := strings.HasPrefix(p, "8/")
				var tile tlog.Tile
				if sumdb {
					tile, err = tlog.ParseTilePath("tile/" + p)
				} else {
					tile, err = torchwood.ParseTilePath("tile/" + p)
				}
				if err != nil {
					t.Fatalf("tile %s served but does not parse: %v", p, err)
				}
				switch {
				case tile.L >= 0:
					served["hash"]++
					if len(data) != 32*tile.W {
						t.Errorf("tile %s: %d bytes, want %d", p, len(data), 32*tile.W)
					}
				case sumdb:
					served["data"]++
					if bytes.Count(data, []byte("\n")) != tile.W {
						t.Errorf("data tile %s: %d records, want %d", p, bytes.Count(data, []byte("\n")), tile.W)
					}
				default:
					served["entries"]++
					var records []byte
					rest := data
					for range tile.W {
						var rec []byte
						if rec, rest, err = torchwood.ReadTileEntry(rest); err != nil {
							t.Fatalf("entry bundle %s: %v", p, err)
						}
						records = append(records, rec...)
					}
					if len(rest) != 0 {
						t.Errorf("entry bundle %s: %d bytes after its %d entries", p, len(rest), tile.W)
					}
					old, _, err := l.Tile(t.Context(), "8/data/"+strings.TrimPrefix(p, "entries/"))
					if err != nil || !bytes.Equal(old, records) {
						t.Errorf("entry bundle %s holds other records than the data tile (%v)", p, err)
					}
				}
			}
			if served["hash"] < 4 || served["data"] < 2 || served["entries"] < 2 {
				t.Fatalf("of %d paths only %v served a tile", len(paths), served)
			}
			t.Logf("%d paths, tiles served: %v", len(paths), served)
		})
	}
}
