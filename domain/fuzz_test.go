package domain

// Fuzz targets for everything that takes outside input or must round-trip
// (STYLE.md "Fuzz"): the position notation, pile and card codes, a move
// request's JSON, events applied to a game, and mutated logs replayed. The
// f.Add seeds run as ordinary tests; `go test -fuzz FuzzApply ./domain`
// explores further.

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

func FuzzParsePosition(f *testing.F) {
	for _, s := range []string{
		":KH/:/:/:/:/:/: - - - 0",
		":KH/:/:/:/:/:/: QS JS AC2C/-/AD/- 1",
		"5C9H:TS/:/QDJC:KSQHJS/:/:/:/7D: 2H3H4H AS AH/-/-/-",
		Deal(variants[0].Defaults, 1).String(),
		Deal(variants[4].Defaults, 2).String(),
		"", " ", "-", ": - - -", ":KH - - AH//- 0", ":KH - - - 1001", "KH:QS:JD - - - 0",
	} {
		f.Add(s)
	}
	rules := []Rules{variants[0].Defaults, variants[3].Defaults, variants[4].Defaults}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePosition(s)
		if err != nil {
			var le *LayoutError
			if !errors.As(err, &le) || le.Reason == "" {
				t.Fatalf("error %v is not a *LayoutError", err)
			}
			return
		}
		text := p.String()
		q, err := ParsePosition(text)
		if err != nil {
			t.Fatalf("String() of a parsed position does not parse: %q -> %q: %v", s, text, err)
		}
		if !reflect.DeepEqual(normPos(q), normPos(p)) || q.String() != text {
			t.Fatalf("round trip: %q -> %q -> %q", s, text, q.String())
		}
		for _, r := range rules {
			if err := p.Validate(r); err != nil {
				var le *LayoutError
				if !errors.As(err, &le) {
					t.Fatalf("Validate: %v", err)
				}
			}
		}
	})
}

func FuzzParsePileRef(f *testing.F) {
	for _, s := range []string{"stock", "waste", "foundation", "foundation/0", "foundation/11", "tableau/6",
		"tableau/99", "tableau/100", "tableau/01", "tableau/-1", "tableau/", "/", "", "tableau/1/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePileRef(s)
		if err != nil {
			var me *MoveError
			if !errors.As(err, &me) || me.Reason != ReasonBadPile {
				t.Fatalf("error %v is not a bad_pile *MoveError", err)
			}
			return
		}
		if p.String() != s {
			t.Fatalf("ParsePileRef(%q).String() = %q", s, p.String())
		}
		if p.Index < AnyFoundation || p.Index > maxPileIndex || p.IsZero() {
			t.Fatalf("ParsePileRef(%q) = %+v", s, p)
		}
		var back PileRef
		if err := back.UnmarshalText([]byte(s)); err != nil || back != p {
			t.Fatalf("UnmarshalText(%q) = %v %v", s, back, err)
		}
	})
}

func FuzzParseCard(f *testing.F) {
	for _, s := range []string{"AS", "TD", "KH", "2C", "1S", "as", "A", "", "ASX", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCard(s)
		if err != nil {
			var le *LayoutError
			if !errors.As(err, &le) || le.Reason != "bad_card" {
				t.Fatalf("error %v is not a bad_card *LayoutError", err)
			}
			if c != NoCard {
				t.Fatalf("failed parse returned %d", c)
			}
			return
		}
		if !c.Valid() || c.String() != s {
			t.Fatalf("ParseCard(%q) = %d %q", s, c, c)
		}
		var back Card
		if err := back.UnmarshalText([]byte(s)); err != nil || back != c {
			t.Fatalf("UnmarshalText(%q) = %v %v", s, back, err)
		}
	})
}

// fuzzGames are states in which a decoded move is decided: mid-game
// klondike, relaxed with an undo record, tripleharp, klassik near its
// deadline, and a finished game.
func fuzzGames(tb testing.TB) []*State {
	var out []*State
	for _, g := range []struct {
		id string
		n  int
		o  Options
	}{
		{"klondike", 40, Options{}},
		{"relaxed", 60, Options{}},
		{"tripleharp", 80, Options{}},
		{"klassik", 30, Options{}},
		{"harp", 50, Options{Undo: ptr(true), Scoring: ptr(ScoringNone)}},
	} {
		s, _ := playRandom(tb, g.id, 7, g.n, g.o)
		out = append(out, s)
	}
	won := setupPos(tb, "klondike", Options{}, ":KS/"+emptyPiles(6)+" - - "+foundUpto("KC", "KD", "KH", "QS")+" 0")
	mustPlay(tb, won, mvCards("tableau/0", "foundation", 1), sec(1))
	return append(out, won)
}

func FuzzDecodeMove(f *testing.F) {
	for _, s := range []string{
		`{"type":"move","from":"tableau/3","to":"foundation","count":1}`,
		`{"type":"move","from":"waste","to":"tableau/0"}`,
		`{"type":"move","from":"tableau/6","to":"tableau/0","count":3}`,
		`{"type":"draw"}`, `{"type":"flip","pile":"tableau/0"}`,
		`{"type":"take-back","from":"foundation/0","to":"tableau/1"}`,
		`{"type":"undo"}`, `{"type":"autocomplete"}`, `{"type":"resign"}`,
		`{"type":"move","from":"waste","to":"tableau/0","count":99999999999}`,
		`{"type":"move","from":"tableau/99","to":"foundation/99","count":-5}`,
		`{"type":"move","from":"","to":"foundation"}`, `{}`, `null`, `[]`, `{"type":1}`, `{"from":"tableau/01"}`,
	} {
		f.Add([]byte(s))
	}
	games := fuzzGames(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Move
		if err := json.Unmarshal(data, &m); err != nil {
			return
		}
		// What decodes encodes back to the same move.
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", m, err)
		}
		var m2 Move
		if err := json.Unmarshal(b, &m2); err != nil || m2 != m {
			t.Fatalf("move JSON round trip: %s -> %s -> %+v (%v)", data, b, m2, err)
		}
		s := games[len(data)%len(games)]
		now := s.LastAt.Add(time.Second)
		evs, _, err := Decide(s, m, now)
		legal := contains(LegalMoves(s), normalize(s, m))
		if err != nil {
			var me *MoveError
			if !errors.As(err, &me) || me.Reason == "" {
				t.Fatalf("Decide(%+v) error %v is not a *MoveError", m, err)
			}
			if legal || len(evs) != 0 {
				t.Fatalf("Decide refused a legal move %+v: %v", m, err)
			}
			return
		}
		if !legal || len(evs) == 0 {
			t.Fatalf("Decide accepted %+v: legal %v, %d events", m, legal, len(evs))
		}
		x := s.Clone()
		want := cardCount(x)
		for _, e := range evs {
			x.Apply(e)
		}
		if x.Fault != "" || !reflect.DeepEqual(cardCount(x), want) {
			t.Fatalf("events of %+v do not replay: %s", m, x.Fault)
		}
	})
}

// fuzzPile decodes a pile reference from one byte, indices -1..30.
func fuzzPile(b byte) PileRef {
	return PileRef{Kind: PileKind(b % 5), Index: int(b>>3) - 1}
}

// fuzzEvent decodes an event for state s from 8 bytes: mostly well-formed
// (the next version, a plausible move number, cards taken from the piles)
// so Apply's checks, not the decoding, are explored.
func fuzzEvent(s *State, b []byte) Event {
	types := []EventType{EventStockDrawn, EventStockRecycled, EventCardsMoved, EventCardFlipped, EventMoveUndone,
		EventGameWon, EventGameResigned, EventGameExpired, EventGameDealt, "bogus", EventMoveRedone}
	e := Event{Type: types[int(b[0])%len(types)], Version: s.Version + 1}
	if b[1]&0xF0 == 0 {
		e.Version = s.Version + int(b[1]&0x0F) - 2
	}
	e.OccurredAt = s.LastAt.Add(time.Duration(b[7]) * 10 * time.Second)
	d := EventData{V: PayloadVersion, Move: s.Moves + int(b[2]%3) - 1, Auto: b[2]&0x80 != 0}
	d.Count = int(b[3]%16) - 1
	d.From, d.To, d.Pile = fuzzPile(b[4]), fuzzPile(b[5]), fuzzPile(b[6])
	if b[7]&1 != 0 { // the cards the piles hold, so the payload may fit
		switch e.Type {
		case EventStockDrawn:
			for i := 0; i < d.Count && i < len(s.Stock); i++ {
				d.Cards = append(d.Cards, s.Stock[len(s.Stock)-1-i])
			}
		case EventCardsMoved:
			if src, _ := s.pile(d.From); src != nil && d.Count >= 1 && d.Count <= len(*src) {
				d.Cards = append([]Card(nil), (*src)[len(*src)-d.Count:]...)
			}
		case EventStockRecycled:
			d.Count = len(s.Waste)
		}
	} else if b[7]&2 != 0 {
		d.Cards = []Card{Card(b[3]), Card(b[6])}
	}
	if e.Type == EventCardFlipped {
		if i := d.Pile.Index; d.Pile.Kind == Tableau && i >= 0 && i < len(s.Tableau) && s.Tableau[i].Down > 0 && b[7]&4 != 0 {
			c := s.Tableau[i].Cards[s.Tableau[i].Down-1]
			d.Card = &c
		} else if b[7]&8 != 0 {
			c := Card(b[3])
			d.Card = &c
		}
	}
	if e.Type == EventMoveUndone {
		d.Undone = int(b[6])
		if n := len(s.Turns); n > 0 && b[7]&4 != 0 {
			d.Undone = s.Turns[n-1].Version
		}
	}
	if e.Type == EventMoveRedone {
		d.Redone = int(b[6])
		if n := len(s.Redo); n > 0 && b[7]&4 != 0 {
			d.Redone = s.Redo[n-1].Undo
		}
	}
	if e.Type == EventGameExpired {
		if dl, ok := s.Deadline(); ok && b[7]&4 != 0 {
			d.Deadline = &dl
		} else {
			at := e.OccurredAt
			d.Deadline = &at
		}
	}
	if e.Type == EventGameDealt {
		r := s.Rules
		d.Rules, d.Deal = &r, ptr(Deal(r, uint64(b[3])))
	}
	e.Data = d
	return e
}

// FuzzApply: events decoded from bytes applied to real games never panic,
// never create or destroy a card, and an event applied without a fault
// takes its version.
func FuzzApply(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0xFF, 1, 2, 0, 0, 0, 1})                                  // a draw of one card
	f.Add([]byte{2, 0xFF, 1, 2, 2, 3 + 8*1, 0, 1, 3, 0xFF, 1, 0, 0, 0, 0, 5}) // a move, a flip
	f.Add([]byte{4, 0xFF, 1, 0, 0, 0, 0, 4, 4, 0xFF, 1, 0, 0, 0, 0, 4})       // two undos
	f.Add([]byte{1, 0xFF, 1, 0, 0, 0, 0, 1, 7, 0xFF, 0x80, 0, 0, 0, 0, 0x55}) // recycle, expiry
	f.Add([]byte{5, 0xFF, 0x81, 0, 0, 0, 0, 0, 6, 0xFF, 1, 0, 0, 0, 0, 0})    // win, resign
	f.Add([]byte{8, 0x01, 1, 9, 0, 0, 0, 0, 9, 0xFF, 1, 0, 0, 0, 0, 0})       // a second deal, a bogus type
	var bases []*State
	for _, g := range []struct {
		id   string
		seed uint64
		o    Options
	}{
		{"relaxed", 3, Options{}},
		{"klondike", 4, Options{Undo: ptr(true)}},
		{"tripleharp", 5, Options{Undo: ptr(true)}},
		{"klassik", 6, Options{Undo: ptr(true), Scoring: ptr(ScoringStandard)}},
	} {
		s, _ := playRandom(f, g.id, g.seed, 50, g.o)
		bases = append(bases, s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := bases[len(data)%len(bases)].Clone()
		want := cardCount(s)
		total := s.Rules.Cards()
		for n := 0; len(data) >= 8 && n < 64; n++ {
			e := fuzzEvent(s, data[:8])
			data = data[8:]
			hadFault := s.Fault != ""
			s.Apply(e)
			if !hadFault && s.Fault == "" && s.Version != e.Version {
				t.Fatalf("%s applied without fault but version %d, want %d", e.Type, s.Version, e.Version)
			}
			if got := cardsIn(s); got != total {
				t.Fatalf("%s left %d cards in play, want %d: %+v", e.Type, got, total, e.Data)
			}
		}
		if !reflect.DeepEqual(cardCount(s), want) {
			t.Fatal("the events changed which cards are in play")
		}
		LegalMoves(s) // whatever Apply accepted, the rules can read it
		NewView(s, s.LastAt)
	})
}

// FuzzReplayMutation: a real recorded log with stored bytes mutated,
// events dropped, swapped, duplicated or retyped never makes DecodeEvent,
// Replay or Audit panic.
func FuzzReplayMutation(f *testing.F) {
	f.Add([]byte{0, 0, 5, 10, 'x'})
	f.Add([]byte{1, 3, 20, 1, 0})
	f.Add([]byte{2, 4, 7, 2, 9})
	f.Add([]byte{0, 5, 30, 3, 3, 1, 6, 2, 0, 0})
	f.Add([]byte{1, 6, 2, 4, 8, 2, 6, 3, 5, 1})
	f.Add([]byte{2, 1, 0, 5, 0, 0, 1, 9, 0, '0'})
	var logs [][]RecordedEvent
	for _, g := range []struct {
		id   string
		seed uint64
		n    int
		o    Options
	}{
		{"relaxed", 8, 150, Options{}},
		{"klassik", 9, 80, Options{Undo: ptr(true)}},
		{"tripleharp", 10, 120, Options{Undo: ptr(true)}},
	} {
		_, log := playRandom(f, g.id, g.seed, g.n, g.o)
		recs, err := Record("g", GenesisHash, log)
		if err != nil {
			f.Fatal(err)
		}
		logs = append(logs, recs)
	}
	types := []EventType{EventGameDealt, EventStockDrawn, EventStockRecycled, EventCardsMoved, EventCardFlipped,
		EventMoveUndone, EventMoveRedone, EventGameWon, EventGameResigned, EventGameExpired}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 1 {
			return
		}
		src := logs[int(data[0])%len(logs)]
		recs := make([]RecordedEvent, len(src))
		copy(recs, src)
		data = data[1:]
		for len(data) >= 4 && len(recs) > 0 {
			op, i, a, b := data[0]%6, int(data[1])%len(recs), int(data[2]), data[3]
			data = data[4:]
			p := append([]byte(nil), recs[i].Payload...)
			switch op {
			case 0: // overwrite a byte
				if len(p) > 0 {
					p[a%len(p)] = b
				}
			case 1: // insert a byte
				k := a % (len(p) + 1)
				p = append(p[:k], append([]byte{b}, p[k:]...)...)
			case 2: // delete bytes
				if len(p) > 0 {
					k := a % len(p)
					p = append(p[:k], p[min(len(p), k+int(b%8)+1):]...)
				}
			case 3: // retype
				recs[i].Type = types[int(b)%len(types)]
			case 4: // drop the event
				recs = append(recs[:i:i], recs[i+1:]...)
				continue
			case 5: // swap with another, or duplicate
				j := a % len(recs)
				if b&1 == 0 {
					recs[i], recs[j] = recs[j], recs[i]
				} else {
					recs = append(recs[:i+1:i+1], recs[i:]...)
				}
				continue
			}
			recs[i].Payload = p
		}
		var evs []Event
		for _, r := range recs {
			e, err := DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload)
			if err != nil {
				break
			}
			evs = append(evs, e)
		}
		s, bad := Replay(evs)
		if bad == 0 && s.Fault != "" || bad != 0 && s.Fault == "" {
			t.Fatalf("Replay: bad %d, fault %q", bad, s.Fault)
		}
		Audit("g", recs, nil)
	})
}

// cardsIn counts the cards in all piles of s.
func cardsIn(s *State) int {
	n := len(s.Stock) + len(s.Waste)
	for _, f := range s.Foundations {
		n += len(f)
	}
	for _, p := range s.Tableau {
		n += len(p.Cards)
	}
	return n
}
