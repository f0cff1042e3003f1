package domain

import (
	"sync"
	"testing"
	"time"
)

// TestR2_5_ClonesGrowUndoRecordsApart: clones of one state that share its
// undo record's arrays (Clone) and each play a different line, in
// parallel goroutines (run with -race), each end with the undo record of
// its own line, and the state they were cloned from keeps its own: every
// undo of each line takes back exactly what that line did (R2.5).
func TestR2_5_ClonesGrowUndoRecordsApart(t *testing.T) {
	base, _ := playRandom(t, "relaxed", 11, 40, Options{})
	if base.Status != StatusInProgress || len(base.Turns) == 0 {
		t.Fatalf("set-up: %s, %d turns", base.Status, len(base.Turns))
	}
	want := mustJSON(t, base)
	const lines = 8
	var wg sync.WaitGroup
	out := make([]*State, lines)
	plays := make([]int, lines)
	for i := range lines {
		wg.Go(func() {
			s := base.Clone()
			now := base.LastAt
			for k := range 20 + i { // lines of different lengths
				legal := LegalMoves(s)
				var m Move
				for j := range legal {
					if m = legal[(i+k+j)%len(legal)]; m.Type != MoveUndo && m.Type != MoveRedo && m.Type != MoveResign {
						break
					}
				}
				now = now.Add(time.Second)
				evs, _, err := Decide(s, m, now)
				if err != nil {
					t.Errorf("line %d: %v: %v", i, m, err)
					return
				}
				for _, e := range evs {
					s.Apply(e)
				}
				if s.Status != StatusInProgress {
					break
				}
				plays[i]++
			}
			out[i] = s
		})
	}
	wg.Wait()
	if got := mustJSON(t, base); got != want {
		t.Fatalf("the state cloned from changed:\n got %s\nwant %s", got, want)
	}
	for i, s := range out {
		if s == nil {
			continue
		}
		// Undo the whole line: back to base's position and undo record.
		now := s.LastAt
		for range plays[i] {
			now = now.Add(time.Second)
			evs, _, err := Decide(s, Move{Type: MoveUndo}, now)
			if err != nil {
				t.Fatalf("line %d: undo: %v", i, err)
			}
			for _, e := range evs {
				s.Apply(e)
			}
		}
		if s.Position().String() != base.Position().String() || len(s.Turns) != len(base.Turns) ||
			len(s.Ops) != len(base.Ops) || mustJSON(t, s.Turns) != mustJSON(t, base.Turns) || mustJSON(t, s.Ops) != mustJSON(t, base.Ops) {
			t.Errorf("line %d: after undoing its %d moves: %s, %d turns; want %s, %d turns", i, plays[i],
				s.Position(), len(s.Turns), base.Position(), len(base.Turns))
		}
	}
}

// BenchmarkMoveOnLongGame is a move (Decide on a clone, as app.Games
// plays one on the cached state) in a game with a long undo
// record: its cost must not grow with the game's length.
func BenchmarkMoveOnLongGame(b *testing.B) {
	s, _ := newTestGame(b, "relaxed", 1, Options{})
	now := s.LastAt
	for range 5000 {
		now = now.Add(time.Second)
		_, after, err := Decide(s, Move{Type: MoveDraw}, now)
		if err != nil {
			b.Fatal(err)
		}
		s = after
	}
	b.ReportAllocs()
	for b.Loop() {
		c := s.Clone() // what the state cache hands out
		now = now.Add(time.Second)
		_, after, _ := Decide(c, Move{Type: MoveDraw}, now)
		s = after // what the cache keeps
	}
}
