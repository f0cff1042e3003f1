package domain

import (
	"fmt"
	"time"
)

// Verdict is an answer about a position (R7.1): the solver's (package
// solver names these same values), a hint_given event's and the API's.
// Persisted and API words: never rename one.
type Verdict string

// The three verdicts of R7.1.
const (
	// VerdictWinnable: a line was found and replayed through Decide to a
	// win; a hint gives a move that keeps the position winnable.
	VerdictWinnable Verdict = "winnable"
	// VerdictUnwinnable: the search was exhaustive and found no win.
	VerdictUnwinnable Verdict = "unwinnable"
	// VerdictUnknown: the search's budget ran out first (or a line failed
	// its replay: a solver bug costs an unknown, never a false answer).
	VerdictUnknown Verdict = "unknown"
)

var hintVerdicts = map[Verdict]bool{VerdictWinnable: true, VerdictUnwinnable: true, VerdictUnknown: true}

// Hint is the answer to a hint request (R7.3): the verdict on the position
// and, only when it is winnable, one legal move after which it still is.
type Hint struct {
	Verdict Verdict
	Move    *Move // set exactly when Verdict is VerdictWinnable
}

// HintEvent is the hint_given event of h on state s at instant now: not a
// move (it carries the number of the last command and is not undoable).
// A winnable hint whose move Decide refuses on s is recorded as unknown:
// a faulty advisor costs an unknown, never an illegal hint (R7.1).
func HintEvent(s *State, h Hint, now time.Time) (Event, Hint) {
	now = monotonic(s, now)
	if h.Verdict == VerdictWinnable {
		if h.Move == nil {
			h = Hint{Verdict: VerdictUnknown}
		} else if _, _, err := Decide(s, *h.Move, now); err != nil {
			h = Hint{Verdict: VerdictUnknown}
		}
	} else if !hintVerdicts[h.Verdict] {
		h = Hint{Verdict: VerdictUnknown}
	}
	if h.Verdict != VerdictWinnable {
		h.Move = nil
	}
	d := EventData{V: PayloadVersion, Move: s.Moves, Verdict: h.Verdict}
	if h.Move != nil {
		m := *h.Move
		d.Hint = &m
	}
	return Event{Version: s.Version + 1, Type: EventHintGiven, OccurredAt: now, Data: d}, h
}

// hintFits says why hint_given event e cannot follow s, "" if it can: it
// must fit (Apply), and the move it names must be legal on s. The rules
// cannot re-derive a hint (the solver chose it), so the audit checks only
// that.
func hintFits(s *State, e Event) string {
	c := s.Clone()
	c.Apply(e)
	if c.Fault != "" {
		return c.Fault
	}
	if e.Data.Hint != nil {
		if _, _, err := Decide(s, *e.Data.Hint, e.OccurredAt); err != nil {
			return fmt.Sprintf("the hinted %v is not legal here: %v", *e.Data.Hint, err)
		}
	}
	return ""
}
