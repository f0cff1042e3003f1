package persistence

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// playedStates plays random legal moves but resign (undo and redo among
// them where the rules allow, R2.5, R2.9), or only draws if drawsOnly,
// from deal seed of variant with options o and calls check with the state
// after every move.
func playedStates(t testing.TB, variant string, o domain.Options, seed uint64, moves int, drawsOnly bool,
	check func(*domain.State)) {
	t.Helper()
	v, err := domain.LookupVariant(variant)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := v.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st, err := domain.DealtState(domain.DealtEvent(r, domain.Deal(r, seed), "sha256:test", at))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for range moves {
		var ms []domain.Move
		for _, m := range domain.LegalMoves(st) {
			if m.Type != domain.MoveResign && (!drawsOnly || m.Type == domain.MoveDraw) {
				ms = append(ms, m)
			}
		}
		if len(ms) == 0 {
			return
		}
		at = at.Add(100 * time.Millisecond) // inside Klassik's clock (R5.3) for 400 moves
		_, after, err := domain.Decide(st, ms[rng.IntN(len(ms))], at)
		if err != nil {
			t.Fatal(err)
		}
		st = after
		check(st)
	}
}

// sameAfterMoves plays the same random legal moves (resign excluded,
// undo and redo among them where allowed) from a and from b, states of
// one position, and fails as soon as the states after differ; then it
// plays another move from b (a second branch from the same decoded
// state, as two commands on one cached state do) and checks that neither
// branch changed the first (the undo record grows in place only past
// every sharing state's length, domain/undorecord.go).
func sameAfterMoves(t *testing.T, a, b *domain.State, rng *rand.Rand, n int) {
	t.Helper()
	start := b
	at := a.LastAt
	var firstB *domain.State
	var firstJSON []byte
	for i := range n {
		var ms []domain.Move
		for _, m := range domain.LegalMoves(a) {
			if m.Type != domain.MoveResign {
				ms = append(ms, m)
			}
		}
		if len(ms) == 0 {
			break
		}
		m := ms[rng.IntN(len(ms))]
		at = at.Add(100 * time.Millisecond)
		_, na, errA := domain.Decide(a, m, at)
		_, nb, errB := domain.Decide(b, m, at)
		if errA != nil || errB != nil {
			t.Fatalf("version %d, %v: original %v, decoded %v", a.Version, m, errA, errB)
		}
		ja, _ := json.Marshal(na)
		jb, _ := json.Marshal(nb)
		if !bytes.Equal(ja, jb) || !slices.Equal(na.Turns, nb.Turns) || !slices.Equal(na.Ops, nb.Ops) {
			t.Fatalf("version %d, %v: from the decoded state\n got %s\nwant %s", a.Version, m, jb, ja)
		}
		if i == 0 {
			firstB, firstJSON = nb, jb
		}
		a, b = na, nb
	}
	if firstB == nil {
		return
	}
	for _, m := range domain.LegalMoves(start) {
		if m.Type == domain.MoveResign {
			continue
		}
		if _, _, err := domain.Decide(start, m, at.Add(time.Second)); err != nil {
			t.Fatalf("second branch %v: %v", m, err)
		}
	}
	if again, _ := json.Marshal(firstB); !bytes.Equal(again, firstJSON) {
		t.Fatalf("a second branch from the decoded state changed the first:\n got %s\nwant %s", again, firstJSON)
	}
}

// TestSnapshotRoundTrip checks that a snapshot decodes to the state it
// was taken of, undo record (R2.5) and redo record (R2.9) included, in
// every variant, with scoring (the scoring sets of R4 are on the undo
// record), and that packing makes a long game's snapshot far smaller
// than the state's plain JSON.
func TestSnapshotRoundTrip(t *testing.T) {
	yes, standard, vegas, klassik := true, domain.ScoringStandard, domain.ScoringVegas, domain.ScoringKlassik
	cases := []struct {
		variant string
		o       domain.Options
	}{
		{"relaxed", domain.Options{}},
		{"relaxed", domain.Options{Scoring: &standard}},
		{"klondike", domain.Options{Undo: &yes, Scoring: &vegas, TakeBack: &yes}},
		{"klassik", domain.Options{Undo: &yes, Scoring: &klassik}},
		{"tripleharp", domain.Options{Undo: &yes}},
		{"harp", domain.Options{Undo: &yes}},
	}
	checked, branched := 0, 0
	for _, c := range cases {
		for seed := uint64(1); seed <= 4; seed++ {
			n := 0
			rng := rand.New(rand.NewPCG(seed, 11))
			playedStates(t, c.variant, c.o, seed, 400, false, func(st *domain.State) {
				if n++; n%3 != 0 {
					return
				}
				data, err := encodeSnapshot(st)
				if err != nil {
					t.Fatalf("%s seed %d version %d: encode: %v", c.variant, seed, st.Version, err)
				}
				got, err := decodeSnapshot(data)
				if err != nil {
					t.Fatalf("%s seed %d version %d: decode: %v", c.variant, seed, st.Version, err)
				}
				want, _ := json.Marshal(st)
				have, _ := json.Marshal(got)
				// An empty undo record decodes as nil, as it did as plain JSON.
				if !bytes.Equal(want, have) || !slices.Equal(got.Turns, st.Turns) || !slices.Equal(got.Ops, st.Ops) {
					t.Fatalf("%s seed %d version %d: decoded state differs:\n got %s\nwant %s", c.variant, seed, st.Version, have, want)
				}
				if len(st.Redo) > 0 && len(st.Turns) > 0 {
					checked++
				}
				if n%96 == 0 { // the game goes on from the decoded state as from the original
					sameAfterMoves(t, st, got, rng, 20)
					branched++
				}
			})
		}
	}
	if checked == 0 {
		t.Error("no state had both an undo and a redo record: the round trip of the redo record went unchecked")
	}
	if branched < len(cases) {
		t.Errorf("play went on from %d decoded states, want at least %d", branched, len(cases))
	}

	// A long game: 3,000 draws on relaxed (unlimited passes).
	var long *domain.State
	playedStates(t, "relaxed", domain.Options{}, 9, 3000, true, func(st *domain.State) { long = st })
	if long == nil || len(long.Turns) < 2000 {
		t.Fatalf("long game: want a long undo record, got %v", long)
	}
	packed, err := encodeSnapshot(long)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(long)
	if len(packed)*4 > len(plain) {
		t.Errorf("long game (%d turns): snapshot %d bytes, plain JSON %d: want at most a quarter", len(long.Turns), len(packed), len(plain))
	}
}

// TestSnapshotRejectsDamage checks that a damaged packed record fails to
// decode (so Load replays the log) rather than giving a wrong state.
func TestSnapshotRejectsDamage(t *testing.T) {
	var st *domain.State
	playedStates(t, "relaxed", domain.Options{}, 3, 60, false, func(s *domain.State) { st = s })
	good, err := encodeSnapshot(st)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(good, &doc); err != nil {
		t.Fatal(err)
	}
	with := func(field, value string) []byte {
		d := map[string]json.RawMessage{}
		for k, v := range doc {
			d[k] = v
		}
		d[field] = json.RawMessage(value)
		b, _ := json.Marshal(d)
		return b
	}
	// packed encodes raw bytes as the JSON string of a packed record.
	packed := func(b ...byte) string { return string(appendQuotedBase64(nil, b)) }
	for _, c := range []struct {
		name string
		doc  []byte
		want string
	}{
		{"turns not a string", with("turns", `[1,2]`), "want a JSON string"},
		{"turns not base64", with("turns", `"%%%"`), "illegal base64"},
		{"turn cut off", with("turns", packed(2, 2, 2)), "bad signed varint"},
		{"turn varint cut off", with("turns", packed(2, 2, 2, 0, 0, 0, 0, 0x80)), "bad signed varint"},
		{"signed varint overflows", with("turns", packed(0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01)),
			"bad signed varint"},
		{"unsigned varint overflows", with("turns", packed(2, 2, 2, 0, 0,
			0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0, 0)), "bad unsigned varint"},
		{"op out of range", with("ops", packed(2, 0, 0xAC, 0x02, 0, 0, 2)), "out of [-128, 127]"},
		{"op with bytes left over", with("ops", packed(2, 0, 0, 0, 0, 2, 2)), "bad signed varint"},
	} {
		_, err := decodeSnapshot(c.doc)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want one containing %q", c.name, err, c.want)
		}
	}
	if got, err := decodeSnapshot(good); err != nil || got.Version != st.Version {
		t.Fatalf("undamaged snapshot: %v, %v", got, err)
	}
}

// BenchmarkSnapshotEncode encodes the snapshot of a relaxed game after
// 15,000 draws (what `solitaire-load compare` plays at one client in
// 12 s) as the state's plain JSON (snapshot format 3) and packed (format
// 4, snapshotFormat), side by side; bytes/snapshot is the size
// (BENCHMARKS.md "Snapshots of a long game").
//
//	go test -run XXX -bench SnapshotEncode -benchmem ./persistence
func BenchmarkSnapshotEncode(b *testing.B) {
	var st *domain.State
	playedStates(b, "relaxed", domain.Options{}, 9, 15000, true, func(s *domain.State) { st = s })
	if st == nil || len(st.Turns) < 15000 {
		b.Fatal("no long game to encode")
	}
	for _, c := range []struct {
		name   string
		encode func(*domain.State) ([]byte, error)
	}{
		{"plain", func(s *domain.State) ([]byte, error) { return json.Marshal(s) }},
		{"packed", encodeSnapshot},
	} {
		b.Run(c.name, func(b *testing.B) {
			var n int
			for b.Loop() {
				data, err := c.encode(st)
				if err != nil {
					b.Fatal(err)
				}
				n = len(data)
			}
			b.ReportMetric(float64(n), "bytes/snapshot")
		})
	}
}
