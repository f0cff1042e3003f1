package domain

// Benchmarks of the hot paths: replaying a log (every load of a game),
// LegalMoves (every move and GET …/legal-moves) and Decide. Targets:
// replay >= 5M events/s, LegalMoves <= 2 µs (Klondike) and <= 10 µs
// (Tripleharp). Run: go test -run XXX -bench . -benchmem ./domain

import (
	"testing"
	"time"
)

// benchLog plays a long random game (undo favoured now and then) and
// returns its events as the store gives them back: encoded, then decoded.
func benchLog(b *testing.B, id string, seed uint64, moves int, o Options) []Event {
	b.Helper()
	live, log := playRandom(b, id, seed, moves, o)
	recs, err := Record("bench", GenesisHash, log)
	if err != nil {
		b.Fatal(err)
	}
	evs := make([]Event, len(recs))
	for i, r := range recs {
		if evs[i], err = DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload); err != nil {
			b.Fatal(err)
		}
	}
	s, bad := Replay(evs)
	if bad != 0 || mustJSON(b, s) != mustJSON(b, live) {
		b.Fatalf("%s: the decoded log does not replay (fault at %d: %s)", id, bad, s.Fault)
	}
	return evs
}

func BenchmarkReplay(b *testing.B) {
	for _, g := range []struct {
		name string
		id   string
		seed uint64
		o    Options
	}{
		{"klondike", "klondike", 1, Options{}}, // no undo record
		{"klondike-undo", "klondike", 1, Options{Undo: ptr(true)}},
		{"relaxed", "relaxed", 2, Options{}},
		{"tripleharp-undo", "tripleharp", 3, Options{Undo: ptr(true)}},
	} {
		b.Run(g.name, func(b *testing.B) {
			evs := benchLog(b, g.id, g.seed, 1000, g.o)
			b.ReportAllocs()
			b.ResetTimer()
			n := 0
			for b.Loop() {
				s := &State{}
				for _, e := range evs {
					s.Apply(e)
				}
				n++
			}
			b.ReportMetric(float64(len(evs)), "events/log")
			b.ReportMetric(float64(n*len(evs))/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// midGame plays n random moves and returns a state still in progress.
func midGame(b *testing.B, id string, seed uint64, n int) *State {
	b.Helper()
	s, _ := playRandom(b, id, seed, n, Options{})
	if s.Status != StatusInProgress {
		b.Fatalf("%s seed %d ended %s after %d moves", id, seed, s.Status, n)
	}
	return s
}

func benchLegalMoves(b *testing.B, s *State) {
	b.Logf("%s: %d legal moves in %s", s.Rules.Variant, len(LegalMoves(s)), s.Position())
	b.ReportAllocs()
	for b.Loop() {
		LegalMoves(s)
	}
}

func BenchmarkLegalMovesKlondike(b *testing.B) {
	benchLegalMoves(b, midGame(b, "klondike", 5, 30))
}

func BenchmarkLegalMovesTripleharp(b *testing.B) {
	benchLegalMoves(b, midGame(b, "tripleharp", 5, 60))
}

func BenchmarkDecide(b *testing.B) {
	s := midGame(b, "klondike", 5, 30)
	var card Move
	for _, m := range LegalMoves(s) {
		if m.Type == MoveCards {
			card = m
			break
		}
	}
	if card.Type == "" {
		b.Fatal("no card move in the benchmark position")
	}
	now := s.LastAt.Add(time.Second)
	for _, c := range []struct {
		name string
		m    Move
		ok   bool
	}{
		{"draw", Move{Type: MoveDraw}, true},
		{"move", card, true},
		{"refused", Move{Type: MoveCards, From: TableauRef(0), To: TableauRef(1), Count: 13}, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			if _, _, err := Decide(s, c.m, now); (err == nil) != c.ok {
				b.Fatalf("%v: %v", c.m, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				Decide(s, c.m, now)
			}
		})
	}
}
