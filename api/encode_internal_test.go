package api

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/domaintest"
)

// encodeStd is what encodeJSON wrote before it moved to go-json-experiment:
// encoding/json's Encoder without HTML escaping. encodeJSON must write the
// same bytes for every value.
func encodeStd(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return b.Bytes(), err
}

var (
	mismatchMu sync.Mutex
	mismatches []string
	encoded    int
)

// benchmarking reports whether this run measures benchmarks (-test.bench),
// which must time encodeJSON alone.
var benchmarking = sync.OnceValue(func() bool {
	f := flag.Lookup("test.bench")
	return f != nil && f.Value.String() != ""
})

// Every answer any test of the package makes is also encoded with
// encoding/json and compared (EncodingMismatches, checked by TestMain),
// unless the run measures benchmarks.
func init() {
	encodeCheck = func(v any, got []byte) {
		if benchmarking() {
			return
		}
		want, err := encodeStd(v)
		mismatchMu.Lock()
		defer mismatchMu.Unlock()
		encoded++
		if err != nil || !bytes.Equal(got, want) {
			mismatches = append(mismatches, fmt.Sprintf("%T: encoding/json %q (err %v), encodeJSON %q", v, want, err, got))
		}
	}
}

// checkEncoding fails t if any value encoded so far came out differently
// from encoding/json's bytes.
func checkEncoding(t *testing.T) {
	t.Helper()
	mismatchMu.Lock()
	defer mismatchMu.Unlock()
	for i, m := range mismatches {
		if i == 5 {
			t.Errorf("... and %d more", len(mismatches)-5)
			break
		}
		t.Error(m)
	}
}

// fixedDealer hands out one "proven" deal per request, with a made-up line
// and band, so that winnable games' fields (winnable,
// solution_commitment, difficulty) are in the corpus.
type fixedDealer struct{ n uint64 }

func (d *fixedDealer) ProvenDeal(_ context.Context, _ domain.Rules) (domain.ProvenDeal, error) {
	d.n++
	return domain.ProvenDeal{Seed: d.n*7919 + 13, Line: []domain.Move{{Type: domain.MoveDraw}},
		Nodes: 42, Difficulty: []string{"easy", "medium", "hard", "expert"}[d.n%4]}, nil
}

// TestEncodingMatchesEncodingJSON plays many real games (every variant,
// option sets that show every field, random moves with undo, redo, hints,
// resignations and expiries, until each ends) and encodes every answer a
// client gets for them (the move's result, redacted and revealed; the game;
// its legal moves; pages of its log, redacted and whole; the problem of a
// refused move) with encodeJSON and with encoding/json: the bytes must be
// the same, and every event type must have been among them.
func TestEncodingMatchesEncodingJSON(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	store := domaintest.NewMemStore()
	games := &domain.Games{Store: store, Now: func() time.Time { return clock }, Random: rand.NewChaCha8([32]byte{7}),
		Retries: 3, Dealer: &fixedDealer{}}
	rng := rand.New(rand.NewPCG(1, 2))
	types := map[string]int{}
	var values []any
	same := func(v any) {
		t.Helper()
		values = append(values, v)
	}
	on, off := true, false
	player := domain.FlipPlayer
	offered := domain.AutocompleteOffered
	klassik, vegas, standard := domain.Scoring("klassik"), domain.Scoring("vegas"), domain.Scoring("standard")
	three, limit := 3, 60
	optionSets := []domain.Options{{}, {Undo: &on}, {Undo: &on, Flip: &player}, {TimeLimitS: &limit, Undo: &on},
		{Scoring: &vegas}, {Scoring: &standard, Undo: &on, TakeBack: &on}, {Scoring: &klassik, Autocomplete: &offered},
		{Draw: &three, Undo: &on}, {TakeBack: &off, Undo: &on}}
	advise := func(_ context.Context, _ *domain.Game, s *domain.State) (domain.Hint, error) {
		if ms := domain.LegalMoves(s); len(ms) > 0 && rng.IntN(2) == 0 {
			m := ms[rng.IntN(len(ms))]
			return domain.Hint{Verdict: domain.HintWinnable, Move: &m}, nil
		}
		return domain.Hint{Verdict: []string{domain.HintUnwinnable, domain.HintUnknown}[rng.IntN(2)]}, nil
	}
	created := 0
	for _, v := range domain.Variants() {
		for oi, opts := range optionSets {
			for seed := uint64(1); seed <= 3; seed++ {
				req := domain.NewGame{Owner: "p1", Variant: v.ID, Options: opts}
				switch seed {
				case 1:
					s := seed*1000 + uint64(oi)
					req.Seed = &s
				case 2:
					req.Winnable = true
				}
				g, st, err := games.Create(ctx, req)
				if err != nil {
					if seed == 2 { // winnable deals are for one-deck variants only
						req.Winnable = false
						g, st, err = games.Create(ctx, req)
					}
					if err != nil {
						continue // an option the variant refuses
					}
				}
				created++
				same(newGame(g, st, st.LastAt, false))
				playOut(t, ctx, games, g, st, rng, advise, &clock, types, same)
			}
		}
	}
	// Nearly won layouts (the README's): four runs from king to two, the
	// aces in the stock; played out they are won, with autocomplete.
	runs := [][]string{{"KS", "QH", "JS", "TH", "9S", "8H", "7S", "6H", "5S", "4H", "3S", "2H"},
		{"KH", "QS", "JH", "TS", "9H", "8S", "7H", "6S", "5H", "4S", "3H", "2S"},
		{"KC", "QD", "JC", "TD", "9C", "8D", "7C", "6D", "5C", "4D", "3C", "2D"},
		{"KD", "QC", "JD", "TC", "9D", "8C", "7D", "6C", "5D", "4C", "3D", "2C"}}
	cards := func(codes ...string) []domain.Card {
		out := []domain.Card{}
		for _, c := range codes {
			card, err := domain.ParseCard(c)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, card)
		}
		return out
	}
	for _, variant := range []string{"relaxed", "klondike", "klassik", "klondike-draw3"} {
		pos := domain.Position{Stock: cards("AS", "AH", "AC", "AD")}
		for i := 0; i < 7; i++ {
			p := domain.PileLayout{Down: []domain.Card{}, Up: []domain.Card{}}
			if i < 4 {
				p.Up = cards(runs[i]...)
			}
			pos.Tableau = append(pos.Tableau, p)
		}
		g, st, err := games.Create(ctx, domain.NewGame{Owner: "p1", Variant: variant, Layout: &pos})
		if err != nil {
			t.Fatalf("%s layout: %v", variant, err)
		}
		created++
		same(newGame(g, st, st.LastAt, false))
		playOut(t, ctx, games, g, st, rng, advise, &clock, types, same)
	}
	if created < 3*len(domain.Variants()) {
		t.Fatalf("only %d games created", created)
	}
	for _, v := range values {
		got, err := encodeJSON(v)
		if err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		want, err := encodeStd(v)
		if err != nil {
			t.Fatalf("%T: encoding/json: %v", v, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%T differs:\nencoding/json %s\nencodeJSON    %s", v, want, got)
		}
	}
	for _, name := range eventTypeNames() {
		if types[name] == 0 {
			t.Errorf("no %s event in the corpus (seen: %v)", name, types)
		}
	}
	t.Logf("%d games, %d answers compared, events by type %v", created, len(values), types)
	checkEncoding(t)
}

// eventTypeNames are the wire names of every event type (EventTypes).
func eventTypeNames() []string {
	b, _ := json.Marshal(EventTypes{})
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// playOut plays game id with random commands until it ends (or 150
// commands), handing every answer to same and counting event types.
func playOut(t *testing.T, ctx context.Context, games *domain.Games, g *domain.Game, st *domain.State, rng *rand.Rand,
	advise domain.Advisor, clock *time.Time, types map[string]int, same func(any)) {
	t.Helper()
	id := g.ID
	for n := 0; n < 150; n++ {
		*clock = clock.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		legal := domain.LegalMoves(st)
		if n%8 == 0 || st.Status.Ended() {
			same(newGame(g, st, clock.Add(time.Second), st.Status.Ended()))
			lm := LegalMoves{Version: st.Version, Moves: []MoveRequest{}}
			for _, m := range legal {
				lm.Moves = append(lm.Moves, newMoveRequest(m))
			}
			same(lm)
		}
		if st.Status.Ended() {
			break
		}
		var (
			recs []domain.RecordedEvent
			err  error
		)
		switch r := rng.IntN(1000); {
		case r < 30:
			var hg *domain.Game
			var hs *domain.State
			if hg, hs, recs, _, err = games.Hint(ctx, "p1", id, advise); err == nil {
				g, st = hg, hs
			}
		case r < 40 && st.Rules.TimeLimitS > 0:
			*clock = clock.Add(time.Duration(st.Rules.TimeLimitS) * time.Second)
			if g, st, err = games.Get(ctx, "p1", id); err != nil { // the expiry is appended on this read
				t.Fatal(err)
			}
			continue
		default:
			m := domain.Move{Type: domain.MoveUndo}
			switch {
			case r < 41:
				m = domain.Move{Type: domain.MoveResign}
			case r < 120:
			case r < 170:
				m = domain.Move{Type: domain.MoveRedo}
			case r < 190:
				m = domain.Move{Type: domain.MoveFlip, Pile: domain.PileRef{}} // refused: a problem
			case len(legal) > 1: // resign is always among them
				for m = legal[rng.IntN(len(legal))]; m.Type == domain.MoveResign; {
					m = legal[rng.IntN(len(legal))]
				}
				for _, l := range legal { // towards a win: the foundations first
					if l.To.String() == "foundation" || strings.HasPrefix(l.To.String(), "foundation/") ||
						l.Type == domain.MoveAutocomplete {
						m = l
					}
				}
			}
			var pg *domain.Game
			var ps *domain.State
			if pg, ps, recs, err = games.Play(ctx, "p1", id, m, -1); err == nil {
				g, st = pg, ps
			}
		}
		if err != nil {
			if _, ok := err.(*domain.MoveError); !ok && !strings.Contains(err.Error(), "not") {
				t.Fatalf("move: %v", err)
			}
			p, _ := problemFor(err)
			p.RequestID = "01JEXAMPLE"
			same(p)
			continue
		}
		reveal := st.Status.Ended()
		same(MoveResult{Game: newGame(g, st, st.LastAt, reveal), Events: moveEvents(recs, !reveal)})
		same(MoveResult{Game: newGame(g, st, st.LastAt, false), Events: moveEvents(recs, true)})
	}
	all, err := games.Store.Events(ctx, id, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		types[string(r.Type)]++
	}
	next := 3
	for _, redact := range []bool{true, false} {
		same(EventPage{Events: moveEvents(all, redact), NextAfter: &next})
		same(EventPage{Events: moveEvents(all[:min(3, len(all))], redact)})
	}
}

// BenchmarkEncodeMoveResult is the answer to a draw in a relaxed game,
// encoded by encoding/json (as before) and by encodeJSON.
//
//	go test -run XXX -bench EncodeMoveResult -benchmem ./api
func BenchmarkEncodeMoveResult(b *testing.B) {
	ctx := context.Background()
	games := domain.NewGames(domaintest.NewMemStore())
	g, _, err := games.Create(ctx, domain.NewGame{Owner: "p1", Variant: "relaxed"})
	if err != nil {
		b.Fatal(err)
	}
	g, st, recs, err := games.Play(ctx, "p1", g.ID, domain.Move{Type: domain.MoveDraw}, -1)
	if err != nil {
		b.Fatal(err)
	}
	v := MoveResult{Game: newGame(g, st, st.LastAt, false), Events: moveEvents(recs, true)}
	check := encodeCheck
	encodeCheck = nil
	defer func() { encodeCheck = check }()
	for _, c := range []struct {
		name   string
		encode func(any) ([]byte, error)
	}{{"encoding-json", encodeStd}, {"encodeJSON", encodeJSON}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.encode(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
