package api

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
)

// TestRenderMatchesEncodingJSON: the move answer's fast renderer writes
// exactly encodeJSON's bytes, over random games of every variant (with
// options that fill the nullable fields), revealed and redacted, at every
// step until they end, with events of every kind they append, and for
// the fields that need escaping or a fallback (odd strings, a payload
// that encoding/json would rewrite, a redacted deal).
func TestRenderMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 15))
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	limit, undo := 600, true
	check := func(what string, out *MoveResult) {
		t.Helper()
		want, err := encodeJSON(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := renderMoveResult(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: renderMoveResult differs from encodeJSON\n got %s\nwant %s", what, got, want)
		}
	}
	steps := 0
	for _, v := range domain.Variants() {
		for _, opts := range []domain.Options{{}, {TimeLimitS: &limit, Undo: &undo}, {Undo: &undo}} {
			if _, _, err := v.Resolve(opts); err != nil {
				continue
			}
			seed := rng.Uint64()
			game := &domain.Game{ID: "g" + v.ID, Variant: v.ID, Options: opts, Owner: "p", CreatedAt: t0}
			rules, _, _ := v.Resolve(opts)
			game.Rules = rules
			deal := domain.Deal(rules, seed)
			first := domain.DealtEvent(rules, deal, domain.Commitment(deal, make([]byte, 32)), t0)
			st := &domain.State{}
			st.Apply(first)
			prev := domain.GenesisHash
			recs, err := domain.Record(game.ID, prev, []domain.Event{first})
			if err != nil {
				t.Fatal(err)
			}
			prev = recs[0].Hash
			if v.ID == "klondike" {
				game.Deal = "pysolfc:1"
			}
			check(v.ID+" deal", &MoveResult{Game: newGame(game, st, st.LastAt, false), Events: moveEvents(recs, true)})
			now := t0
			for i := 0; i < 400 && !st.Status.Ended(); i++ {
				now = now.Add(time.Duration(rng.IntN(2000)) * time.Millisecond)
				legal := domain.LegalMoves(st)
				m := legal[rng.IntN(len(legal))]
				if m.Type == domain.MoveResign && rng.IntN(20) != 0 {
					continue
				}
				evs, err := domain.Decide(st, m, now)
				if err != nil {
					continue // e.g. past the time limit
				}
				recs, err := domain.Record(game.ID, prev, evs)
				if err != nil {
					t.Fatal(err)
				}
				prev = recs[len(recs)-1].Hash
				for _, e := range evs {
					st.Apply(e)
				}
				game.Project(st)
				reveal := st.Status.Ended()
				check(v.ID+" "+string(m.Type), &MoveResult{Game: newGame(game, st, st.LastAt, reveal), Events: moveEvents(recs, !reveal)})
				steps++
			}
		}
	}
	if steps < 1000 {
		t.Fatalf("only %d moves rendered", steps)
	}
	// Fallbacks: strings that need escaping, payloads encoding/json
	// rewrites, a redacted deal, nil lists.
	odd := MoveResult{Game: Game{ID: "a\"b\\c\u2028<&>\x01é", Variant: "x\ty", Status: "in_progress",
		Commitment: "<c>", CreatedAt: "t"},
		Events: []Event{
			{GameID: "g", Version: 2, Type: "stock_drawn", OccurredAt: "t", raw: []byte(`{ "v": 1, "s": "<&>" }`), PrevHash: "00", Hash: "11"},
			{GameID: "g<", Version: 3, Type: "t", OccurredAt: "t", raw: []byte(`{"s":"\u2028"}`)},
			{GameID: "g", Version: 1, Type: "game_dealt", OccurredAt: "t", Data: EventData{V: 1, Hidden: &Hidden{FaceDown: []int{1}}}},
		}}
	check("odd", &odd)
	check("empty", &MoveResult{})
}
