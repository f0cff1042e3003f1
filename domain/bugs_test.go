package domain

// Failing tests for engine bugs found while writing the rule tests. Each
// pins the documented contract the engine breaks; the fix belongs in the
// non-test code (owned by the lead). Once a test passes, move it next to
// the rule it pins and drop "Bug" from its name.

import "testing"

// Apply: "an event that does not fit ... changes nothing but sets
// s.Fault". After a misfit at version N (which leaves no trace), the next
// event at version N that does fit is half applied: apply.go's deferred
// restore recognises "the event that faulted" by s.faultAt == e.Version,
// which now also matches the fitting event, so Version, Moves, LastAt,
// StartedAt and Turns are rolled back while the pile change (here the card
// drawn to the waste) and its undo Op stay. The state is then inconsistent
// (cards moved at an unchanged version, an Op without a Turn). Either
// applying the event fully or refusing it entirely would be consistent.
func TestBugApplyHalfAppliesAFittingEventAfterAMisfit(t *testing.T) {
	s, _ := newTestGame(t, "relaxed", 1, Options{})
	s.Apply(Event{Version: 2, Type: EventStockDrawn, OccurredAt: sec(1), Data: EventData{V: 1, Move: 1, Count: 0}})
	if s.Fault == "" {
		t.Fatal("misfit accepted")
	}
	evs, err := Decide(s, mvDraw, sec(2))
	if err != nil {
		t.Fatal(err)
	}
	s.Apply(evs[0]) // a correct draw at version 2
	applied := s.Version == 2 && s.Moves == 1 && len(s.Waste) == 1 && len(s.Turns) == 1 && len(s.Ops) == 1
	refused := s.Version == 1 && s.Moves == 0 && len(s.Waste) == 0 && len(s.Turns) == 0 && len(s.Ops) == 0
	if !applied && !refused {
		t.Fatalf("half applied: version %d, moves %d, waste %v, turns %d, ops %d", s.Version, s.Moves, s.Waste, len(s.Turns), len(s.Ops))
	}
}

// Apply must never panic. Same root cause as above, found by FuzzApply
// (input "0000000080200000": a misplaced game_dealt, then a resign): when
// the fitting event after a misfit at the same version ends the game,
// end() has set s.Turns = nil, and the deferred restore's
// s.Turns = s.Turns[:prevTurns] panics (slice bounds out of range) in any
// game with a non-empty undo record.
func TestBugApplyPanicsOnResignAfterAMisfit(t *testing.T) {
	s, _ := newTestGame(t, "relaxed", 1, Options{})
	mustPlay(t, s, mvDraw, sec(1)) // an undo record of one turn
	s.Apply(Event{Version: 3, Type: EventStockDrawn, OccurredAt: sec(2), Data: EventData{V: 1, Move: 2, Count: 0}})
	if s.Fault == "" {
		t.Fatal("misfit accepted")
	}
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Apply(game_resigned) panicked: %v", r)
		}
	}()
	s.Apply(Event{Version: 3, Type: EventGameResigned, OccurredAt: sec(3), Data: EventData{V: 1, Move: 2}})
}
