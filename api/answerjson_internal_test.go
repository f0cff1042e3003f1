package api

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/app"
)

// stdJSON is v as encoding/json writes it with HTML escaping off, and a
// newline: what encodeJSON writes for a value without a writer of its
// own, and what the writers must match.
func stdJSON(t *testing.T, v any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sameJSON fails t unless encodeJSON writes for v exactly the bytes
// encoding/json writes.
func sameJSON(t *testing.T, what string, v any) {
	t.Helper()
	if _, ok := v.(jsonAppender); !ok {
		t.Fatalf("%s: %T writes no JSON of its own", what, v)
	}
	got, err := encodeJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := stdJSON(t, v); !bytes.Equal(got, want) {
		t.Fatalf("%s: encodeJSON differs from encoding/json\n got %s\nwant %s", what, got, want)
	}
}

// TestAppendJSONMatchesEncodingJSON holds the answers' own JSON writers
// (answerjson.go) to encoding/json, byte for byte: the game answers of
// random games of every variant, in progress and revealed, with their
// move events, and values with every field set by reflection (so that a
// field added to a type without its writer fails here), strings with
// characters to escape included.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	at := time.Date(2030, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	checked := 0
	for _, v := range domain.Variants() {
		rules, _, err := v.Resolve(domain.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(1); seed <= 3; seed++ {
			st, err := domain.DealtState(domain.DealtEvent(rules, domain.Deal(rules, seed), "sha256:00ff", at))
			if err != nil {
				t.Fatal(err)
			}
			prev := domain.GenesisHash
			g := &app.Game{ID: "g" + v.ID, Variant: v.ID, Rules: rules, CreatedAt: at, Ranked: seed == 1}
			switch seed {
			case 2:
				g.CompetitionID, g.DailyDate, g.Deal = "daily:"+v.ID+":2030-01-02", "2030-01-02", "pysolfc:12"
			case 3:
				g.CompetitionID, g.Winnable, g.SolutionCommitment, g.Difficulty = "d1", true, "sha256:aa", "hard"
			}
			for step := 0; step < 200 && !st.Status.Ended(); step++ {
				var moves []domain.Move
				for _, m := range domain.LegalMoves(st) {
					if m.Type != domain.MoveResign || step == 199 { // the game's end is in the last step only
						moves = append(moves, m)
					}
				}
				if len(moves) == 0 {
					break
				}
				m := moves[rng.IntN(len(moves))]
				now := st.LastAt.Add(time.Duration(1+rng.IntN(1000)) * time.Millisecond) // 200 moves inside klassik's 5 minutes
				evs, next, err := domain.Decide(st, m, now)
				if err != nil {
					t.Fatalf("%s seed %d: %v: %v", v.ID, seed, m, err)
				}
				recs, err := domain.Record(g.ID, prev, evs)
				if err != nil {
					t.Fatal(err)
				}
				prev, st = recs[len(recs)-1].Hash, next
				reveal := st.Status.Ended() || step%7 == 0
				out := MoveResult{Game: newGame(g, st, now, reveal), Events: moveEvents(recs, viewOf(reveal, st))}
				if step%5 == 0 {
					out.Game.LegalMoves = legalOf(st)
				}
				sameJSON(t, v.ID, out)
				sameJSON(t, v.ID, out.Game)
				checked++
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("checked %d answers, want at least 1,000", checked)
	}

	// Every field set, by reflection, with strings that need escaping.
	for i := range 500 {
		var r MoveResult
		fill(rng, reflect.ValueOf(&r).Elem(), 0)
		for j := range r.Events {
			r.Events[j].raw = json.RawMessage(payloads[rng.IntN(len(payloads))])
		}
		sameJSON(t, "filled "+string(rune('0'+i%10)), r)
		sameJSON(t, "filled game", r.Game)
	}
}

// payloads are event payloads as newEvent passes them on: compact ASCII
// as the server stores them, and valid JSON that encoding/json rewrites
// (white space, HTML characters, line separators), which the writers
// must hand to it.
var payloads = []string{
	`{"count":1,"cards":["7D"]}`, `{}`, `null`, `{"a":"x y"}`, `{ "a" : 1 }`, "{\n\"a\":1}",
	`{"a":"<b>&"}`, "{\"a\":\"\u2028\"}", `{"a":"é"}`, `[1,2]`,
}

// specials are strings encoding/json escapes or writes as they are.
var specials = []string{"", "plain", `q"uote`, `back\slash`, "<tag>&", "line\nbreak", "tab\t", "\u2028", "é", "\x01", "\xff", "sha256:0f1e"}

// fill sets every exported field of v (a struct, slice, pointer, string,
// int or bool) to a random value; pointers and slices are nil now and
// then, slices hold up to 3 elements.
func fill(rng *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			// Event.Data is not written while the event has its raw
			// payload (set below).
			if f := v.Type().Field(i); f.IsExported() && f.Type != reflect.TypeFor[domain.EventData]() {
				fill(rng, v.Field(i), depth+1)
			}
		}
	case reflect.Pointer:
		if rng.IntN(4) == 0 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(rng, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		if rng.IntN(4) == 0 {
			return
		}
		n := rng.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(rng, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.String:
		v.SetString(specials[rng.IntN(len(specials))] + strings.Repeat("x", rng.IntN(3)))
	case reflect.Int, reflect.Int64:
		v.SetInt(rng.Int64N(2_000_000_000_000) - 1_000_000_000_000)
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	default:
		panic("fill: " + v.Kind().String())
	}
}

// BenchmarkAnswerJSON: the answer to a draw in a relaxed game, written by
// encoding/json (reflection) and by its own writer (encodeJSON), side by
// side (BENCHMARKS.md, "Design choices on the move path").
func BenchmarkAnswerJSON(b *testing.B) {
	v, _ := domain.LookupVariant("relaxed")
	rules, _, err := v.Resolve(domain.Options{})
	if err != nil {
		b.Fatal(err)
	}
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	st, err := domain.DealtState(domain.DealtEvent(rules, domain.Deal(rules, 7), "sha256:00", at))
	if err != nil {
		b.Fatal(err)
	}
	var recs []domain.RecordedEvent
	prev := domain.GenesisHash
	for range 12 {
		at = at.Add(time.Second)
		evs, next, err := domain.Decide(st, domain.Move{Type: domain.MoveDraw}, at)
		if err != nil {
			b.Fatal(err)
		}
		if recs, err = domain.Record("g1", prev, evs); err != nil {
			b.Fatal(err)
		}
		prev, st = recs[len(recs)-1].Hash, next
	}
	g := &app.Game{ID: "g1", Variant: "relaxed", CreatedAt: at}
	r := MoveResult{Game: newGame(g, st, st.LastAt, false), Events: moveEvents(recs, viewOf(false, st))}
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("own", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeJSON(r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
