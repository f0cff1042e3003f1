package domain

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// R2.9: after a chain of undos, repeated redos walk forward through it:
// each re-applies exactly the turn the latest undo reverted (the same
// cards, the automatic flip that came with a move, the recycle and its
// pass, the same score change), names that undo, and is a move of its
// own. The log replays and re-decides exactly (the audit).
func TestR2_9_RedoWalksForwardThroughUndos(t *testing.T) {
	pos := "KS:9S8H/:TH/" + emptyPiles(5) + " 9HJHQH TSJSQSKH " + foundUpto("KC", "KD", "7H", "8S") + " 0"
	s := setupPos(t, "klondike-draw3", Options{Undo: ptr(true), Scoring: ptr(ScoringStandard)}, pos)
	log := []Event{DealtEvent(s.Rules, mustPosition(t, pos), "", t0)}
	moves := []Move{mvDraw, mvCards("tableau/0", "tableau/1", 2), mvCards("waste", "tableau/0", 1), mvDraw, mvDraw, mvDraw}
	after := []*State{s.Clone()}
	now := 0
	play := func(m Move) []Event {
		now++
		evs := mustPlay(t, s, m, sec(float64(now)))
		log = append(log, evs...)
		return evs
	}
	for _, m := range moves {
		play(m)
		after = append(after, s.Clone())
	}
	if s.Recycles == 0 || s.Score.Flipped == 0 {
		t.Fatalf("the line should recycle and flip: %s", s.Position())
	}
	var undos []int
	for range moves {
		undos = append(undos, play(mvUndo)[0].Version)
	}
	if s.Position().String() != after[0].Position().String() {
		t.Fatalf("undos did not walk back to the start: %s", s.Position())
	}
	for k := 1; k <= len(moves); k++ {
		if !s.CanRedo() || !contains(LegalMoves(s), mvRedo) {
			t.Fatalf("redo %d not offered", k)
		}
		evs := play(mvRedo)
		if got, want := evSummary(evs), []string{fmt.Sprintf("move_redone %d", undos[len(undos)-k])}; !reflect.DeepEqual(got, want) {
			t.Fatalf("redo %d: %q, want %q", k, got, want)
		}
		want := after[k]
		if s.Position().String() != want.Position().String() || s.Score != want.Score || s.Recycles != want.Recycles ||
			!reflect.DeepEqual(s.Turns, want.Turns) || !reflect.DeepEqual(s.Ops, want.Ops) {
			t.Fatalf("redo %d of %v:\n got %s %+v\nwant %s %+v", k, moves[k-1], s.Position(), s.Score, want.Position(), want.Score)
		}
		if sc, _ := s.ScoreAt(s.LastAt); s.Score.Points != want.Score.Points || sc < 0 {
			t.Fatalf("redo %d: points %d, want %d", k, s.Score.Points, want.Score.Points)
		}
	}
	if s.Moves != 3*len(moves) {
		t.Fatalf("moves %d: every undo and redo is a move", s.Moves)
	}
	_, err := decideApply(t, s, mvRedo, sec(100))
	wantReason(t, err, ReasonNothingToRedo)
	// Replay and the audit's re-decision give the same state.
	r, bad := Replay(log)
	if bad != 0 || mustJSON(t, r) != mustJSON(t, s) {
		t.Fatalf("replay fault %d %s, or a different state", bad, r.Fault)
	}
	if rs, at, why := Redecide(log); at != 0 || mustJSON(t, rs) != mustJSON(t, s) {
		t.Fatalf("Redecide: %d %s", at, why)
	}
}

func mustPosition(t testing.TB, pos string) Position {
	t.Helper()
	p, err := ParsePosition(pos)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// R2.9: nothing to redo (no undo yet, or another move since the undo,
// or every undo redone) is refused with nothing_to_redo and not counted;
// where undo is not allowed so is redo; a finished game takes no redo.
func TestR2_9_RedoRefusals(t *testing.T) {
	pos := ":QS/:KH/" + emptyPiles(5) + " KS - " + foundUpto("KC", "KD", "QH", "JS") + " 0"
	r := setupPos(t, "relaxed", Options{}, pos)
	_, err := decideApply(t, r, mvRedo, sec(1))
	wantReason(t, err, ReasonNothingToRedo)
	if r.CanRedo() || contains(LegalMoves(r), mvRedo) || r.Moves != 0 {
		t.Fatal("redo offered or counted with nothing to redo")
	}
	mustPlay(t, r, mvCards("tableau/0", "tableau/1", 1), sec(1))
	mustPlay(t, r, mvUndo, sec(2))
	if !r.CanRedo() {
		t.Fatal("no redo after an undo")
	}
	mustPlay(t, r, mvDraw, sec(3)) // another move ends what can be redone
	drawn := r.Position().String()
	_, err = decideApply(t, r, mvRedo, sec(4))
	wantReason(t, err, ReasonNothingToRedo)
	if r.CanRedo() || len(r.Redo) != 0 {
		t.Fatal("redo still possible after another move")
	}
	// Undo after that other move, then redo: only that move comes back.
	mustPlay(t, r, mvUndo, sec(5))
	mustPlay(t, r, mvRedo, sec(6))
	if r.CanRedo() || r.Position().String() != drawn {
		t.Fatalf("after undo and redo of the draw: %s, want %s", r.Position(), drawn)
	}
	// klondike is played without undo: redo is refused as undo is.
	k := setupPos(t, "klondike", Options{}, pos)
	mustPlay(t, k, mvCards("tableau/0", "tableau/1", 1), sec(1))
	_, err = decideApply(t, k, mvRedo, sec(2))
	wantReason(t, err, ReasonUndoNotAllowed)
	// After the end: game over.
	l := setupPos(t, "relaxed", Options{}, pos)
	mustPlay(t, l, mvCards("tableau/0", "tableau/1", 1), sec(1))
	mustPlay(t, l, mvUndo, sec(2))
	mustPlay(t, l, mvResign, sec(3))
	_, err = decideApply(t, l, mvRedo, sec(4))
	if !errors.Is(err, ErrGameOver) || l.CanRedo() || len(l.Redo) != 0 {
		t.Fatalf("redo after resign: %v", err)
	}
}

// R2.9: a log whose move_redone names another undo than the latest, or
// comes when nothing is to redo, does not replay: Apply faults and the
// state stays as it was.
func TestR2_9_ForgedRedoFaults(t *testing.T) {
	pos := ":QS/:KH/" + emptyPiles(5) + " KS - " + foundUpto("KC", "KD", "QH", "JS") + " 0"
	s := setupPos(t, "relaxed", Options{}, pos)
	mustPlay(t, s, mvCards("tableau/0", "tableau/1", 1), sec(1))
	undo := mustPlay(t, s, mvUndo, sec(2))[0]
	good, _, err := Decide(s, mvRedo, sec(3))
	if err != nil {
		t.Fatal(err)
	}
	for _, redone := range []int{undo.Version - 1, undo.Version + 1, 0} {
		f := s.Clone()
		e := good[0]
		e.Data.Redone = redone
		f.Apply(e)
		if f.Fault == "" || f.Version != s.Version {
			t.Fatalf("redone %d accepted", redone)
		}
	}
	s.Apply(good[0])
	again := good[0]
	again.Version = s.Version + 1
	again.Data.Move = s.Moves + 1
	f := s.Clone()
	f.Apply(again)
	if f.Fault == "" {
		t.Fatal("a second redo of the same undo accepted")
	}
}
