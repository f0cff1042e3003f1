package domain

import (
	"bytes"
	"encoding/hex"
	"fmt"
)

// AuditReport is the result of checking a game's log:
//
//   - the hash chain from the first event (ChainBrokenAt = first bad
//     version, 0 if intact);
//   - the rules: every command in the log is re-decided from the state
//     before it and must yield exactly the logged events, automatic
//     follow-ups included (ReplayBrokenAt, ReplayProblem);
//   - the commitment, when the salt is known (given, or carried by the
//     deal event, R6.8), against the deal in the first event (R6.4).
//
// A log whose deal is redacted (an export of a game in progress, or of a
// sealed one, R6.4, R6.6) holds neither the hidden cards nor the salt its
// first hash covers: DealHidden is set, the chain is checked from the
// first event's hash on (every later link, and version 1's place and
// game), the rules are not replayed (ReplayOK false, ReplayBrokenAt 0) and
// the commitment is not checked. The rest waits for the deal's reveal.
type AuditReport struct {
	Events         int
	HeadHash       string // hex of the last event's hash, "" for an empty log
	ChainOK        bool
	ChainBrokenAt  int
	ReplayOK       bool
	ReplayBrokenAt int
	ReplayProblem  string
	Commitment     string // from the first event
	CommitmentOK   *bool  // nil when no salt is known
	DealHidden     bool   // the first event is a redacted deal: see above
	State          *State // the state rebuilt up to the first problem (or the end)
}

// FirstBroken is the lowest version any check found broken, 0 if none.
func (a AuditReport) FirstBroken() int {
	v := 0
	for _, x := range []int{a.ChainBrokenAt, a.ReplayBrokenAt} {
		if x > 0 && (v == 0 || x < v) {
			v = x
		}
	}
	return v
}

// Audit checks the recorded events of one game (versions 1..n in order).
// salt may be nil (commitment not checked). It never fails: every problem
// is in the report.
func Audit(gameID string, recs []RecordedEvent, salt []byte) AuditReport {
	a := AuditReport{Events: len(recs)}
	if n := len(recs); n > 0 {
		a.HeadHash = hex.EncodeToString(recs[n-1].Hash)
	}
	evs := make([]Event, 0, len(recs))
	for _, r := range recs {
		e, err := DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload)
		if err != nil {
			a.ReplayBrokenAt, a.ReplayProblem = r.Version, err.Error()
			break
		}
		evs = append(evs, e)
	}
	a.DealHidden = len(evs) > 0 && evs[0].Version == 1 && evs[0].Type == EventGameDealt && evs[0].Data.Hidden != nil
	a.ChainBrokenAt = verifyChain(gameID, recs, a.DealHidden)
	a.ChainOK = a.ChainBrokenAt == 0
	if a.DealHidden {
		a.Commitment = evs[0].Data.Commitment
		if a.ReplayBrokenAt == 0 {
			a.ReplayProblem = "the deal is hidden until the game ends (R6.4, R6.6): the rules are not replayed"
		}
		return a
	}
	s, at, problem := Redecide(evs)
	a.State = s
	if a.ReplayBrokenAt == 0 || (at > 0 && at < a.ReplayBrokenAt) {
		if at > 0 {
			a.ReplayBrokenAt, a.ReplayProblem = at, problem
		}
	}
	if a.ReplayBrokenAt == 0 && len(evs) == 0 {
		a.ReplayBrokenAt, a.ReplayProblem = 1, "empty log"
	}
	a.ReplayOK = a.ReplayBrokenAt == 0
	if len(evs) > 0 && evs[0].Type == EventGameDealt && evs[0].Data.Deal != nil {
		d := evs[0].Data
		a.Commitment = d.Commitment
		if salt == nil && d.Salt != "" {
			salt, _ = hex.DecodeString(d.Salt) // Apply has checked its form
		}
		if salt != nil {
			// R6.8: a salt given beside a deal that carries one must be it.
			ok := CheckCommitment(a.Commitment, *d.Deal, salt) && (d.Salt == "" || d.Salt == hex.EncodeToString(salt))
			a.CommitmentOK = &ok
		}
	}
	return a
}

// Redecide replays events checking that the log is exactly what the rules
// produce: each command's events are re-derived with Decide (or Expire)
// from the state before them, at the command's time, and must match the
// logged ones byte for byte. It returns the state up to the first
// mismatch, that event's version (0 if none) and why.
func Redecide(evs []Event) (*State, int, string) {
	s := &State{}
	if len(evs) == 0 {
		return s, 0, ""
	}
	if evs[0].Type != EventGameDealt {
		return s, evs[0].Version, "the first event is not the deal (R6.2)"
	}
	s.Apply(evs[0])
	if s.Fault != "" {
		return s, 1, s.Fault
	}
	for i := 1; i < len(evs); {
		e := evs[i]
		if e.Type == EventHintGiven {
			if why := hintFits(s, e); why != "" {
				return s, e.Version, why
			}
			s.Apply(e)
			i++
			continue
		}
		j := i + 1
		for j < len(evs) && evs[j].Data.Move == e.Data.Move && evs[j].Data.Auto && evs[j].Type != EventGameExpired {
			j++
		}
		group := evs[i:j]
		var (
			want  []Event
			after *State // the state after want, nil when the group is to be applied to s
		)
		if e.Type == EventGameExpired {
			want = Expire(s, e.OccurredAt)
		} else {
			m, ok := commandOf(e)
			if !ok {
				return s, e.Version, fmt.Sprintf("event %s does not start a command", e.Type)
			}
			var err error
			want, after, err = Decide(s, m, e.OccurredAt)
			if err != nil {
				return s, e.Version, fmt.Sprintf("%v is not legal here: %v", m, err)
			}
		}
		for k, got := range group {
			if k >= len(want) || !sameEvent(got, want[k]) {
				return s, got.Version, "the rules give different events for this command"
			}
		}
		if len(want) > len(group) {
			v := s.Version + len(group) + 1
			return s, v, "events the rules require are missing (automatic follow-ups)"
		}
		if after != nil {
			s = after // the group is the events Decide applied to it (sameEvent)
		} else {
			for _, g := range group {
				s.Apply(g)
			}
		}
		i = j
	}
	return s, 0, ""
}

// commandOf reconstructs the player command that starts with event e.
func commandOf(e Event) (Move, bool) {
	d := e.Data
	switch e.Type {
	case EventStockDrawn, EventStockRecycled:
		return Move{Type: MoveDraw}, !d.Auto
	case EventCardsMoved:
		if d.Auto {
			return Move{Type: MoveAutocomplete}, true
		}
		if d.From.Kind == Foundation {
			return Move{Type: MoveTakeBack, From: d.From, To: d.To, Count: d.Count}, true
		}
		return Move{Type: MoveCards, From: d.From, To: d.To, Count: d.Count}, true
	case EventCardFlipped:
		return Move{Type: MoveFlip, Pile: d.Pile}, !d.Auto
	case EventMoveUndone:
		return Move{Type: MoveUndo}, true
	case EventMoveRedone:
		return Move{Type: MoveRedo}, true
	case EventGameResigned:
		return Move{Type: MoveResign}, true
	}
	return Move{}, false
}

func sameEvent(a, b Event) bool {
	if a.Version != b.Version || a.Type != b.Type || !a.OccurredAt.Equal(b.OccurredAt) {
		return false
	}
	if (a.Type == EventMoveUndone || a.Type == EventMoveRedone) && a.Data.V < UndoPayloadVersion {
		// A log written before undo and redo payloads carried their
		// changes: the rules give the same event without them.
		b.Data.V, b.Data.Changes = a.Data.V, nil
	}
	pa, err1 := EncodePayload(a)
	pb, err2 := EncodePayload(b)
	return err1 == nil && err2 == nil && bytes.Equal(pa, pb)
}
