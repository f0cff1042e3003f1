package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// newTestGame deals variant id with seed at t0 and returns the state and
// its first event.
func newTestGame(t testing.TB, id string, seed uint64, o Options) (*State, []Event) {
	t.Helper()
	v, err := LookupVariant(id)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := v.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	first := DealtEvent(r, Deal(r, seed), "sha256:test", t0)
	s := &State{}
	s.Apply(first)
	if s.Fault != "" {
		t.Fatal(s.Fault)
	}
	return s, []Event{first}
}

// cardCount counts every card in s, face up or down.
func cardCount(s *State) map[Card]int {
	m := map[Card]int{}
	for _, c := range s.Stock {
		m[c]++
	}
	for _, c := range s.Waste {
		m[c]++
	}
	for _, f := range s.Foundations {
		for _, c := range f {
			m[c]++
		}
	}
	for _, p := range s.Tableau {
		for _, c := range p.Cards {
			m[c]++
		}
	}
	return m
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkPiles asserts the pile invariants of R1: face-up tableau tails are
// runs (R1.6), foundations ascend in one suit from the ace (R1.4), at most 13.
func checkPiles(t testing.TB, s *State) {
	t.Helper()
	for i, p := range s.Tableau {
		if p.Down < 0 || p.Down > len(p.Cards) {
			t.Fatalf("tableau/%d: down %d of %d", i, p.Down, len(p.Cards))
		}
		if !isRun(p.faceUp()) {
			t.Fatalf("R1.6: tableau/%d face-up cards %v are not a run", i, p.faceUp())
		}
	}
	for i, f := range s.Foundations {
		if len(f) > 13 {
			t.Fatalf("R1.4: foundation/%d holds %d cards", i, len(f))
		}
		for k, c := range f {
			prev := NoCard
			if k > 0 {
				prev = f[k-1]
			}
			if !fitsOnFoundation(c, prev) {
				t.Fatalf("R1.4: foundation/%d = %v", i, f)
			}
		}
	}
}

// randomMove returns a random move, legal or not, for probing Decide.
func randomMove(rng *rand.Rand) Move {
	types := []MoveType{MoveDraw, MoveCards, MoveTakeBack, MoveFlip, MoveUndo, MoveRedo, MoveAutocomplete, "bogus"}
	piles := []PileRef{StockPile, WastePile, FoundationRef(AnyFoundation), {}}
	for i := 0; i < 13; i++ {
		piles = append(piles, TableauRef(i), FoundationRef(i))
	}
	pick := func() PileRef { return piles[rng.IntN(len(piles))] }
	return Move{Type: types[rng.IntN(len(types))], From: pick(), To: pick(), Pile: pick(), Count: rng.IntN(15) - 1}
}

// playRandom plays n random legal moves (undo favoured now and then) and
// checks the invariants after each; it returns the state and the log.
func playRandom(t testing.TB, id string, seed uint64, n int, o Options) (*State, []Event) {
	t.Helper()
	s, log := newTestGame(t, id, seed, o)
	rng := rand.New(rand.NewPCG(seed, 7))
	want := cardCount(s)
	now := t0
	for i := 0; i < n && s.Status == StatusInProgress; i++ {
		now = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		if ev := Expire(s, now); ev != nil {
			// R5.3: past the deadline every command is refused and the expiry is appended once.
			if _, _, err := Decide(s, Move{Type: MoveDraw}, now); !errors.Is(err, ErrTimeExpired) {
				t.Fatalf("R5.3: command after the deadline: err = %v", err)
			}
			s.Apply(ev[0])
			log = append(log, ev...)
			if s.Status != StatusExpired || Expire(s, now) != nil {
				t.Fatalf("R5.3: expiry not recorded once: %s", s.Status)
			}
			break
		}
		legal := LegalMoves(s)
		// Probe: a random move is accepted exactly when it is legal.
		probe := randomMove(rng)
		_, _, perr := Decide(s, probe, now)
		if (perr == nil) != contains(legal, normalize(s, probe)) {
			t.Fatalf("%s: Decide(%v) err=%v but membership in LegalMoves=%v", id, probe, perr, perr != nil)
		}
		var m Move
		switch {
		case s.CanUndo() && rng.IntN(6) == 0:
			m = Move{Type: MoveUndo}
		case s.CanRedo() && rng.IntN(3) == 0:
			m = Move{Type: MoveRedo} // walks forward through a chain of undos
		case s.CanUndo() && rng.IntN(12) == 0:
			m = Move{Type: MoveUndo}
		default:
			cand := legal[:0:0]
			for _, x := range legal {
				if x.Type != MoveResign {
					cand = append(cand, x)
				}
			}
			if len(cand) == 0 {
				m = Move{Type: MoveResign}
			} else {
				m = cand[rng.IntN(len(cand))]
			}
		}
		before := s.Clone()
		evs, _, err := Decide(s, m, now)
		if err != nil {
			t.Fatalf("%s: legal move %v refused: %v", id, m, err)
		}
		if i%10 == 0 && mustJSON(t, before) != mustJSON(t, s) {
			t.Fatalf("Decide changed its input state")
		}
		for _, e := range evs {
			s.Apply(e)
		}
		log = append(log, evs...)
		if s.Fault != "" {
			t.Fatalf("%s: fault after %v: %s", id, m, s.Fault)
		}
		if got := cardCount(s); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: card multiset changed after %v", id, m)
		}
		checkPiles(t, s)
		if m.Type != MoveUndo && s.CanUndo() && i%3 == 0 {
			// R2.5: undo gives back exactly the state before the turn (but the move count and time).
			u := s.Clone()
			uevs, _, err := Decide(u, Move{Type: MoveUndo}, now)
			if err != nil {
				t.Fatalf("undo refused: %v", err)
			}
			for _, e := range uevs {
				u.Apply(e)
			}
			if !samePlay(before, u) {
				t.Fatalf("%s: R2.5 undo of %v did not restore the state:\nbefore %s\nafter  %s", id, m, before.Position(), u.Position())
			}
			checkRedo(t, id, m, s, u, legal, rng, now)
		}
	}
	return s, log
}

// checkRedo: after (state s after move m, then undone into u), a redo
// gives back s exactly, every field but the three that advance: Version
// (two more events: the undo and the redo), Moves (two more commands: both
// are moves, R2.9) and LastAt (the redo's time). StartedAt does not move
// (the clock started at m or before) and the redo record is empty again,
// as it was after m. Then, from u, any other legal move ends what can be
// redone: a redo is refused with nothing_to_redo (R2.9).
func checkRedo(t testing.TB, id string, m Move, s, u *State, _ []Move, rng *rand.Rand, now time.Time) {
	t.Helper()
	if !u.CanRedo() || !contains(LegalMoves(u), Move{Type: MoveRedo}) {
		t.Fatalf("%s: R2.9 no redo offered after the undo of %v", id, m)
	}
	r := u.Clone()
	evs, _, err := Decide(r, Move{Type: MoveRedo}, now)
	if err != nil || len(evs) != 1 || evs[0].Type != EventMoveRedone {
		t.Fatalf("%s: R2.9 redo of %v: %v %v", id, m, evs, err)
	}
	r.Apply(evs[0])
	if r.Version != s.Version+2 || r.Moves != s.Moves+2 || !r.LastAt.Equal(Millis(now)) && !r.LastAt.Equal(s.LastAt) {
		t.Fatalf("%s: R2.9 redo counters: version %d moves %d, after the move %d %d", id, r.Version, r.Moves, s.Version, s.Moves)
	}
	x, y := *s, *r
	for _, p := range []*State{&x, &y} {
		p.Version, p.Moves, p.LastAt = 0, 0, time.Time{}
	}
	if !reflect.DeepEqual(x, y) {
		t.Fatalf("%s: R2.9 undo then redo of %v does not restore the state:\nafter the move %s\nafter the redo %s",
			id, m, mustJSON(t, x), mustJSON(t, y))
	}
	var other []Move
	for _, x := range LegalMoves(u) {
		if x.Type != MoveUndo && x.Type != MoveRedo && x.Type != MoveResign {
			other = append(other, x)
		}
	}
	if len(other) == 0 {
		return
	}
	o := u.Clone()
	oevs, _, err := Decide(o, other[rng.IntN(len(other))], now)
	if err != nil {
		t.Fatalf("%s: legal move refused: %v", id, err)
	}
	for _, e := range oevs {
		o.Apply(e)
	}
	if o.Status != StatusInProgress {
		return
	}
	var me *MoveError
	if _, _, err := Decide(o, Move{Type: MoveRedo}, now); !errors.As(err, &me) || me.Reason != ReasonNothingToRedo || o.CanRedo() {
		t.Fatalf("%s: R2.9 redo after another move: %v", id, err)
	}
}

// samePlay compares two states ignoring what undo must not restore
// (version, move count, times: R2.5 "undo is itself a move", "time keeps running").
func samePlay(a, b *State) bool {
	x, y := *a, *b
	for _, p := range []*State{&x, &y} {
		p.Version, p.Moves, p.LastAt, p.StartedAt = 0, 0, time.Time{}, time.Time{}
	}
	return reflect.DeepEqual(x.Position(), y.Position()) && x.Score == y.Score && x.Recycles == y.Recycles &&
		len(x.Turns) == len(y.Turns) && x.Status == y.Status
}

// TestPropertyRandomPlayAllVariants replays random games of every
// variant from their events, and from their events as the log stores
// them (Record's payloads, decoded again): both give the live state. The
// event store relies on the second (it does not decode what it appends):
// every event the rules emit decodes to itself.
func TestPropertyRandomPlayAllVariants(t *testing.T) {
	seen := map[EventType]bool{}
	for _, v := range Variants() {
		for _, o := range []Options{{}, {Undo: ptr(true)}} {
			for seed := uint64(1); seed <= 10; seed++ {
				s, log := playRandom(t, v.ID, seed, 400, o)
				r, bad := Replay(log)
				if bad != 0 {
					t.Fatalf("%s seed %d: replay fault at %d: %s", v.ID, seed, bad, r.Fault)
				}
				if mustJSON(t, r) != mustJSON(t, s) {
					t.Fatalf("%s seed %d: replayed state differs from live state", v.ID, seed)
				}
				if legal := LegalMoves(s); len(legal) > 0 && seed%2 == 0 { // a hint (R7.3) in every other game
					h, _ := HintEvent(s, Hint{Verdict: VerdictWinnable, Move: &legal[0]}, s.LastAt.Add(time.Second))
					s.Apply(h)
					log = append(log, h)
				}
				storedRoundTrip(t, fmt.Sprintf("%s seed %d", v.ID, seed), s, log, seen)
			}
		}
	}
	// A win (R2.8): the last king goes up.
	v, _ := LookupVariant("klondike")
	found := "AC2C3C4C5C6C7C8C9CTCJCQCKC/AD2D3D4D5D6D7D8D9DTDJDQDKD/AH2H3H4H5H6H7H8H9HTHJHQHKH/AS2S3S4S5S6S7S8S9STSJSQS"
	p, err := ParsePosition(":KS/" + emptyPiles(6) + " - - " + found + " 0")
	if err != nil {
		t.Fatal(err)
	}
	log := []Event{DealtEvent(v.Defaults, p, "", t0)}
	s, _ := Replay(log)
	evs, s, err := Decide(s, mvCards("tableau/0", "foundation", 1), t0.Add(time.Second))
	if err != nil || s.Status != StatusWon {
		t.Fatalf("the last king: %v, status %s", err, s.Status)
	}
	storedRoundTrip(t, "a win", s, append(log, evs...), seen)
	for _, typ := range EventTypes() {
		if !seen[typ] {
			t.Errorf("no random game emitted %s", typ)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// storedRoundTrip checks that log, as Record stores it, decodes event by
// event and replays to s, and marks the types it holds in seen.
func storedRoundTrip(t *testing.T, what string, s *State, log []Event, seen map[EventType]bool) {
	t.Helper()
	recs, err := Record("g", GenesisHash, log)
	if err != nil {
		t.Fatal(err)
	}
	decoded := make([]Event, len(recs))
	for i, rec := range recs {
		if decoded[i], err = DecodeEvent(rec.Version, rec.Type, rec.OccurredAt, rec.Payload); err != nil {
			t.Fatalf("%s: event %d (%s) does not decode: %v", what, rec.Version, rec.Type, err)
		}
		seen[rec.Type] = true
	}
	if r, bad := Replay(decoded); bad != 0 || mustJSON(t, r) != mustJSON(t, s) {
		t.Fatalf("%s: the decoded log replays differently (fault at %d)", what, bad)
	}
}
