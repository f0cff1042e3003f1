package domain

// Rule tests: one or more tests per rule of docs/rules.md, each named by the
// rule's number (TestR1_5_… pins R1.5). Positions are written in the
// one-line notation of ParsePosition; a test deals one with setupPos (a
// game_dealt event applied to a fresh State), plays moves with decideApply
// and compares the events with evSummary strings or the refusal with the
// stable Reason of the *MoveError.

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// ---- helpers --------------------------------------------------------------

// suitRun returns the codes from..to of one suit back to back, e.g.
// suitRun("9H", "KH") = "9HTHJHQHKH".
func suitRun(from, to string) string {
	a, errA := ParseCard(from)
	b, errB := ParseCard(to)
	if errA != nil || errB != nil || a.Suit() != b.Suit() || a > b {
		panic("suitRun " + from + " " + to)
	}
	var sb strings.Builder
	for c := a; c <= b; c++ {
		sb.WriteString(c.String())
	}
	return sb.String()
}

// foundUpto returns the FOUNDATIONS field with one foundation per top:
// the ace of top's suit up to top, or "-" for an empty foundation.
// foundUpto("KC", "-", "8H") = "AC2C…KC/-/AH2H…8H".
func foundUpto(tops ...string) string {
	out := make([]string, len(tops))
	for i, top := range tops {
		if top == "-" {
			out[i] = "-"
			continue
		}
		out[i] = suitRun("A"+top[1:], top)
	}
	return strings.Join(out, "/")
}

// emptyPiles returns n empty tableau piles in the notation, ":/:/…".
func emptyPiles(n int) string {
	return strings.TrimSuffix(strings.Repeat(":/", n), "/")
}

// setupPos deals the position pos (ParsePosition notation) under variant
// id with options o at t0 and returns the state. The position must be valid
// for the rules (Position.Validate), so every test position holds each card
// the right number of times.
func setupPos(t testing.TB, id string, o Options, pos string) *State {
	t.Helper()
	v, err := LookupVariant(id)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := v.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePosition(pos)
	if err != nil {
		t.Fatalf("position %q: %v", pos, err)
	}
	if err := p.Validate(r); err != nil {
		t.Fatalf("position %q: %v", pos, err)
	}
	s := &State{}
	s.Apply(DealtEvent(r, p, "", t0))
	if s.Fault != "" {
		t.Fatal(s.Fault)
	}
	return s
}

// decideApply decides m at now and, if it is accepted, checks the events'
// numbering and applies them to s. It returns the events and Decide's error.
func decideApply(t testing.TB, s *State, m Move, now time.Time) ([]Event, error) {
	t.Helper()
	before := s.Clone()
	evs, _, err := Decide(s, m, now)
	if mustJSON(t, before.Clone()) != mustJSON(t, s.Clone()) { // Clone normalises empty slices

		t.Fatalf("Decide(%v) changed its input state", m)
	}
	if err != nil {
		if len(evs) != 0 {
			t.Fatalf("Decide(%v) returned events with error %v", m, err)
		}
		return nil, err
	}
	if len(evs) == 0 {
		t.Fatalf("Decide(%v) accepted without events", m)
	}
	for i, e := range evs {
		if e.Version != s.Version+1+i {
			t.Fatalf("event %d of %v has version %d, want %d", i, m, e.Version, s.Version+1+i)
		}
		if e.Data.Move != s.Moves+1 {
			t.Fatalf("event %d of %v has move %d, want %d (one command = one move)", i, m, e.Data.Move, s.Moves+1)
		}
		if !e.OccurredAt.Equal(Millis(now)) || e.OccurredAt.Location() != time.UTC {
			t.Fatalf("event time %v, want %v in UTC (R5.1)", e.OccurredAt, Millis(now))
		}
		want := PayloadVersion
		if e.Type == EventMoveUndone || e.Type == EventMoveRedone {
			want = UndoPayloadVersion
		}
		if e.Data.V != want {
			t.Fatalf("%s: payload version %d, want %d", e.Type, e.Data.V, want)
		}
	}
	for _, e := range evs {
		s.Apply(e)
	}
	if s.Fault != "" {
		t.Fatalf("events of %v do not replay: %s", m, s.Fault)
	}
	if s.Version != before.Version+len(evs) || s.Moves != before.Moves+1 {
		t.Fatalf("%v: version %d moves %d after, want %d and %d", m, s.Version, s.Moves, before.Version+len(evs), before.Moves+1)
	}
	return evs, nil
}

// mustPlay is decideApply for a move that must be accepted.
func mustPlay(t testing.TB, s *State, m Move, now time.Time) []Event {
	t.Helper()
	evs, err := decideApply(t, s, m, now)
	if err != nil {
		t.Fatalf("%v refused: %v\nposition %s", m, err, s.Position())
	}
	return evs
}

// wantReason fails unless err is a *MoveError with that reason.
func wantReason(t testing.TB, err error, want Reason) {
	t.Helper()
	var me *MoveError
	if !errors.As(err, &me) {
		t.Fatalf("error %v (%T), want *MoveError %s", err, err, want)
	}
	if me.Reason != want {
		t.Fatalf("reason %s, want %s (%v)", me.Reason, want, err)
	}
}

// evSummary renders events compactly for comparison:
//
//	stock_drawn 9S TS JS | stock_recycled 5 | cards_moved waste->tableau/0 9H |
//	card_flipped tableau/0 TS | move_undone 3 | game_won
//
// with " auto" appended to an automatic event.
func evSummary(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		d := e.Data
		s := string(e.Type)
		switch e.Type {
		case EventStockDrawn:
			s += " " + cardList(d.Cards)
		case EventStockRecycled:
			s += fmt.Sprintf(" %d", d.Count)
		case EventCardsMoved:
			s += " " + d.From.String() + "->" + d.To.String() + " " + cardList(d.Cards)
		case EventCardFlipped:
			c := "?"
			if d.Card != nil {
				c = d.Card.String()
			}
			s += " " + d.Pile.String() + " " + c
		case EventMoveUndone:
			s += fmt.Sprintf(" %d", d.Undone)
		case EventMoveRedone:
			s += fmt.Sprintf(" %d", d.Redone)
		}
		if d.Auto {
			s += " auto"
		}
		out[i] = s
	}
	return out
}

func cardList(cs []Card) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, " ")
}

// Move constructors in API spelling.
func mvCards(from, to string, n int) Move {
	return Move{Type: MoveCards, From: mustRef(from), To: mustRef(to), Count: n}
}
func mvTakeBack(from, to string) Move {
	return Move{Type: MoveTakeBack, From: mustRef(from), To: mustRef(to), Count: 1}
}
func mvFlip(p string) Move { return Move{Type: MoveFlip, Pile: mustRef(p)} }

var (
	mvDraw         = Move{Type: MoveDraw}
	mvUndo         = Move{Type: MoveUndo}
	mvRedo         = Move{Type: MoveRedo}
	mvAutocomplete = Move{Type: MoveAutocomplete}
	mvResign       = Move{Type: MoveResign}
)

func mustRef(s string) PileRef {
	if s == "" {
		return PileRef{}
	}
	p, err := ParsePileRef(s)
	if err != nil {
		panic(err)
	}
	return p
}

// sec returns t0 plus n seconds.
func sec(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Second))) }

// ruleCase is one row of a table-driven rule test: from position pos in
// variant (with opts), play the moves in before, then move; want the
// events (evSummary form) or, if reason is set, a refusal with it.
type ruleCase struct {
	name    string
	variant string
	opts    Options
	pos     string
	before  []Move
	move    Move
	want    []string
	reason  Reason
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := setupPos(t, tc.variant, tc.opts, tc.pos)
			now := t0
			for _, m := range tc.before {
				now = now.Add(time.Second)
				mustPlay(t, s, m, now)
			}
			now = now.Add(time.Second)
			legal := contains(LegalMoves(s), normalize(s, tc.move))
			evs, err := decideApply(t, s, tc.move, now)
			if tc.reason != "" {
				wantReason(t, err, tc.reason)
				if legal {
					t.Fatalf("refused move %v is in LegalMoves", tc.move)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v refused: %v", tc.move, err)
			}
			if !legal {
				t.Fatalf("accepted move %v is not in LegalMoves (after normalize)", tc.move)
			}
			if got := evSummary(evs); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("events\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// ---- R1 Cards and piles ---------------------------------------------------

// R1.1: every code parses to its rank and suit and prints back; colours.
func TestR1_1_CardCodes(t *testing.T) {
	ranks := "A23456789TJQK"
	suits := "CDHS"
	seen := map[Card]bool{}
	for si, sl := range suits {
		for ri, rl := range ranks {
			code := string(rl) + string(sl)
			c, err := ParseCard(code)
			if err != nil {
				t.Fatalf("%s: %v", code, err)
			}
			if c.Rank() != ri+1 || c.Suit() != Suit(si) || c.String() != code || !c.Valid() {
				t.Fatalf("%s: rank %d suit %v string %s", code, c.Rank(), c.Suit(), c)
			}
			if c != NewCard(ri+1, Suit(si)) {
				t.Fatalf("%s: NewCard disagrees", code)
			}
			if want := sl == 'D' || sl == 'H'; c.Red() != want {
				t.Fatalf("%s: red = %v", code, c.Red())
			}
			b, err := c.MarshalText()
			if err != nil || string(b) != code {
				t.Fatalf("%s: MarshalText %q %v", code, b, err)
			}
			seen[c] = true
		}
	}
	if len(seen) != 52 {
		t.Fatalf("%d distinct cards", len(seen))
	}
	// Documented encoding: 0 = AC, 12 = KC, 13 = AD, 26 = AH, 39 = AS, 51 = KS.
	for v, code := range map[Card]string{0: "AC", 12: "KC", 13: "AD", 26: "AH", 39: "AS", 51: "KS"} {
		if v.String() != code {
			t.Errorf("Card(%d) = %s, want %s", v, v, code)
		}
	}
	for _, bad := range []string{"", "A", "1S", "10H", "ah", "As", "AX", "ZS", "KHX", " KH", "??"} {
		_, err := ParseCard(bad)
		var le *LayoutError
		if !errors.As(err, &le) || le.Reason != "bad_card" {
			t.Errorf("ParseCard(%q) = %v, want *LayoutError bad_card", bad, err)
		}
	}
	if Card(52).Valid() || NoCard.Valid() || Card(52).String() != "??" {
		t.Error("values from 52 on are not cards")
	}
	if _, err := Card(60).MarshalText(); err == nil {
		t.Error("MarshalText of a non-card must fail")
	}
}

// R1.2: copies of a card are equal; moves name piles and counts, so a copy
// moves by its pile and any copy fits where the card fits.
func TestR1_2_CopiesAreEqual(t *testing.T) {
	a, _ := ParseCard("QH")
	if NewCard(12, Hearts) != a {
		t.Fatal("copies must be the same value")
	}
	// Tripleharp: the three queens of hearts, two of them in play; either
	// goes on the black king, and LegalMoves names them by pile.
	pos := ":QH/:QH/:KS/" + emptyPiles(9) + " KHKH - " +
		foundUpto("KC", "KC", "KC", "KD", "KD", "KD", "KH", "JH", "JH", "KS", "KS", "QS") + " 0"
	s := setupPos(t, "tripleharp", Options{}, pos)
	legal := LegalMoves(s)
	for _, from := range []string{"tableau/0", "tableau/1"} {
		if !contains(legal, mvCards(from, "tableau/2", 1)) {
			t.Fatalf("%s -> tableau/2 missing from %v", from, legal)
		}
	}
	evs := mustPlay(t, s, mvCards("tableau/1", "tableau/2", 1), sec(1))
	if got := evSummary(evs); !reflect.DeepEqual(got, []string{"cards_moved tableau/1->tableau/2 QH"}) {
		t.Fatalf("events %q", got)
	}
	// The other copy goes to whichever foundation takes a queen of hearts.
	evs = mustPlay(t, s, mvCards("tableau/0", "foundation", 1), sec(2))
	if got := evSummary(evs); !reflect.DeepEqual(got, []string{"cards_moved tableau/0->foundation/7 QH"}) {
		t.Fatalf("events %q", got)
	}
	// Validate counts copies: tripleharp needs every card three times.
	p, _ := ParsePosition(pos)
	p.Stock = p.Stock[:1]
	var le *LayoutError
	if err := p.Validate(s.Rules); !errors.As(err, &le) || le.Reason != "card_count" || le.Where != "KH" {
		t.Fatalf("two kings of hearts: %v", err)
	}
}

// R1.3: the pile names of the API and their parse errors.
func TestR1_3_PileRefs(t *testing.T) {
	good := map[string]PileRef{
		"stock":         StockPile,
		"waste":         WastePile,
		"foundation":    FoundationRef(AnyFoundation),
		"foundation/0":  FoundationRef(0),
		"foundation/11": FoundationRef(11),
		"tableau/0":     TableauRef(0),
		"tableau/6":     TableauRef(6),
		"tableau/99":    TableauRef(99),
	}
	for s, want := range good {
		got, err := ParsePileRef(s)
		if err != nil || got != want || got.String() != s {
			t.Errorf("ParsePileRef(%q) = %v %v, String %q", s, got, err, got.String())
		}
		b, _ := got.MarshalText()
		var back PileRef
		if err := back.UnmarshalText(b); err != nil || back != want {
			t.Errorf("text round trip of %q: %v %v", s, back, err)
		}
	}
	for _, s := range []string{"", "Stock", "tableau", "tableau/", "tableau/-1", "tableau/01", "tableau/100",
		"tableau/1/2", "foundation/x", "waste/0", "stock/0", "pile/1", " tableau/1", "tableau/1 ", "tableau/+1"} {
		_, err := ParsePileRef(s)
		var me *MoveError
		if !errors.As(err, &me) || me.Reason != ReasonBadPile {
			t.Errorf("ParsePileRef(%q) = %v, want bad_pile", s, err)
		}
	}
	var z PileRef
	if err := z.UnmarshalText(nil); err != nil || !z.IsZero() || z.String() != "" {
		t.Errorf("empty text: %v %v", z, err)
	}
	// A parsable index beyond the variant's piles is refused by the rules.
	s := setupPos(t, "klondike", Options{}, ":KS/"+emptyPiles(6)+" - - "+foundUpto("KC", "KD", "KH", "QS")+" 0")
	_, _, err := Decide(s, mvCards("tableau/0", "tableau/7", 1), sec(1))
	wantReason(t, err, ReasonNoSuchPile)
	_, _, err = Decide(s, mvCards("tableau/0", "foundation/4", 1), sec(1))
	wantReason(t, err, ReasonNoSuchPile)
}

// posBuildFound are the foundations of a Klondike position for the building rules: clubs and
// diamonds complete, hearts to 8, spades to 9; in play 9H..KH and TS..KS.
const posBuildFound = "AC2C3C4C5C6C7C8C9CTCJCQCKC/AD2D3D4D5D6D7D8D9DTDJDQDKD/AH2H3H4H5H6H7H8H/AS2S3S4S5S6S7S8S9S"

// R1.4: foundations start with any ace anywhere, then same suit one higher,
// at most 13 cards.
func TestR1_4_Foundations(t *testing.T) {
	aces := ":AH/:AS/" + emptyPiles(5) + " " + suitRun("2H", "KH") + suitRun("2S", "KS") + " - " +
		foundUpto("-", "KC", "-", "KD") + " 0"
	tripleFull := ":AC/" + emptyPiles(11) + " " + suitRun("2C", "KC") + " - " +
		foundUpto("KC", "KC", "-", "KD", "KD", "KD", "KH", "KH", "KH", "KS", "KS", "KS") + " 0"
	runRuleCases(t, []ruleCase{
		{name: "any ace on any empty foundation", variant: "klondike", pos: aces,
			move: mvCards("tableau/0", "foundation/2", 1), want: []string{"cards_moved tableau/0->foundation/2 AH"}},
		{name: "spade ace on the first empty", variant: "klondike", pos: aces,
			move: mvCards("tableau/1", "foundation/0", 1), want: []string{"cards_moved tableau/1->foundation/0 AS"}},
		{name: "ace on a filled foundation", variant: "klondike", pos: aces,
			move: mvCards("tableau/0", "foundation/1", 1), reason: ReasonCardDoesNotFit},
		{name: "two on an empty foundation", variant: "klondike", pos: aces,
			before: []Move{mvDraw}, move: mvCards("waste", "foundation/0", 1), reason: ReasonCardDoesNotFit},
		{name: "same suit one higher", variant: "klondike",
			pos:  ":9H/:TS/" + emptyPiles(5) + " THJHQHKHJSQSKS - " + posBuildFound + " 0",
			move: mvCards("tableau/0", "foundation/2", 1), want: []string{"cards_moved tableau/0->foundation/2 9H"}},
		{name: "other suit one higher", variant: "klondike",
			pos:  ":9H/:9S/" + emptyPiles(5) + " THJHQHKHTSJSQSKS - " + foundUpto("KC", "KD", "8H", "8S") + " 0",
			move: mvCards("tableau/0", "foundation/3", 1), reason: ReasonCardDoesNotFit},
		{name: "same suit two higher", variant: "klondike",
			pos:  ":TH/:TS/" + emptyPiles(5) + " 9HJHQHKHJSQSKS - " + posBuildFound + " 0",
			move: mvCards("tableau/0", "foundation/2", 1), reason: ReasonCardDoesNotFit},
		{name: "at most 13: nothing on a king", variant: "tripleharp", pos: tripleFull,
			move: mvCards("tableau/0", "foundation/0", 1), reason: ReasonCardDoesNotFit},
		{name: "at most 13: the copy starts its own foundation", variant: "tripleharp", pos: tripleFull,
			move: mvCards("tableau/0", "foundation", 1), want: []string{"cards_moved tableau/0->foundation/2 AC"}},
	})
}

// R1.5: one lower, opposite colour; only a king (or a run headed by one) on
// an empty pile; nothing on a face-down card.
func TestR1_5_TableauBuilding(t *testing.T) {
	f := " " + posBuildFound + " 0"
	runRuleCases(t, []ruleCase{
		{name: "red on black one lower", variant: "klondike",
			pos:  ":TS/:9H/" + emptyPiles(5) + " THJHQHKHJSQSKS -" + f,
			move: mvCards("tableau/1", "tableau/0", 1), want: []string{"cards_moved tableau/1->tableau/0 9H"}},
		{name: "black on red one lower", variant: "klondike",
			pos:  ":KH/:QS/" + emptyPiles(5) + " 9HTHJHQHTSJSKS -" + f,
			move: mvCards("tableau/1", "tableau/0", 1), want: []string{"cards_moved tableau/1->tableau/0 QS"}},
		{name: "same colour", variant: "klondike",
			pos:  ":TH/:9H/" + emptyPiles(5) + " JHQHKHTSJSQSKS -" + f,
			move: mvCards("tableau/1", "tableau/0", 1), reason: ReasonCardDoesNotFit},
		{name: "two lower", variant: "klondike",
			pos:  ":JS/:9H/" + emptyPiles(5) + " THJHQHKHTSQSKS -" + f,
			move: mvCards("tableau/1", "tableau/0", 1), reason: ReasonCardDoesNotFit},
		{name: "one higher", variant: "klondike",
			pos:  ":9H/:TS/" + emptyPiles(5) + " THJHQHKHJSQSKS -" + f,
			move: mvCards("tableau/1", "tableau/0", 1), reason: ReasonCardDoesNotFit},
		{name: "only king on empty: a queen", variant: "klondike",
			pos:  ":QS/" + emptyPiles(6) + " 9HTHJHQHKHTSJSKS -" + f,
			move: mvCards("tableau/0", "tableau/1", 1), reason: ReasonOnlyKingOnEmpty},
		{name: "only king on empty: a queen from the waste", variant: "klondike",
			pos:  emptyPiles(7) + " 9HTHJHQHKHTSJSKS QS" + f,
			move: mvCards("waste", "tableau/3", 1), reason: ReasonOnlyKingOnEmpty},
		{name: "king on empty, uncovered card flips", variant: "klondike",
			pos:  "QS:KH/" + emptyPiles(6) + " 9HTHJHQHTSJSKS -" + f,
			move: mvCards("tableau/0", "tableau/1", 1),
			want: []string{"cards_moved tableau/0->tableau/1 KH", "card_flipped tableau/0 QS auto"}},
		{name: "run headed by a king on empty", variant: "klondike",
			pos:  "TS:KHQSJH/" + emptyPiles(6) + " 9HTHQHJSKS -" + f,
			move: mvCards("tableau/0", "tableau/1", 3),
			want: []string{"cards_moved tableau/0->tableau/1 KH QS JH", "card_flipped tableau/0 TS auto"}},
		{name: "run headed by a queen on empty", variant: "klondike",
			pos:  "TS:KHQSJH/" + emptyPiles(6) + " 9HTHQHJSKS -" + f,
			move: mvCards("tableau/0", "tableau/1", 2), reason: ReasonOnlyKingOnEmpty},
		{name: "nothing on a face-down card", variant: "relaxed",
			pos:  "TS:/:9H/" + emptyPiles(5) + " THJHQHKHJSQSKS -" + f,
			move: mvCards("tableau/1", "tableau/0", 1), reason: ReasonFaceDownTop},
		{name: "nothing from the waste on a face-down card", variant: "relaxed",
			pos:  "TS:/" + emptyPiles(6) + " THJHQHKHJSQSKS 9H" + f,
			move: mvCards("waste", "tableau/0", 1), reason: ReasonFaceDownTop},
		{name: "waste card on a fitting pile", variant: "klondike",
			pos:  ":TS/" + emptyPiles(6) + " THJHQHKHJSQSKS 9H" + f,
			move: mvCards("waste", "tableau/0", 1), want: []string{"cards_moved waste->tableau/0 9H"}},
	})
}

// R1.6: runs move as a unit where sequences are allowed; never to a
// foundation; tripleharp moves single cards only, a king included.
func TestR1_6_Runs(t *testing.T) {
	f := " " + posBuildFound + " 0"
	run := ":KS/9H:QHJSTH/" + emptyPiles(5) + " JHKHQSTS -" + f
	runRuleCases(t, []ruleCase{
		{name: "run of three as a unit", variant: "klondike", pos: run,
			move: mvCards("tableau/1", "tableau/0", 3),
			want: []string{"cards_moved tableau/1->tableau/0 QH JS TH", "card_flipped tableau/1 9H auto"}},
		{name: "more than the face-up run", variant: "klondike", pos: run,
			move: mvCards("tableau/1", "tableau/0", 4), reason: ReasonNotARun},
		{name: "tail of a run that does not fit", variant: "klondike", pos: run,
			move: mvCards("tableau/1", "tableau/0", 2), reason: ReasonCardDoesNotFit},
		{name: "run to a foundation", variant: "klondike",
			pos:  ":TS9H/" + emptyPiles(6) + " THJHQHKHJSQSKS -" + f,
			move: mvCards("tableau/0", "foundation/2", 2), reason: ReasonSingleCardOnly},
		{name: "run to any foundation", variant: "klondike",
			pos:  ":TS9H/" + emptyPiles(6) + " THJHQHKHJSQSKS -" + f,
			move: mvCards("tableau/0", "foundation", 2), reason: ReasonSingleCardOnly},
		{name: "single card of a run to a foundation", variant: "klondike",
			pos:  ":TS9H/" + emptyPiles(6) + " THJHQHKHJSQSKS -" + f,
			move: mvCards("tableau/0", "foundation", 1), want: []string{"cards_moved tableau/0->foundation/2 9H"}},
		{name: "relaxed moves runs too", variant: "relaxed", pos: run,
			move: mvCards("tableau/1", "tableau/0", 3), want: []string{"cards_moved tableau/1->tableau/0 QH JS TH"}},
	})
	tri := func(t0, t1, stock string) string {
		return t0 + "/" + t1 + "/" + emptyPiles(10) + " " + stock + " - " +
			foundUpto("KC", "KC", "KC", "KD", "KD", "KD", "KH", "KH", "JH", "KS", "KS", "JS") + " 0"
	}
	runRuleCases(t, []ruleCase{
		{name: "tripleharp: no run moves", variant: "tripleharp", pos: tri(":KH", ":KSQH", "QS"),
			move: mvCards("tableau/1", "tableau/0", 2), reason: ReasonSequenceNotAllowed},
		{name: "tripleharp: no run headed by a king to empty", variant: "tripleharp", pos: tri(":KH", ":KSQH", "QS"),
			move: mvCards("tableau/1", "tableau/2", 2), reason: ReasonSequenceNotAllowed},
		{name: "tripleharp: single king to empty", variant: "tripleharp", pos: tri("QS:KH", ":KSQH", "-"),
			move: mvCards("tableau/0", "tableau/5", 1),
			want: []string{"cards_moved tableau/0->tableau/5 KH", "card_flipped tableau/0 QS auto"}},
		{name: "tripleharp: single card", variant: "tripleharp", pos: tri("QS:KH", ":KSQH", "-"),
			move: mvCards("tableau/1", "tableau/0", 1), reason: ReasonCardDoesNotFit},
	})
	// LegalMoves offers exactly the single-card move in tripleharp and the
	// run in klondike.
	s := setupPos(t, "tripleharp", Options{}, tri(":KH", ":KSQH", "QS"))
	for _, m := range LegalMoves(s) {
		if m.Type == MoveCards && m.From.Kind == Tableau && m.To.Kind == Tableau && m.Count != 1 {
			t.Fatalf("tripleharp offers %v", m)
		}
	}
	k := setupPos(t, "klondike", Options{}, run)
	if !contains(LegalMoves(k), mvCards("tableau/1", "tableau/0", 3)) {
		t.Fatalf("klondike does not offer the run: %v", LegalMoves(k))
	}
}

// ---- R2 Moves --------------------------------------------------------------

// R2.1: draw 3 keeps the order, turns fewer if fewer remain, and a recycle
// brings the cards again in the same order.
func TestR2_1_Draw3OrderFewerAndRecycle(t *testing.T) {
	s := setupPos(t, "klondike-draw3", Options{}, emptyPiles(7)+" 9STSJSQSKS - "+foundUpto("KC", "KD", "KH", "8S")+" 0")
	steps := []struct {
		want  string
		waste string
	}{
		{"stock_drawn 9S TS JS", "9S TS JS"},
		{"stock_drawn QS KS", "9S TS JS QS KS"},
		{"stock_recycled 5", ""},
		{"stock_drawn 9S TS JS", "9S TS JS"},
	}
	for i, st := range steps {
		evs := mustPlay(t, s, mvDraw, sec(float64(i+1)))
		if got := evSummary(evs); len(got) != 1 || got[0] != st.want {
			t.Fatalf("draw %d: %q, want %q", i+1, got, st.want)
		}
		if got := cardList(s.Waste); got != st.waste {
			t.Fatalf("draw %d: waste %q, want %q (top last)", i+1, got, st.waste)
		}
	}
	if top, _ := s.topCard(WastePile); top.String() != "JS" {
		t.Fatalf("playable waste card %v, want JS (the last turned)", top)
	}
	if s.Moves != 4 || s.Recycles != 1 {
		t.Fatalf("moves %d recycles %d, want 4 and 1 (a recycle is a move)", s.Moves, s.Recycles)
	}
}

// R2.1: draw 1 turns one card; relaxed's draw option 3 turns three.
func TestR2_1_Draw1AndDrawOption(t *testing.T) {
	pos := emptyPiles(7) + " JSQSKS - " + foundUpto("KC", "KD", "KH", "TS") + " 0"
	s := setupPos(t, "klondike", Options{}, pos)
	for i, want := range []string{"stock_drawn JS", "stock_drawn QS", "stock_drawn KS"} {
		if got := evSummary(mustPlay(t, s, mvDraw, sec(float64(i+1)))); got[0] != want {
			t.Fatalf("draw %d: %q, want %q", i+1, got, want)
		}
	}
	r := setupPos(t, "relaxed", Options{Draw: ptr(3)}, pos)
	if got := evSummary(mustPlay(t, r, mvDraw, sec(1))); got[0] != "stock_drawn JS QS KS" {
		t.Fatalf("relaxed draw 3: %q", got)
	}
}

// R2.1, R3 passes: recycles allowed = passes - 1 (klondike 1 pass,
// klondike-draw3 3, tripleharp and harp 4), unlimited in klassik and
// relaxed. The refused recycle is not a move and changes nothing.
func TestR2_1_PassLimits(t *testing.T) {
	one := func(decks int, piles int) string {
		tops := []string{}
		for d := 0; d < decks; d++ {
			tops = append(tops, "KC", "KD", "KH", "KS")
		}
		tops[len(tops)-1] = "QS"
		return emptyPiles(piles) + " KS - " + foundUpto(tops...) + " 0"
	}
	for _, tc := range []struct {
		variant string
		pos     string
		want    int // recycles allowed; -1 = unlimited
	}{
		{"klondike", one(1, 7), 0},
		{"klondike-draw3", one(1, 7), 2},
		{"klassik", one(1, 7), -1},
		{"relaxed", one(1, 7), -1},
		{"tripleharp", one(3, 12), 3},
		{"harp", one(2, 9), 3},
	} {
		t.Run(tc.variant, func(t *testing.T) {
			s := setupPos(t, tc.variant, Options{}, tc.pos)
			recycles := 0
			now := t0
			for i := 0; i < 40; i++ {
				now = now.Add(time.Second)
				evs, err := decideApply(t, s, mvDraw, now)
				if err != nil {
					wantReason(t, err, ReasonNoPassesLeft)
					if contains(LegalMoves(s), mvDraw) {
						t.Fatal("draw refused but offered")
					}
					break
				}
				if evs[0].Type == EventStockRecycled {
					recycles++
				}
			}
			want := tc.want
			if want < 0 {
				want = 20 // 40 clicks: a draw and a recycle each
			}
			if recycles != want || s.Recycles != want {
				t.Fatalf("%d recycles (state %d), want %d", recycles, s.Recycles, want)
			}
			if tc.want >= 0 && s.Moves != 2*want+1 {
				t.Fatalf("moves %d, want %d: a refused recycle is not counted", s.Moves, 2*want+1)
			}
		})
	}
}

// R2.1: an empty stock with no pass left, or nothing at all to draw, is
// refused, not counted, and changes nothing.
func TestR2_1_EmptyStockRefusedNotCounted(t *testing.T) {
	s := setupPos(t, "klondike", Options{}, emptyPiles(7)+" - KS "+foundUpto("KC", "KD", "KH", "QS")+" 0")
	before := mustJSON(t, s)
	_, err := decideApply(t, s, mvDraw, sec(1))
	wantReason(t, err, ReasonNoPassesLeft)
	if mustJSON(t, s) != before || s.Moves != 0 || !s.StartedAt.IsZero() {
		t.Fatal("refused draw changed the state or started the clock")
	}
	e := setupPos(t, "relaxed", Options{}, ":KS/"+emptyPiles(6)+" - - "+foundUpto("KC", "KD", "KH", "QS")+" 0")
	_, err = decideApply(t, e, mvDraw, sec(1))
	wantReason(t, err, ReasonNothingToDraw)
}

// R2.2: the move command's sources and destinations, "foundation" without
// index, the default count, and the refusals.
func TestR2_2_MoveCommand(t *testing.T) {
	f := " " + posBuildFound + " 0"
	wastePos := ":TS/" + emptyPiles(6) + " THJHQHKHJSQSKS 9H" + f
	acesPos := emptyPiles(7) + " " + suitRun("2H", "KH") + suitRun("2S", "KS") + " AHAS " + foundUpto("-", "KC", "-", "KD") + " 0"
	runRuleCases(t, []ruleCase{
		{name: "waste to tableau", variant: "klondike", pos: wastePos,
			move: mvCards("waste", "tableau/0", 1), want: []string{"cards_moved waste->tableau/0 9H"}},
		{name: "waste to foundation", variant: "klondike", pos: wastePos,
			move: mvCards("waste", "foundation/2", 1), want: []string{"cards_moved waste->foundation/2 9H"}},
		{name: "waste to the foundation that takes it", variant: "klondike", pos: wastePos,
			move: mvCards("waste", "foundation", 1), want: []string{"cards_moved waste->foundation/2 9H"}},
		{name: "foundation resolves to the lowest that takes it", variant: "klondike", pos: acesPos,
			move: mvCards("waste", "foundation", 1), want: []string{"cards_moved waste->foundation/0 AS"}},
		{name: "count 0 means 1", variant: "klondike", pos: wastePos,
			move: mvCards("waste", "tableau/0", 0), want: []string{"cards_moved waste->tableau/0 9H"}},
		{name: "tableau to tableau", variant: "klondike",
			pos:  ":TS/:9H/" + emptyPiles(5) + " THJHQHKHJSQSKS -" + f,
			move: mvCards("tableau/1", "tableau/0", 1), want: []string{"cards_moved tableau/1->tableau/0 9H"}},
		{name: "tableau to the foundation that takes it", variant: "klondike",
			pos:  ":9H/" + emptyPiles(6) + " THJHQHKHTSJSQSKS -" + f,
			move: mvCards("tableau/0", "foundation", 1), want: []string{"cards_moved tableau/0->foundation/2 9H"}},
		{name: "no foundation takes it", variant: "klondike",
			pos:  ":TH/" + emptyPiles(6) + " 9HJHQHKHTSJSQSKS -" + f,
			move: mvCards("tableau/0", "foundation", 1), reason: ReasonCardDoesNotFit},
		{name: "from the stock", variant: "klondike", pos: wastePos,
			move: mvCards("stock", "tableau/0", 1), reason: ReasonBadSource},
		{name: "to the waste", variant: "klondike",
			pos:  ":9H/" + emptyPiles(6) + " THJHQHKHJSQSKS TS" + f,
			move: mvCards("tableau/0", "waste", 1), reason: ReasonBadDestination},
		{name: "to the stock", variant: "klondike", pos: wastePos,
			move: mvCards("waste", "stock", 1), reason: ReasonBadDestination},
		{name: "same pile", variant: "klondike", pos: wastePos,
			move: mvCards("tableau/0", "tableau/0", 1), reason: ReasonSamePile},
		{name: "from an empty pile", variant: "klondike", pos: wastePos,
			move: mvCards("tableau/3", "tableau/0", 1), reason: ReasonEmptyPile},
		{name: "from an empty waste", variant: "klondike",
			pos:  ":TS/" + emptyPiles(6) + " 9HTHJHQHKHJSQSKS -" + f,
			move: mvCards("waste", "tableau/0", 1), reason: ReasonEmptyPile},
		{name: "two waste cards", variant: "klondike",
			pos:  ":KS/" + emptyPiles(6) + " 9HTHJHKHTSJSQS QH" + f,
			move: mvCards("waste", "tableau/0", 2), reason: ReasonOnlyTopWasteCard},
		{name: "count beyond any run", variant: "klondike", pos: wastePos,
			move: mvCards("tableau/0", "tableau/1", 14), reason: ReasonBadCount},
		{name: "negative count", variant: "klondike", pos: wastePos,
			move: mvCards("tableau/0", "tableau/1", -1), reason: ReasonBadCount},
		{name: "no source", variant: "klondike", pos: wastePos,
			move: Move{Type: MoveCards, To: TableauRef(0), Count: 1}, reason: ReasonBadPile},
		{name: "unknown type", variant: "klondike", pos: wastePos,
			move: Move{Type: "teleport"}, reason: ReasonUnknownType},
		{name: "sequence in tripleharp", variant: "tripleharp",
			pos: ":KH/:KSQH/" + emptyPiles(10) + " QS - " +
				foundUpto("KC", "KC", "KC", "KD", "KD", "KD", "KH", "KH", "JH", "KS", "KS", "JS") + " 0",
			move: mvCards("tableau/1", "tableau/0", 2), reason: ReasonSequenceNotAllowed},
	})
}

// R2.3: take-back where the variant allows it (or the option turns it on);
// never foundation -> foundation or foundation -> waste.
func TestR2_3_TakeBack(t *testing.T) {
	pos := ":TS/" + emptyPiles(6) + " THJHQHKHJSQSKS - " + foundUpto("KC", "KD", "9H", "9S") + " 0"
	tri := ":TS/" + emptyPiles(11) + " " + suitRun("JS", "KS") + suitRun("TH", "KH") + " - " +
		foundUpto("KC", "KC", "KC", "KD", "KD", "KD", "KH", "KH", "9H", "KS", "KS", "9S") + " 0"
	runRuleCases(t, []ruleCase{
		{name: "relaxed", variant: "relaxed", pos: pos,
			move: mvTakeBack("foundation/2", "tableau/0"), want: []string{"cards_moved foundation/2->tableau/0 9H"}},
		{name: "klassik", variant: "klassik", pos: pos,
			move: mvTakeBack("foundation/2", "tableau/0"), want: []string{"cards_moved foundation/2->tableau/0 9H"}},
		{name: "tripleharp", variant: "tripleharp", pos: tri,
			move: mvTakeBack("foundation/8", "tableau/0"), want: []string{"cards_moved foundation/8->tableau/0 9H"}},
		{name: "klondike refuses", variant: "klondike", pos: pos,
			move: mvTakeBack("foundation/2", "tableau/0"), reason: ReasonTakeBackNotAllowed},
		{name: "klondike refuses it as a move", variant: "klondike", pos: pos,
			move: mvCards("foundation/2", "tableau/0", 1), reason: ReasonTakeBackNotAllowed},
		{name: "klondike-draw3 refuses", variant: "klondike-draw3", pos: pos,
			move: mvTakeBack("foundation/2", "tableau/0"), reason: ReasonTakeBackNotAllowed},
		{name: "klondike with the option", variant: "klondike", opts: Options{TakeBack: ptr(true)}, pos: pos,
			move: mvTakeBack("foundation/2", "tableau/0"), want: []string{"cards_moved foundation/2->tableau/0 9H"}},
		{name: "relaxed without the option", variant: "relaxed", opts: Options{TakeBack: ptr(false)}, pos: pos,
			move: mvTakeBack("foundation/2", "tableau/0"), reason: ReasonTakeBackNotAllowed},
		{name: "as a plain move", variant: "relaxed", pos: pos,
			move: mvCards("foundation/2", "tableau/0", 1), reason: ReasonUseTakeBack},
		{name: "foundation to foundation", variant: "relaxed", pos: pos,
			move: mvTakeBack("foundation/2", "foundation/3"), reason: ReasonBadDestination},
		{name: "foundation to foundation as a move", variant: "relaxed", pos: pos,
			move: mvCards("foundation/2", "foundation/3", 1), reason: ReasonUseTakeBack},
		{name: "foundation to any foundation (tripleharp)", variant: "tripleharp", pos: tri,
			move: mvTakeBack("foundation/0", "foundation"), reason: ReasonBadDestination},
		{name: "foundation to waste", variant: "relaxed", pos: pos,
			move: mvTakeBack("foundation/2", "waste"), reason: ReasonBadDestination},
		{name: "from a tableau pile", variant: "relaxed", pos: pos,
			move: mvTakeBack("tableau/0", "tableau/1"), reason: ReasonBadSource},
		{name: "from no particular foundation", variant: "relaxed", pos: pos,
			move: mvTakeBack("foundation", "tableau/0"), reason: ReasonBadSource},
		{name: "pile does not take it", variant: "relaxed", pos: pos,
			move: mvTakeBack("foundation/3", "tableau/0"), reason: ReasonCardDoesNotFit},
		{name: "empty pile takes only a king", variant: "relaxed", pos: pos,
			move: mvTakeBack("foundation/2", "tableau/1"), reason: ReasonOnlyKingOnEmpty},
		{name: "king to an empty pile", variant: "relaxed",
			pos:  emptyPiles(7) + " QSKS - " + foundUpto("KC", "KD", "KH", "JS") + " 0",
			move: mvTakeBack("foundation/2", "tableau/4"), want: []string{"cards_moved foundation/2->tableau/4 KH"}},
		{name: "two cards", variant: "relaxed", pos: pos,
			move: Move{Type: MoveTakeBack, From: FoundationRef(2), To: TableauRef(0), Count: 2}, reason: ReasonTakeBackOneCard},
	})
}

// R2.4: flip is a player move where the variant says so; elsewhere the
// uncovered card flips as its own automatic event of the same move.
func TestR2_4_Flip(t *testing.T) {
	f := " " + posBuildFound + " 0"
	runRuleCases(t, []ruleCase{
		{name: "player flip (relaxed)", variant: "relaxed",
			pos:  "TS:/:9H/" + emptyPiles(5) + " THJHQHKHJSQSKS -" + f,
			move: mvFlip("tableau/0"), want: []string{"card_flipped tableau/0 TS"}},
		{name: "player flip (klassik)", variant: "klassik",
			pos:  "TS:/:9H/" + emptyPiles(5) + " THJHQHKHJSQSKS -" + f,
			move: mvFlip("tableau/0"), want: []string{"card_flipped tableau/0 TS"}},
		{name: "face-up top", variant: "relaxed",
			pos:  "TS:/:9H/" + emptyPiles(5) + " THJHQHKHJSQSKS -" + f,
			move: mvFlip("tableau/1"), reason: ReasonNoFaceDownCard},
		{name: "empty pile", variant: "relaxed",
			pos:  "TS:/:9H/" + emptyPiles(5) + " THJHQHKHJSQSKS -" + f,
			move: mvFlip("tableau/2"), reason: ReasonNoFaceDownCard},
		{name: "the stock", variant: "relaxed",
			pos:  "TS:/:9H/" + emptyPiles(5) + " THJHQHKHJSQSKS -" + f,
			move: mvFlip("stock"), reason: ReasonBadSource},
		{name: "no such pile", variant: "relaxed",
			pos:  "TS:/:9H/" + emptyPiles(5) + " THJHQHKHJSQSKS -" + f,
			move: mvFlip("tableau/7"), reason: ReasonNoSuchPile},
		{name: "klondike flips automatically", variant: "klondike",
			pos:  "TS:9H/" + emptyPiles(6) + " THJHQHKHJSQSKS -" + f,
			move: mvFlip("tableau/0"), reason: ReasonFlipIsAutomatic},
		{name: "auto flip after a move to the foundation", variant: "klondike",
			pos:  "TS:9H/" + emptyPiles(6) + " THJHQHKHJSQSKS -" + f,
			move: mvCards("tableau/0", "foundation", 1),
			want: []string{"cards_moved tableau/0->foundation/2 9H", "card_flipped tableau/0 TS auto"}},
		{name: "klondike with the player option", variant: "klondike", opts: Options{Flip: ptr(FlipPlayer)},
			pos:  "TS:9H/" + emptyPiles(6) + " THJHQHKHJSQSKS -" + f,
			move: mvCards("tableau/0", "foundation", 1), want: []string{"cards_moved tableau/0->foundation/2 9H"}},
		{name: "relaxed with the auto option", variant: "relaxed", opts: Options{Flip: ptr(FlipAuto)},
			pos:  "TS:9H/" + emptyPiles(6) + " THJHQHKHJSQSKS -" + f,
			move: mvCards("tableau/0", "foundation", 1),
			want: []string{"cards_moved tableau/0->foundation/2 9H", "card_flipped tableau/0 TS auto"}},
	})
	// The automatic flip is part of the move: one move counted, both events
	// carry its number, the flip is marked automatic.
	s := setupPos(t, "klondike", Options{}, "TS:9H/"+emptyPiles(6)+" THJHQHKHJSQSKS - "+posBuildFound+" 0")
	evs := mustPlay(t, s, mvCards("tableau/0", "foundation", 1), sec(1))
	if s.Moves != 1 || len(evs) != 2 || evs[1].Data.Move != 1 || !evs[1].Data.Auto || evs[0].Data.Auto {
		t.Fatalf("moves %d, events %+v", s.Moves, evs)
	}
	// The player's flip is a move of its own.
	r := setupPos(t, "relaxed", Options{}, "TS:9H/"+emptyPiles(6)+" THJHQHKHJSQSKS - "+posBuildFound+" 0")
	mustPlay(t, r, mvCards("tableau/0", "foundation", 1), sec(1))
	evs = mustPlay(t, r, mvFlip("tableau/0"), sec(2))
	if r.Moves != 2 || evs[0].Data.Auto {
		t.Fatalf("player flip: moves %d, auto %v", r.Moves, evs[0].Data.Auto)
	}
}

// R2.5: undo restores the exact state before the turn (order and face of
// every card, score, passes), is a move of its own, walks back turn by
// turn, and is refused with nothing to undo, where not allowed, and after
// the end.
func TestR2_5_UndoRestoresExactly(t *testing.T) {
	// klondike-draw3 with undo and standard scoring: a recycle, a move with
	// an automatic flip, and draws.
	pos := "KS:9S8H/:TH/" + emptyPiles(5) + " 9HJHQH TSJSQSKH " + foundUpto("KC", "KD", "7H", "8S") + " 0"
	s := setupPos(t, "klondike-draw3", Options{Undo: ptr(true), Scoring: ptr(ScoringStandard)}, pos)
	snapshots := []*State{s.Clone()}
	moves := []Move{mvDraw, mvCards("tableau/0", "tableau/1", 2), mvCards("waste", "tableau/0", 1), mvDraw, mvDraw, mvDraw}
	for i, m := range moves {
		mustPlay(t, s, m, sec(float64(i+1)))
		snapshots = append(snapshots, s.Clone())
	}
	if s.Recycles == 0 {
		t.Fatalf("test line made no recycle: %s", s.Position())
	}
	now := len(moves)
	for k := len(moves); k >= 1; k-- {
		now++
		turnStart := s.Turns[len(s.Turns)-1].Version
		evs := mustPlay(t, s, mvUndo, sec(float64(now)))
		if got := evSummary(evs); !reflect.DeepEqual(got, []string{fmt.Sprintf("move_undone %d", turnStart)}) {
			t.Fatalf("undo %d: %q", k, got)
		}
		want := snapshots[k-1]
		if s.Position().String() != want.Position().String() || !reflect.DeepEqual(s.Position(), want.Position()) {
			t.Fatalf("undo of move %d (%v):\n got %s\nwant %s", k, moves[k-1], s.Position(), want.Position())
		}
		if s.Score != want.Score || s.Recycles != want.Recycles {
			t.Fatalf("undo of move %d: score %+v recycles %d, want %+v %d", k, s.Score, s.Recycles, want.Score, want.Recycles)
		}
		if s.Moves != len(moves)+len(moves)-k+1 {
			t.Fatalf("undo not counted as a move: moves %d", s.Moves)
		}
		if !s.StartedAt.Equal(sec(1)) || !s.LastAt.Equal(sec(float64(now))) {
			t.Fatal("undo must not touch the clock (time keeps running)")
		}
	}
	_, err := decideApply(t, s, mvUndo, sec(100))
	wantReason(t, err, ReasonNothingToUndo)
}

func TestR2_5_UndoRefusals(t *testing.T) {
	pos := ":KS/" + emptyPiles(6) + " - - " + foundUpto("KC", "KD", "KH", "QS") + " 0"
	// klondike is played without undo unless the option is set.
	s := setupPos(t, "klondike", Options{}, ":QS/:KH/"+emptyPiles(5)+" KS - "+foundUpto("KC", "KD", "QH", "JS")+" 0")
	mustPlay(t, s, mvCards("tableau/0", "tableau/1", 1), sec(1))
	_, err := decideApply(t, s, mvUndo, sec(2))
	wantReason(t, err, ReasonUndoNotAllowed)
	// Nothing to undo at the start.
	r := setupPos(t, "relaxed", Options{}, ":QS/:KH/"+emptyPiles(5)+" KS - "+foundUpto("KC", "KD", "QH", "JS")+" 0")
	_, err = decideApply(t, r, mvUndo, sec(1))
	wantReason(t, err, ReasonNothingToUndo)
	if r.CanUndo() || contains(LegalMoves(r), mvUndo) {
		t.Fatal("undo offered with nothing to undo")
	}
	// After a win, after resigning: game over.
	w := setupPos(t, "relaxed", Options{}, pos)
	mustPlay(t, w, mvCards("tableau/0", "foundation", 1), sec(1))
	_, err = decideApply(t, w, mvUndo, sec(2))
	wantReason(t, err, ReasonGameOver)
	if !errors.Is(err, ErrGameOver) {
		t.Fatal("undo after the win must match ErrGameOver")
	}
	l := setupPos(t, "relaxed", Options{}, ":QS/:KH/"+emptyPiles(5)+" KS - "+foundUpto("KC", "KD", "QH", "JS")+" 0")
	mustPlay(t, l, mvCards("tableau/0", "tableau/1", 1), sec(1))
	mustPlay(t, l, mvResign, sec(2))
	_, err = decideApply(t, l, mvUndo, sec(3))
	if !errors.Is(err, ErrGameOver) {
		t.Fatalf("undo after resign: %v", err)
	}
	if l.CanUndo() {
		t.Fatal("CanUndo after the end")
	}
}

// R2.5: undo in an auto-flip variant reverts the move and its automatic
// flip together; repeated undos walk back to the deal.
func TestR2_5_UndoWalksBackToTheDeal(t *testing.T) {
	s, _ := newTestGame(t, "klondike", 11, Options{Undo: ptr(true)})
	deal := s.Position().String()
	n := 0
	for i := 0; i < 25; i++ {
		var m Move
		for _, x := range LegalMoves(s) {
			if x.Type != MoveResign && x.Type != MoveUndo {
				m = x
				if x.Type == MoveCards {
					break // prefer card moves (flips follow)
				}
			}
		}
		if m.Type == "" {
			break
		}
		mustPlay(t, s, m, sec(float64(i+1)))
		n++
	}
	for i := 0; i < n; i++ {
		mustPlay(t, s, mvUndo, sec(float64(100+i)))
	}
	if got := s.Position().String(); got != deal {
		t.Fatalf("after %d undos\n got %s\nwant %s", n, got, deal)
	}
	if s.Moves != 2*n || len(s.Turns) != 0 || s.Score != (ScoreState{}) {
		t.Fatalf("moves %d turns %d score %+v", s.Moves, len(s.Turns), s.Score)
	}
}

// R2.6: autocomplete only when stock and waste are empty and every tableau
// card is face up; each card is its own automatic event; the game is won.
func TestR2_6_Autocomplete(t *testing.T) {
	fnd := " " + foundUpto("KC", "KD", "JH", "JS") + " 0"
	ready := ":KSQH/:KHQS/" + emptyPiles(5) + " - -" + fnd
	runRuleCases(t, []ruleCase{
		{name: "each card its own event", variant: "klondike", pos: ready, move: mvAutocomplete,
			want: []string{
				"cards_moved tableau/0->foundation/2 QH auto",
				"cards_moved tableau/1->foundation/3 QS auto",
				"cards_moved tableau/0->foundation/3 KS auto",
				"cards_moved tableau/1->foundation/2 KH auto",
				"game_won auto",
			}},
		{name: "stock not empty", variant: "klondike", pos: ":KSQH/:KH/" + emptyPiles(5) + " QS -" + fnd,
			move: mvAutocomplete, reason: ReasonCannotAutocomplete},
		{name: "waste not empty", variant: "klondike", pos: ":KSQH/:KH/" + emptyPiles(5) + " - QS" + fnd,
			move: mvAutocomplete, reason: ReasonCannotAutocomplete},
		{name: "a face-down card under face-up cards", variant: "klondike", pos: "KH:KSQH/:QS/" + emptyPiles(5) + " - -" + fnd,
			move: mvAutocomplete, reason: ReasonCannotAutocomplete},
		{name: "a face-down top (player flips)", variant: "klassik", pos: "QH:/:KHQS/:KS/" + emptyPiles(4) + " - -" + fnd,
			move: mvAutocomplete, reason: ReasonCannotAutocomplete},
		{name: "automatic in relaxed after the flip that allows it", variant: "relaxed",
			pos: "QH:/:KHQS/:KS/" + emptyPiles(4) + " - -" + fnd, move: mvFlip("tableau/0"),
			want: []string{
				"card_flipped tableau/0 QH",
				"cards_moved tableau/0->foundation/2 QH auto",
				"cards_moved tableau/1->foundation/3 QS auto",
				"cards_moved tableau/2->foundation/3 KS auto",
				"cards_moved tableau/1->foundation/2 KH auto",
				"game_won auto",
			}},
		{name: "offered only (klondike) after the same flip", variant: "klondike", opts: Options{Flip: ptr(FlipPlayer)},
			pos: "QH:/:KHQS/:KS/" + emptyPiles(4) + " - -" + fnd, move: mvFlip("tableau/0"),
			want: []string{"card_flipped tableau/0 QH"}},
		{name: "automatic in relaxed after the last waste card", variant: "relaxed",
			pos: ":KSQH/:KH/" + emptyPiles(5) + " - QS" + fnd, move: mvCards("waste", "tableau/1", 1),
			want: []string{
				"cards_moved waste->tableau/1 QS",
				"cards_moved tableau/0->foundation/2 QH auto",
				"cards_moved tableau/1->foundation/3 QS auto",
				"cards_moved tableau/0->foundation/3 KS auto",
				"cards_moved tableau/1->foundation/2 KH auto",
				"game_won auto",
			}},
		{name: "relaxed with the offered option waits", variant: "relaxed", opts: Options{Autocomplete: ptr(AutocompleteOffered)},
			pos: ":KSQH/:KH/" + emptyPiles(5) + " - QS" + fnd, move: mvCards("waste", "tableau/1", 1),
			want: []string{"cards_moved waste->tableau/1 QS"}},
	})
	// Offered exactly when possible.
	s := setupPos(t, "klondike", Options{}, ready)
	if !contains(LegalMoves(s), mvAutocomplete) {
		t.Fatal("autocomplete not offered")
	}
	s = setupPos(t, "klondike", Options{}, "KH:KSQH/:QS/"+emptyPiles(5)+" - -"+fnd)
	if contains(LegalMoves(s), mvAutocomplete) {
		t.Fatal("autocomplete offered with a face-down card")
	}
}

// R2.6 "never offered when it could not finish": from random all-face-up
// positions (built backwards from a finished game) autocomplete is offered
// and always wins, in one-, two- and three-deck games.
func TestR2_6_AutocompleteAlwaysFinishesWhenOffered(t *testing.T) {
	for _, id := range []string{"klondike", "harp", "tripleharp"} {
		v, _ := LookupVariant(id)
		r := v.Defaults
		played := 0
		for seed := uint64(0); seed < 40; seed++ {
			p := unplayedEnding(r, seed)
			s := &State{}
			s.Apply(DealtEvent(r, p, "", t0))
			if s.Fault != "" {
				t.Fatalf("%s seed %d: %s\n%s", id, seed, s.Fault, p)
			}
			if s.onFoundations() == r.Cards() {
				continue
			}
			if !contains(LegalMoves(s), mvAutocomplete) {
				t.Fatalf("%s seed %d: autocomplete not offered in %s", id, seed, p)
			}
			evs := mustPlay(t, s, mvAutocomplete, sec(1))
			if s.Status != StatusWon || evs[len(evs)-1].Type != EventGameWon {
				t.Fatalf("%s seed %d: autocomplete ended %s", id, seed, s.Status)
			}
			for _, e := range evs {
				if !e.Data.Auto || (e.Type == EventCardsMoved && e.Data.Count != 1) {
					t.Fatalf("%s seed %d: event %+v", id, seed, e)
				}
			}
			played++
		}
		if played < 30 {
			t.Fatalf("%s: only %d endings with cards to place", id, played)
		}
	}
}

// unplayedEnding builds an all-face-up ending: from all cards on the
// foundations it moves random foundation tops back onto tableau piles that
// take them (R1.5), so every tableau pile is a run.
func unplayedEnding(r Rules, seed uint64) Position {
	rng := splitMix64{state: seed}
	found := make([][]Card, r.Foundations)
	for i := range found {
		for rank := Ace; rank <= King; rank++ {
			found[i] = append(found[i], NewCard(rank, Suit(i%4)))
		}
	}
	tab := make([][]Card, r.Piles)
	steps := int(rng.bounded(uint64(r.Cards())))
	for k := 0; k < steps; k++ {
		i := int(rng.bounded(uint64(len(found))))
		if len(found[i]) == 0 {
			continue
		}
		c := found[i][len(found[i])-1]
		j := int(rng.bounded(uint64(len(tab))))
		ok := len(tab[j]) == 0 && c.Rank() == King || len(tab[j]) > 0 && fitsOnTableau(c, tab[j][len(tab[j])-1])
		if ok {
			tab[j] = append(tab[j], c)
			found[i] = found[i][:len(found[i])-1]
		}
	}
	p := Position{Foundations: found}
	for _, cards := range tab {
		p.Tableau = append(p.Tableau, PileLayout{Up: cards})
	}
	return p
}

// R2.7: resign ends the game as lost; no command after it.
func TestR2_7_ResignIsLost(t *testing.T) {
	s, _ := newTestGame(t, "klondike", 5, Options{})
	mustPlay(t, s, mvDraw, sec(1))
	evs := mustPlay(t, s, mvResign, sec(2))
	if got := evSummary(evs); !reflect.DeepEqual(got, []string{"game_resigned"}) {
		t.Fatalf("events %q", got)
	}
	if s.Status != StatusLost || !s.EndedAt.Equal(sec(2)) || s.Moves != 2 {
		t.Fatalf("status %s ended %v moves %d", s.Status, s.EndedAt, s.Moves)
	}
	if LegalMoves(s) != nil {
		t.Fatal("moves offered after resigning")
	}
	for _, m := range []Move{mvDraw, mvResign, mvUndo} {
		_, err := decideApply(t, s, m, sec(3))
		wantReason(t, err, ReasonGameOver)
	}
	// Resigning before any move is allowed too.
	f, _ := newTestGame(t, "relaxed", 5, Options{})
	mustPlay(t, f, mvResign, sec(1))
	if f.Status != StatusLost {
		t.Fatal(f.Status)
	}
}

// R2.8: the win is recorded in the same command as the move that completes
// the foundations, by every path, once; nothing is accepted after it.
func TestR2_8_WinOnEveryPath(t *testing.T) {
	last := ":KS/" + emptyPiles(6) + " - - " + foundUpto("KC", "KD", "KH", "QS") + " 0"
	runRuleCases(t, []ruleCase{
		{name: "player move", variant: "klondike", pos: last, move: mvCards("tableau/0", "foundation", 1),
			want: []string{"cards_moved tableau/0->foundation/3 KS", "game_won auto"}},
		{name: "player move from the waste", variant: "klondike-draw3",
			pos:  emptyPiles(7) + " - KS " + foundUpto("KC", "KD", "KH", "QS") + " 0",
			move: mvCards("waste", "foundation/3", 1), want: []string{"cards_moved waste->foundation/3 KS", "game_won auto"}},
		{name: "autocomplete", variant: "tripleharp",
			pos: ":KS/" + emptyPiles(11) + " - - " +
				foundUpto("KC", "KC", "KC", "KD", "KD", "KD", "KH", "KH", "KH", "KS", "KS", "QS") + " 0",
			move: mvAutocomplete, want: []string{"cards_moved tableau/0->foundation/11 KS auto", "game_won auto"}},
		{name: "take-back chain (relaxed)", variant: "relaxed",
			pos:    ":KS/" + emptyPiles(6) + " - QS " + foundUpto("KC", "KD", "KH", "JS") + " 0",
			before: []Move{mvTakeBack("foundation/2", "tableau/1")},
			move:   mvCards("waste", "tableau/1", 1),
			want: []string{
				"cards_moved waste->tableau/1 QS",
				"cards_moved tableau/1->foundation/3 QS auto",
				"cards_moved tableau/0->foundation/3 KS auto",
				"cards_moved tableau/1->foundation/2 KH auto",
				"game_won auto",
			}},
		{name: "take-back chain (tripleharp)", variant: "tripleharp",
			pos: ":KS/" + emptyPiles(11) + " - QS " +
				foundUpto("KC", "KC", "KC", "KD", "KD", "KD", "KH", "KH", "KH", "KS", "KS", "JS") + " 0",
			before: []Move{mvTakeBack("foundation/8", "tableau/1"), mvCards("waste", "tableau/1", 1),
				mvCards("tableau/1", "foundation", 1), mvCards("tableau/0", "foundation", 1)},
			move: mvCards("tableau/1", "foundation", 1),
			want: []string{"cards_moved tableau/1->foundation/8 KH", "game_won auto"}},
	})
	s := setupPos(t, "klondike", Options{}, last)
	mustPlay(t, s, mvCards("tableau/0", "foundation", 1), sec(42))
	if s.Status != StatusWon || !s.EndedAt.Equal(sec(42)) {
		t.Fatalf("status %s ended %v", s.Status, s.EndedAt)
	}
	for _, m := range []Move{mvDraw, mvUndo, mvResign, mvAutocomplete} {
		_, _, err := Decide(s, m, sec(43))
		if !errors.Is(err, ErrGameOver) {
			t.Fatalf("%v after the win: %v", m, err)
		}
	}
	// A second win event does not fit: recorded once.
	again := Event{Version: s.Version + 1, Type: EventGameWon, OccurredAt: sec(44), Data: EventData{V: 1, Move: s.Moves, Auto: true}}
	s.Apply(again)
	if s.Fault == "" || s.Status != StatusWon || !s.EndedAt.Equal(sec(42)) {
		t.Fatalf("second win: fault %q status %s", s.Fault, s.Status)
	}
	// A win with cards outside the foundations does not fit either.
	n := setupPos(t, "klondike", Options{}, last)
	n.Apply(Event{Version: 2, Type: EventGameWon, OccurredAt: sec(1), Data: EventData{V: 1, Move: 1, Auto: true}})
	if n.Fault == "" || n.Status != StatusInProgress {
		t.Fatal("premature win accepted")
	}
}

// ---- R3 Variants -------------------------------------------------------------

// R3: each row of the table in docs/rules.md, transcribed.
func TestR3_VariantRows(t *testing.T) {
	type row struct {
		decks, piles, foundations, draw, passes int
		sequences, takeBack                     bool
		flip                                    FlipMode
		auto                                    AutocompleteMode
		scoring                                 Scoring
		timeLimit                               int
		drawChoices                             []int
	}
	want := map[string]row{
		"klondike":       {1, 7, 4, 1, 1, true, false, FlipAuto, AutocompleteOffered, ScoringNone, 0, []int{1}},
		"klondike-draw3": {1, 7, 4, 3, 3, true, false, FlipAuto, AutocompleteOffered, ScoringNone, 0, []int{3}},
		"klassik":        {1, 7, 4, 3, 0, true, true, FlipPlayer, AutocompleteOffered, ScoringKlassik, 300, []int{3}},
		"relaxed":        {1, 7, 4, 1, 0, true, true, FlipPlayer, AutocompleteAutomatic, ScoringNone, 0, []int{1, 3}},
		"tripleharp":     {3, 12, 12, 1, 4, false, true, FlipAuto, AutocompleteOffered, ScoringNone, 0, []int{1}},
		"harp":           {2, 9, 8, 1, 4, false, true, FlipAuto, AutocompleteOffered, ScoringNone, 0, []int{1}},
	}
	vs := Variants()
	if len(vs) != len(want) {
		t.Fatalf("%d variants, RULES R3 has %d", len(vs), len(want))
	}
	for _, v := range vs {
		t.Run(v.ID, func(t *testing.T) {
			w, ok := want[v.ID]
			if !ok {
				t.Fatalf("variant %q is not in R3", v.ID)
			}
			d := v.Defaults
			got := row{d.Decks, d.Piles, d.Foundations, d.Draw, d.Passes, d.Sequences, d.TakeBack, d.Flip, d.Autocomplete,
				d.Scoring, d.TimeLimitS, v.DrawChoices}
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("row\n got %+v\nwant %+v", got, w)
			}
			if d.Variant != v.ID || d.Cards() != 52*w.decks || w.foundations != 4*w.decks {
				t.Fatalf("variant %q cards %d", d.Variant, d.Cards())
			}
			lv, err := LookupVariant(v.ID)
			if err != nil || lv.ID != v.ID {
				t.Fatal(err)
			}
		})
	}
	// Undo is not in the R3 table: the engine allows it by default only in
	// relaxed (seed 003); see variant.go.
	for _, v := range vs {
		if v.Defaults.Undo != (v.ID == "relaxed") {
			t.Errorf("%s: undo default %v", v.ID, v.Defaults.Undo)
		}
	}
	// Variants returns a copy.
	vs[0].DrawChoices[0] = 9
	vs[0].Defaults.Draw = 9
	if v, _ := LookupVariant(vs[0].ID); v.Defaults.Draw == 9 || Variants()[0].DrawChoices[0] == 9 {
		t.Fatal("Variants exposes the table")
	}
	_, err := LookupVariant("spider")
	var ue *UnknownVariantError
	if !errors.As(err, &ue) || ue.ID != "spider" {
		t.Fatalf("unknown variant: %v", err)
	}
}

// R3 options: Variant.Resolve applies options, keeps a game ranked only with
// the defaults (the draw a variant offers aside), and refuses what the
// variant does not offer with an *OptionError naming the option.
func TestR3_OptionsResolve(t *testing.T) {
	for _, tc := range []struct {
		variant string
		o       Options
		check   func(Rules) bool
		ranked  bool
		refused string // option name of the *OptionError, "" if accepted
	}{
		{"klondike", Options{}, func(r Rules) bool { return r.Draw == 1 }, true, ""},
		{"klondike", Options{Draw: ptr(1)}, func(r Rules) bool { return r.Draw == 1 }, true, ""},
		{"klondike", Options{Draw: ptr(3)}, nil, false, "draw"},
		{"klondike-draw3", Options{Draw: ptr(1)}, nil, false, "draw"},
		{"klassik", Options{Draw: ptr(1)}, nil, false, "draw"},
		{"relaxed", Options{Draw: ptr(3)}, func(r Rules) bool { return r.Draw == 3 }, true, ""},
		{"relaxed", Options{Draw: ptr(2)}, nil, false, "draw"},
		{"relaxed", Options{Draw: ptr(0)}, nil, false, "draw"},
		{"klondike", Options{Scoring: ptr(ScoringStandard)}, func(r Rules) bool { return r.Scoring == ScoringStandard }, false, ""},
		{"klondike", Options{Scoring: ptr(ScoringVegas)}, func(r Rules) bool { return r.Scoring == ScoringVegas }, false, ""},
		{"klondike", Options{Scoring: ptr(ScoringNone)}, nil, true, ""},
		{"klassik", Options{Scoring: ptr(ScoringKlassik)}, nil, true, ""},
		{"klassik", Options{Scoring: ptr(ScoringNone)}, func(r Rules) bool { return r.Scoring == ScoringNone }, false, ""},
		{"klondike", Options{Scoring: ptr(Scoring("golf"))}, nil, false, "scoring"},
		{"tripleharp", Options{Scoring: ptr(ScoringVegas)}, nil, false, "scoring"},
		{"harp", Options{Scoring: ptr(ScoringKlassik)}, nil, false, "scoring"},
		{"tripleharp", Options{Scoring: ptr(ScoringNone)}, nil, true, ""},
		{"klondike", Options{TakeBack: ptr(true)}, func(r Rules) bool { return r.TakeBack }, false, ""},
		{"klondike", Options{TakeBack: ptr(false)}, nil, true, ""},
		{"tripleharp", Options{TakeBack: ptr(false)}, func(r Rules) bool { return !r.TakeBack }, false, ""},
		{"klondike", Options{Flip: ptr(FlipPlayer)}, func(r Rules) bool { return r.Flip == FlipPlayer }, false, ""},
		{"relaxed", Options{Flip: ptr(FlipPlayer)}, nil, true, ""},
		{"klondike", Options{Flip: ptr(FlipMode("sideways"))}, nil, false, "flip"},
		{"klondike", Options{Autocomplete: ptr(AutocompleteAutomatic)}, func(r Rules) bool { return r.Autocomplete == AutocompleteAutomatic }, false, ""},
		{"relaxed", Options{Autocomplete: ptr(AutocompleteAutomatic)}, nil, true, ""},
		{"relaxed", Options{Autocomplete: ptr(AutocompleteMode("never"))}, nil, false, "autocomplete"},
		{"klassik", Options{TimeLimitS: ptr(300)}, nil, true, ""},
		{"klassik", Options{TimeLimitS: ptr(0)}, func(r Rules) bool { return r.TimeLimitS == 0 }, false, ""},
		{"klondike", Options{TimeLimitS: ptr(MinTimeLimitS)}, func(r Rules) bool { return r.TimeLimitS == MinTimeLimitS }, false, ""},
		{"klondike", Options{TimeLimitS: ptr(MaxTimeLimitS)}, nil, false, ""},
		{"klondike", Options{TimeLimitS: ptr(MinTimeLimitS - 1)}, nil, false, "time_limit_s"},
		{"klondike", Options{TimeLimitS: ptr(MaxTimeLimitS + 1)}, nil, false, "time_limit_s"},
		{"klondike", Options{TimeLimitS: ptr(-1)}, nil, false, "time_limit_s"},
		{"klondike", Options{Undo: ptr(true)}, func(r Rules) bool { return r.Undo }, false, ""},
		{"relaxed", Options{Undo: ptr(true)}, nil, true, ""},
		{"relaxed", Options{Undo: ptr(false)}, func(r Rules) bool { return !r.Undo }, false, ""},
		{"relaxed", Options{Draw: ptr(3), Undo: ptr(false)}, nil, false, ""},
	} {
		v, err := LookupVariant(tc.variant)
		if err != nil {
			t.Fatal(err)
		}
		name := tc.variant + " " + mustJSON(t, tc.o)
		r, ranked, err := v.Resolve(tc.o)
		if tc.refused != "" {
			var oe *OptionError
			if !errors.As(err, &oe) || oe.Option != tc.refused || oe.Detail == "" {
				t.Errorf("%s: %v, want *OptionError for %s", name, err, tc.refused)
			}
			if ranked || r != (Rules{}) {
				t.Errorf("%s: refused options returned rules", name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if ranked != tc.ranked {
			t.Errorf("%s: ranked %v, want %v", name, ranked, tc.ranked)
		}
		if tc.check != nil && !tc.check(r) {
			t.Errorf("%s: rules %+v", name, r)
		}
		if r.Variant != v.ID || r.Decks != v.Defaults.Decks || r.Piles != v.Defaults.Piles || r.Passes != v.Defaults.Passes {
			t.Errorf("%s: options changed the deal shape: %+v", name, r)
		}
		// Every accepted combination deals a game that replays.
		if err := r.Validate(); err != nil {
			t.Errorf("%s: resolved rules do not validate: %v", name, err)
		}
		s := &State{}
		s.Apply(DealtEvent(r, Deal(r, 3), "", t0))
		if s.Fault != "" {
			t.Errorf("%s: %s", name, s.Fault)
		}
	}
	// Rules that no option can produce are refused where a log's first
	// event is checked.
	base := variants[0].Defaults
	for _, tc := range []struct {
		option string
		change func(*Rules)
	}{
		{"decks", func(r *Rules) { r.Decks = 4 }},
		{"foundations", func(r *Rules) { r.Foundations = 1 << 50 }},
		{"piles", func(r *Rules) { r.Piles = 0 }},
		{"draw", func(r *Rules) { r.Draw = 2 }},
		{"passes", func(r *Rules) { r.Passes = -1 }},
		{"flip", func(r *Rules) { r.Flip = "" }},
		{"autocomplete", func(r *Rules) { r.Autocomplete = "never" }},
		{"scoring", func(r *Rules) { r.Scoring = "golf" }},
		{"time_limit_s", func(r *Rules) { r.TimeLimitS = 5 }},
	} {
		r := base
		tc.change(&r)
		var oe *OptionError
		if err := r.Validate(); !errors.As(err, &oe) || oe.Option != tc.option {
			t.Errorf("%s: Validate = %v", tc.option, err)
		}
	}
}

// ---- R4 Scoring --------------------------------------------------------------

func scoreAt(t testing.TB, s *State, now time.Time) int {
	t.Helper()
	v, ok := s.ScoreAt(now)
	if !ok {
		t.Fatalf("no score for scoring %q", s.Rules.Scoring)
	}
	return v
}

// R4.1: scoring none reports no points, but moves and elapsed time.
func TestR4_1_NoneScoring(t *testing.T) {
	s, _ := newTestGame(t, "klondike", 3, Options{})
	mustPlay(t, s, mvDraw, sec(2))
	mustPlay(t, s, mvDraw, sec(5))
	if _, ok := s.ScoreAt(sec(10)); ok {
		t.Fatal("scoring none gave a score")
	}
	v := NewView(s, sec(10))
	if v.Score != nil || v.Moves != 2 || v.ElapsedMS != 8000 {
		t.Fatalf("view score %v moves %d elapsed %d", v.Score, v.Moves, v.ElapsedMS)
	}
}

// R4.2 klassik: each part of the score.
func TestR4_2_KlassikFoundationPoints(t *testing.T) {
	for _, tc := range []struct {
		card string
		want int
	}{{"AS", 5}, {"2S", 10}, {"5S", 25}, {"9S", 45}, {"TS", 50}, {"JS", 50}, {"QS", 50}, {"KS", 50}} {
		c, _ := ParseCard(tc.card)
		below := "-"
		if c.Rank() > 1 {
			below = NewCard(c.Rank()-1, Spades).String()
		}
		rest := ""
		if c.Rank() < 13 {
			rest = suitRun(NewCard(c.Rank()+1, Spades).String(), "KS")
		} else {
			rest = "-"
		}
		s := setupPos(t, "klassik", Options{}, ":"+tc.card+"/"+emptyPiles(6)+" "+rest+" - "+foundUpto("KC", "KD", "KH", below)+" 0")
		mustPlay(t, s, mvCards("tableau/0", "foundation", 1), sec(1))
		want := tc.want
		if s.Status == StatusWon { // the last card: + 1,700 and 5 per second left
			want += 1700 + 5*299
		}
		if got := scoreAt(t, s, sec(1)); got != want {
			t.Errorf("R4.2 %s to a foundation: %d points, want %d", tc.card, got, want)
		}
	}
}

func TestR4_2_KlassikTakenBackAndReplacedEarnsNothing(t *testing.T) {
	s := setupPos(t, "klassik", Options{}, ":9S/:TH/"+emptyPiles(5)+" JHQHKHTSJSQSKS - "+foundUpto("KC", "KD", "9H", "8S")+" 0")
	mustPlay(t, s, mvCards("tableau/0", "foundation/3", 1), sec(1))
	if got := scoreAt(t, s, sec(1)); got != 45 {
		t.Fatalf("first placement %d, want 45", got)
	}
	mustPlay(t, s, mvTakeBack("foundation/3", "tableau/1"), sec(2))
	if got := scoreAt(t, s, sec(2)); got != 45 {
		t.Fatalf("after take-back %d, want 45 (klassik takes nothing back)", got)
	}
	mustPlay(t, s, mvCards("tableau/1", "foundation/3", 1), sec(3))
	if got := scoreAt(t, s, sec(3)); got != 45 {
		t.Fatalf("placed again %d, want 45 (no points the second time)", got)
	}
}

func TestR4_2_KlassikFlipPoints(t *testing.T) {
	s := setupPos(t, "klassik", Options{}, "KS:/QH:/"+emptyPiles(5)+" 9HTHJHKHTSJSQS - "+posBuildFound+" 0")
	mustPlay(t, s, mvFlip("tableau/0"), sec(1))
	if got := scoreAt(t, s, sec(1)); got != 10 {
		t.Fatalf("one flip %d, want 10", got)
	}
	mustPlay(t, s, mvFlip("tableau/1"), sec(2))
	if got := scoreAt(t, s, sec(2)); got != 20 {
		t.Fatalf("two flips %d, want 20", got)
	}
	// A full deal has 21 face-down cards: at most 210 points for flips.
	d, _ := newTestGame(t, "klassik", 1, Options{})
	down := 0
	for _, p := range d.Tableau {
		down += p.Down
	}
	if down != 21 {
		t.Fatalf("%d face-down cards in a klassik deal", down)
	}
}

// Recycles: the first is free, each further costs 20; the score never shows
// below 0 but a penalty taken at 0 still counts later.
func TestR4_2_KlassikRecyclePenaltyAndFloor(t *testing.T) {
	s := setupPos(t, "klassik", Options{}, ":KS/:KH/"+emptyPiles(5)+" QS - "+foundUpto("KC", "KD", "QH", "JS")+" 0")
	mustPlay(t, s, mvCards("tableau/1", "foundation", 1), sec(1)) // +50
	want := []int{50, 50, 50, 30, 30, 10, 10, 0, 0, 0}            // after each click: draw, recycle, draw, …
	for i, w := range want {
		mustPlay(t, s, mvDraw, sec(float64(2+i)))
		if got := scoreAt(t, s, sec(float64(2+i))); got != w {
			t.Fatalf("click %d (recycles %d): %d, want %d", i+1, s.Recycles, got, w)
		}
	}
	// Recycles 5: penalty 80; 50 - 80 = -30 shows 0. Placing QS (+50) shows 20.
	if s.Recycles != 5 {
		t.Fatalf("recycles %d", s.Recycles)
	}
	mustPlay(t, s, mvDraw, sec(19))
	mustPlay(t, s, mvCards("waste", "foundation", 1), sec(20))
	if got := scoreAt(t, s, sec(20)); got != 20 {
		t.Fatalf("after the penalty at 0: %d, want 20", got)
	}
}

// Won: +1,700 and 5 per whole second left of the 300 s limit; only when won.
func TestR4_2_KlassikWinAndTimeBonus(t *testing.T) {
	pos := ":KS/:QS/" + emptyPiles(5) + " - - " + foundUpto("KC", "KD", "KH", "JS") + " 0"
	s := setupPos(t, "klassik", Options{}, pos)
	mustPlay(t, s, mvCards("tableau/1", "foundation", 1), sec(10))
	if got := scoreAt(t, s, sec(100)); got != 50 {
		t.Fatalf("before the win %d, want 50 (no time bonus yet)", got)
	}
	mustPlay(t, s, mvCards("tableau/0", "foundation", 1), sec(100.7))
	if s.Status != StatusWon {
		t.Fatal(s.Status)
	}
	// 50 + 50 + 1700 + 5*floor(300-100.7).
	if got, want := scoreAt(t, s, sec(1000)), 100+1700+5*199; got != want {
		t.Fatalf("won: %d, want %d", got, want)
	}
	// Resigned: no bonus.
	l := setupPos(t, "klassik", Options{}, pos)
	mustPlay(t, l, mvCards("tableau/1", "foundation", 1), sec(10))
	mustPlay(t, l, mvResign, sec(11))
	if got := scoreAt(t, l, sec(11)); got != 50 {
		t.Fatalf("resigned %d, want 50", got)
	}
	// Expired: no bonus.
	x := setupPos(t, "klassik", Options{}, pos)
	mustPlay(t, x, mvCards("tableau/1", "foundation", 1), sec(10))
	for _, e := range Expire(x, sec(400)) {
		x.Apply(e)
	}
	if got := scoreAt(t, x, sec(400)); got != 50 || x.Status != StatusExpired {
		t.Fatalf("expired %d %s, want 50", got, x.Status)
	}
	// Maximum of R4.2: 1,700 + 1,700 + 210 + 5*300 needs a 0-second win; a
	// whole real game won at t seconds scores 3,400 + 210 + 5*(300-t) less
	// recycles (TestR42KlassikScoreOfSolverLines plays those).
}

// R4.3 standard: each item of the Windows rules.
func TestR4_3_StandardItems(t *testing.T) {
	std := Options{Scoring: ptr(ScoringStandard)}
	f := " " + posBuildFound + " 0"
	for _, tc := range []struct {
		name    string
		variant string
		pos     string
		moves   []Move
		want    int // Points after the moves
	}{
		{"waste to tableau +5", "relaxed", ":TS/" + emptyPiles(6) + " THJHQHKHJSQSKS 9H" + f,
			[]Move{mvCards("waste", "tableau/0", 1)}, 5},
		{"waste to foundation +10", "relaxed", ":TS/" + emptyPiles(6) + " THJHQHKHJSQSKS 9H" + f,
			[]Move{mvCards("waste", "foundation", 1)}, 10},
		{"tableau to foundation +10", "relaxed", ":TS9H/" + emptyPiles(6) + " THJHQHKHJSQSKS -" + f,
			[]Move{mvCards("tableau/0", "foundation", 1)}, 10},
		{"card turned up +5 (player)", "relaxed", "TS:9H/" + emptyPiles(6) + " THJHQHKHJSQSKS -" + f,
			[]Move{mvCards("tableau/0", "foundation", 1), mvFlip("tableau/0")}, 15},
		{"card turned up +5 (auto)", "klondike", "TS:9H/" + emptyPiles(6) + " THJHQHKHJSQSKS -" + f,
			[]Move{mvCards("tableau/0", "foundation", 1)}, 15},
		{"foundation to tableau -15", "relaxed", ":TS9H/" + emptyPiles(6) + " THJHQHKHJSQSKS -" + f,
			[]Move{mvCards("tableau/0", "foundation", 1), mvTakeBack("foundation/2", "tableau/0")}, -5},
		{"tableau to tableau 0", "relaxed", ":TS/:9H/" + emptyPiles(5) + " THJHQHKHJSQSKS -" + f,
			[]Move{mvCards("tableau/1", "tableau/0", 1)}, 0},
		{"draw 0", "relaxed", ":TS/:9H/" + emptyPiles(5) + " THJHQHKHJSQSKS -" + f,
			[]Move{mvDraw, mvDraw}, 0},
	} {
		s := setupPos(t, tc.variant, std, tc.pos)
		for i, m := range tc.moves {
			mustPlay(t, s, m, sec(float64(i+1)))
		}
		if s.Score.Points != tc.want {
			t.Errorf("R4.3 %s: points %d, want %d", tc.name, s.Score.Points, tc.want)
		}
		if got := scoreAt(t, s, s.LastAt); got != max(0, tc.want) {
			t.Errorf("R4.3 %s: shown %d, want max(0, %d)", tc.name, got, tc.want)
		}
	}
}

// R4.3 recycles: draw 1 -100 each; draw 3 -20 from the 4th recycle on.
func TestR4_3_StandardRecycles(t *testing.T) {
	for _, tc := range []struct {
		draw int
		want []int // Points after recycle 1, 2, …
	}{
		{1, []int{-100, -200, -300, -400, -500}},
		{3, []int{0, 0, 0, -20, -40, -60}},
	} {
		s := setupPos(t, "relaxed", Options{Draw: ptr(tc.draw), Scoring: ptr(ScoringStandard)},
			":KS/"+emptyPiles(6)+" QS - "+foundUpto("KC", "KD", "KH", "JS")+" 0")
		now := 0.0
		for i, w := range tc.want {
			now++
			mustPlay(t, s, mvDraw, sec(now)) // draw
			now++
			evs := mustPlay(t, s, mvDraw, sec(now)) // recycle
			if evs[0].Type != EventStockRecycled {
				t.Fatalf("draw %d: %q", tc.draw, evSummary(evs))
			}
			if s.Score.Points != w {
				t.Fatalf("draw %d, recycle %d: points %d, want %d", tc.draw, i+1, s.Score.Points, w)
			}
		}
		if got := scoreAt(t, s, s.LastAt); got != 0 {
			t.Fatalf("shown %d, want max(0, …) = 0", got)
		}
	}
}

// R4.3 time: -2 for every full 10 s; on a win after more than 30 s,
// + 700,000 / elapsed whole seconds.
func TestR4_3_StandardTime(t *testing.T) {
	std := Options{Scoring: ptr(ScoringStandard)}
	pos := ":KS/:QS/:KH/:QH/" + emptyPiles(3) + " - - " + foundUpto("KC", "KD", "JH", "JS") + " 0"
	s := setupPos(t, "klondike", std, pos)
	mustPlay(t, s, mvCards("tableau/1", "foundation", 1), sec(0)) // clock starts, +10
	mustPlay(t, s, mvCards("tableau/3", "foundation", 1), sec(1)) // +10
	for _, tc := range []struct {
		at   float64
		want int
	}{{0, 20}, {9.999, 20}, {10, 18}, {19.9, 18}, {20, 16}, {95, 2}, {100, 0}, {1000, 0}} {
		if got := scoreAt(t, s, sec(tc.at)); got != tc.want {
			t.Errorf("at %.3f s: %d, want %d", tc.at, got, tc.want)
		}
	}
	for _, tc := range []struct {
		winAt float64
		want  int
	}{
		{29, 40 - 2*2},                  // no bonus at 30 s or less
		{30, 40 - 2*3},                  // exactly 30 s: not more than 30
		{31, 40 - 2*3 + 700000/31},      // bonus
		{125.9, 40 - 2*12 + 700000/125}, // whole seconds
	} {
		w := setupPos(t, "klondike", std, pos)
		mustPlay(t, w, mvCards("tableau/1", "foundation", 1), sec(0))
		mustPlay(t, w, mvCards("tableau/3", "foundation", 1), sec(1))
		mustPlay(t, w, mvCards("tableau/0", "foundation", 1), sec(2))
		mustPlay(t, w, mvCards("tableau/2", "foundation", 1), sec(tc.winAt))
		if w.Status != StatusWon {
			t.Fatal(w.Status)
		}
		if got := scoreAt(t, w, sec(5000)); got != tc.want {
			t.Errorf("won at %.1f s: %d, want %d", tc.winAt, got, tc.want)
		}
	}
}

// R4.4 vegas: -52 at the start, +5 per card on the foundations, a card
// leaving a foundation takes its 5 back.
func TestR4_4_Vegas(t *testing.T) {
	s, _ := newTestGame(t, "klondike", 9, Options{Scoring: ptr(ScoringVegas)})
	if got := scoreAt(t, s, t0); got != -52 {
		t.Fatalf("start %d, want -52", got)
	}
	v := setupPos(t, "relaxed", Options{Scoring: ptr(ScoringVegas)}, ":TS9H/"+emptyPiles(6)+" THJHQHKHJSQSKS - "+posBuildFound+" 0")
	base := -52 + 5*v.onFoundations()
	if got := scoreAt(t, v, t0); got != base {
		t.Fatalf("start %d, want %d", got, base)
	}
	mustPlay(t, v, mvCards("tableau/0", "foundation", 1), sec(1))
	if got := scoreAt(t, v, sec(1)); got != base+5 {
		t.Fatalf("after a card to the foundation %d, want %d", got, base+5)
	}
	mustPlay(t, v, mvTakeBack("foundation/2", "tableau/0"), sec(2))
	if got := scoreAt(t, v, sec(2)); got != base {
		t.Fatalf("after take-back %d, want %d", got, base)
	}
	// Passes as the variant says: klondike vegas keeps its single pass.
	k, _ := newTestGame(t, "klondike", 9, Options{Scoring: ptr(ScoringVegas)})
	if k.Rules.Passes != 1 {
		t.Fatalf("passes %d", k.Rules.Passes)
	}
}

// R4.5: undo restores the score exactly, for every scoring.
func TestR4_5_UndoRestoresScore(t *testing.T) {
	for _, sc := range []Scoring{ScoringStandard, ScoringKlassik, ScoringVegas} {
		s := setupPos(t, "relaxed", Options{Scoring: ptr(sc)}, "KS:TS9H/:KH/"+emptyPiles(5)+" THJHQHJSQS - "+posBuildFound+" 0")
		now, undone := 0.0, 0
		for _, m := range []Move{mvCards("tableau/0", "foundation", 1), mvDraw, mvCards("tableau/0", "foundation", 1),
			mvFlip("tableau/0"), mvDraw, mvDraw, mvDraw, mvDraw, mvDraw, mvDraw, mvTakeBack("foundation/2", "tableau/0")} {
			now++
			beforeScore, beforeShown := s.Score, scoreAt(t, s, sec(now))
			if _, err := decideApply(t, s, m, sec(now)); err != nil {
				continue // not every move fits every step; the ones that do are checked
			}
			now++
			mustPlay(t, s, mvUndo, sec(now))
			if s.Score != beforeScore {
				t.Fatalf("%s: undo of %v: score %+v, want %+v", sc, m, s.Score, beforeScore)
			}
			if sc != ScoringStandard { // standard also counts time
				if got := scoreAt(t, s, sec(now)); got != beforeShown {
					t.Fatalf("%s: undo of %v: shown %d, want %d", sc, m, got, beforeShown)
				}
			}
			now++
			mustPlay(t, s, m, sec(now)) // play it for real and go on
			undone++
		}
		if undone < 8 {
			t.Fatalf("%s: only %d moves were undone", sc, undone)
		}
	}
}

// R4.5: no back-and-forth earns points: foundation -> tableau -> foundation,
// a king between empty piles, in every scoring.
func TestR4_5_NoBackAndForthGain(t *testing.T) {
	for _, sc := range []Scoring{ScoringStandard, ScoringKlassik, ScoringVegas} {
		s := setupPos(t, "relaxed", Options{Scoring: ptr(sc)}, ":JS/:KH/:TH/"+emptyPiles(4)+" JHQHTSQSKS - "+foundUpto("KC", "KD", "9H", "9S")+" 0")
		// Score at a fixed instant so standard's clock does not interfere.
		at := sec(1)
		mustPlay(t, s, mvCards("tableau/2", "foundation/2", 1), at) // TH earns its points once
		start := scoreAt(t, s, at)
		startPoints := s.Score.Points
		for i := 0; i < 5; i++ {
			mustPlay(t, s, mvTakeBack("foundation/2", "tableau/0"), at)
			mustPlay(t, s, mvCards("tableau/0", "foundation/2", 1), at)
			mustPlay(t, s, mvCards("tableau/1", "tableau/2", 1), at) // king between empty piles
			mustPlay(t, s, mvCards("tableau/2", "tableau/1", 1), at)
		}
		if got := scoreAt(t, s, at); got > start || s.Score.Points > startPoints {
			t.Fatalf("%s: back and forth raised the score from %d to %d (points %d -> %d)", sc, start, got, startPoints, s.Score.Points)
		}
		// Foundation -> foundation is never a move.
		_, _, err := Decide(s, mvCards("foundation/2", "foundation/3", 1), at)
		wantReason(t, err, ReasonUseTakeBack)
	}
	// Standard: tableau -> foundation +10, take-back -15: each round trip
	// costs 5.
	s := setupPos(t, "relaxed", Options{Scoring: ptr(ScoringStandard)}, ":JS/"+emptyPiles(6)+" JHQHKHTSQSKS - "+foundUpto("KC", "KD", "TH", "9S")+" 0")
	mustPlay(t, s, mvTakeBack("foundation/2", "tableau/0"), sec(1))
	mustPlay(t, s, mvCards("tableau/0", "foundation/2", 1), sec(1))
	if s.Score.Points != -5 {
		t.Fatalf("round trip: %d points, want -5", s.Score.Points)
	}
}

// ---- R5 Time -------------------------------------------------------------------

// R5.1: event times are the server's UTC time in whole milliseconds, and
// a replay gives the same times.
func TestR5_1_EventTimes(t *testing.T) {
	s, log := newTestGame(t, "klondike", 7, Options{})
	zone := time.FixedZone("X", 5*3600+1800)
	now := time.Date(2026, 11, 29, 18, 0, 1, 123456789, zone)
	evs := mustPlay(t, s, mvDraw, now)
	want := time.Date(2026, 11, 29, 12, 30, 1, 123000000, time.UTC)
	if !evs[0].OccurredAt.Equal(want) || evs[0].OccurredAt.Location() != time.UTC || evs[0].OccurredAt.Nanosecond() != 123000000 {
		t.Fatalf("occurred at %v, want %v", evs[0].OccurredAt, want)
	}
	if FormatTime(evs[0].OccurredAt) != "2026-11-29T12:30:01.123Z" {
		t.Fatal(FormatTime(evs[0].OccurredAt))
	}
	log = append(log, evs...)
	recs, err := Record("g", GenesisHash, log)
	if err != nil {
		t.Fatal(err)
	}
	var decoded []Event
	for _, r := range recs {
		e, err := DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload)
		if err != nil {
			t.Fatal(err)
		}
		decoded = append(decoded, e)
	}
	r, bad := Replay(decoded)
	if bad != 0 || !r.StartedAt.Equal(s.StartedAt) || !r.LastAt.Equal(s.LastAt) || r.Elapsed(sec(100)) != s.Elapsed(sec(100)) {
		t.Fatalf("replayed times differ: %v %v", r.StartedAt, s.StartedAt)
	}
}

// R5.2: the clock starts at creation with a time limit, else at the first
// move; a finished game's elapsed time is its last event minus its start.
func TestR5_2_ClockStart(t *testing.T) {
	k, _ := newTestGame(t, "klassik", 1, Options{})
	if !k.StartedAt.Equal(t0) || k.Elapsed(sec(12)) != 12*time.Second {
		t.Fatalf("klassik: started %v elapsed %v", k.StartedAt, k.Elapsed(sec(12)))
	}
	r, _ := newTestGame(t, "relaxed", 1, Options{TimeLimitS: ptr(60)})
	if !r.StartedAt.Equal(t0) {
		t.Fatal("time-limited relaxed: clock not started at creation")
	}
	s, _ := newTestGame(t, "klondike", 1, Options{})
	if !s.StartedAt.IsZero() || s.Elapsed(sec(50)) != 0 {
		t.Fatal("klondike: clock running before the first move")
	}
	if _, _, err := Decide(s, mvUndo, sec(10)); err == nil {
		t.Fatal("undo accepted")
	}
	if !s.StartedAt.IsZero() {
		t.Fatal("a refused command started the clock")
	}
	mustPlay(t, s, mvDraw, sec(20))
	if !s.StartedAt.Equal(sec(20)) || s.Elapsed(sec(25)) != 5*time.Second {
		t.Fatalf("started %v elapsed %v", s.StartedAt, s.Elapsed(sec(25)))
	}
	mustPlay(t, s, mvResign, sec(31.5))
	if s.Elapsed(sec(5000)) != 11500*time.Millisecond {
		t.Fatalf("finished game elapsed %v, want 11.5 s", s.Elapsed(sec(5000)))
	}
	if v := NewView(s, sec(9999)); v.ElapsedMS != 11500 || v.StartedAt == nil || !v.StartedAt.Equal(sec(20)) {
		t.Fatalf("view elapsed %d", v.ElapsedMS)
	}
}

// R5.3: after the deadline every command is refused with time_expired; the
// expiry is one event; the game ends with the score it had at the deadline.
func TestR5_3_Deadline(t *testing.T) {
	s, _ := newTestGame(t, "klassik", 4, Options{})
	dl, ok := s.Deadline()
	if !ok || !dl.Equal(sec(300)) {
		t.Fatalf("deadline %v %v", dl, ok)
	}
	mustPlay(t, s, mvDraw, sec(299.999))
	for _, at := range []float64{300, 301} {
		_, err := decideApply(t, s, mvDraw, sec(at))
		wantReason(t, err, ReasonTimeExpired)
		if !errors.Is(err, ErrTimeExpired) || errors.Is(err, ErrGameOver) {
			t.Fatalf("at %v s: %v", at, err)
		}
	}
	if Expire(s, sec(299.999)) != nil {
		t.Fatal("expiry before the deadline")
	}
	evs := Expire(s, sec(420))
	if len(evs) != 1 || evs[0].Type != EventGameExpired || !evs[0].Data.Auto || evs[0].Data.Deadline == nil ||
		!evs[0].Data.Deadline.Equal(dl) || evs[0].Version != s.Version+1 || evs[0].Data.Move != s.Moves {
		t.Fatalf("expiry events %+v", evs)
	}
	s.Apply(evs[0])
	if s.Fault != "" || s.Status != StatusExpired || !s.EndedAt.Equal(dl) {
		t.Fatalf("after expiry: fault %q status %s ended %v", s.Fault, s.Status, s.EndedAt)
	}
	if Expire(s, sec(500)) != nil {
		t.Fatal("expiry appended twice")
	}
	_, _, err := Decide(s, mvDraw, sec(500))
	if !errors.Is(err, ErrGameOver) {
		t.Fatalf("after the expiry: %v", err)
	}
	if s.Elapsed(sec(1000)) != 300*time.Second {
		t.Fatalf("elapsed %v, want the 300 s of the limit", s.Elapsed(sec(1000)))
	}
	// The expiry is refused before the deadline and in a game without limit.
	n, _ := newTestGame(t, "klassik", 4, Options{})
	bad := Event{Version: 2, Type: EventGameExpired, OccurredAt: sec(100), Data: EventData{V: 1, Auto: true, Deadline: &dl}}
	n.Apply(bad)
	if n.Fault == "" || n.Status != StatusInProgress {
		t.Fatal("early expiry applied")
	}
	if Expire(setupPos(t, "klondike", Options{}, ":KS/"+emptyPiles(6)+" - - "+foundUpto("KC", "KD", "KH", "QS")+" 0"), sec(1e6)) != nil {
		t.Fatal("a game without limit expired")
	}
}

// R5.3: the score of an expired game is the score at the deadline, even
// where time counts (standard scoring with a time limit).
func TestR5_3_ScoreAtDeadline(t *testing.T) {
	s := setupPos(t, "klondike", Options{Scoring: ptr(ScoringStandard), TimeLimitS: ptr(60)},
		":KS/:QS/:KH/:QH/"+emptyPiles(3)+" - - "+foundUpto("KC", "KD", "JH", "JS")+" 0")
	mustPlay(t, s, mvCards("tableau/1", "foundation", 1), sec(1))
	mustPlay(t, s, mvCards("tableau/3", "foundation", 1), sec(2))
	atDeadline := scoreAt(t, s, sec(60))
	if atDeadline != 20-2*6 {
		t.Fatalf("at the deadline %d", atDeadline)
	}
	for _, e := range Expire(s, sec(3600)) {
		s.Apply(e)
	}
	for _, at := range []float64{60, 3600, 1e5} {
		if got := scoreAt(t, s, sec(at)); got != atDeadline {
			t.Fatalf("expired game scored %d at %v s, want %d", got, at, atDeadline)
		}
	}
}

// ---- R6 Deals (the shuffle's vectors are in deal_test.go) ----------------------

// R6.2: the first event holds the rules and the full deal; a log replays
// from its events alone, without the shuffle, also for a deal no seed made.
func TestR6_2_FirstEventHoldsTheDeal(t *testing.T) {
	_, log := playRandom(t, "klondike-draw3", 17, 120, Options{})
	first := log[0]
	v, _ := LookupVariant("klondike-draw3")
	if first.Type != EventGameDealt || first.Version != 1 || first.Data.Rules == nil || *first.Data.Rules != v.Defaults {
		t.Fatalf("first event %+v", first)
	}
	if got, want := first.Data.Deal.String(), Deal(v.Defaults, 17).String(); got != want {
		t.Fatalf("deal in the first event\n got %s\nwant %s", got, want)
	}
	// Encode, decode, replay: the same state.
	recs, err := Record("g", GenesisHash, log)
	if err != nil {
		t.Fatal(err)
	}
	var decoded []Event
	for _, r := range recs {
		e, err := DecodeEvent(r.Version, r.Type, r.OccurredAt, r.Payload)
		if err != nil {
			t.Fatal(err)
		}
		decoded = append(decoded, e)
	}
	if n := cardCount(mustReplay(t, decoded[:1])); len(n) != 52 {
		t.Fatalf("the decoded deal holds %d distinct cards", len(n))
	}
	a, b := mustReplay(t, log), mustReplay(t, decoded)
	if mustJSON(t, a) != mustJSON(t, b) {
		t.Fatal("the decoded log replays differently")
	}
	// A hand-made deal (no seed can be asked for it) replays the same way.
	p, _ := ParsePosition("QS:KH/" + emptyPiles(6) + " 9HTHJHQHTSJSKS - " + posBuildFound + " 0")
	s := &State{}
	s.Apply(DealtEvent(v.Defaults, p, "", t0))
	if s.Fault != "" || s.Position().String() != p.String() {
		t.Fatalf("custom deal: %q %s", s.Fault, s.Position())
	}
}

func mustReplay(t testing.TB, log []Event) *State {
	t.Helper()
	s, bad := Replay(log)
	if bad != 0 {
		t.Fatalf("replay fault at %d: %s", bad, s.Fault)
	}
	return s
}

// R6.3: every participant of a same-deal duel gets the same cards in the
// same order, whatever options change that do not shape the deal.
func TestR6_3_SameDealForEveryone(t *testing.T) {
	v, _ := LookupVariant("relaxed")
	r1, _, _ := v.Resolve(Options{})
	r3, _, _ := v.Resolve(Options{Draw: ptr(3), Scoring: ptr(ScoringVegas)})
	for _, seed := range []uint64{0, 1, 2026, 1 << 63} {
		a, b := Deal(r1, seed), Deal(r3, seed)
		if a.String() != b.String() {
			t.Fatalf("seed %d: deals differ", seed)
		}
		sa, _ := newTestGame(t, "relaxed", seed, Options{})
		sb, _ := newTestGame(t, "relaxed", seed, Options{Draw: ptr(3)})
		if !reflect.DeepEqual(sa.Position(), sb.Position()) {
			t.Fatalf("seed %d: states differ", seed)
		}
	}
}

// R6.4: while in progress, a view shows face-down cards and the stock only
// as counts; after the end, everything.
func TestR6_4_ViewHidesThenReveals(t *testing.T) {
	s, _ := newTestGame(t, "klondike", 8, Options{})
	mustPlay(t, s, mvDraw, sec(1))
	v := NewView(s, sec(2))
	if v.Revealed || v.Stock != nil || v.StockCount != 23 || v.Commitment != s.Commitment {
		t.Fatalf("in progress: revealed %v stock %v count %d", v.Revealed, v.Stock, v.StockCount)
	}
	down := 0
	for i, p := range v.Tableau {
		if p.FaceDownCards != nil || p.FaceDown != i || len(p.Cards) != 1 {
			t.Fatalf("in progress: pile %d %+v", i, p)
		}
		down += p.FaceDown
	}
	if down != 21 || len(v.Waste) != 1 {
		t.Fatalf("face down %d waste %v", down, v.Waste)
	}
	// Only face-up cards appear anywhere in the view.
	hidden := map[Card]bool{}
	for _, c := range s.Stock {
		hidden[c] = true
	}
	for _, p := range s.Tableau {
		for _, c := range p.Cards[:p.Down] {
			hidden[c] = true
		}
	}
	for _, p := range v.Tableau {
		for _, c := range p.Cards {
			if hidden[c] {
				t.Fatalf("view shows hidden %v", c)
			}
		}
	}
	// The view's lists are s's, capped: appending to one leaves s as it
	// is (a clone lays the piles out one after another in one array).
	c := s.Clone()
	before := c.Clone().Position() // a copy of its own
	cv := NewView(c, sec(2))
	_ = append(cv.Waste, NoCard)
	for _, f := range cv.Foundations {
		_ = append(f, NoCard)
	}
	for _, p := range cv.Tableau {
		_ = append(p.Cards, NoCard)
	}
	if !reflect.DeepEqual(c.Position(), before) {
		t.Fatal("an append to the view wrote into the state")
	}
	if cap(v.Waste) != len(v.Waste) || cap(v.Tableau[6].Cards) != len(v.Tableau[6].Cards) {
		t.Fatalf("view lists not capped: waste %d of %d", len(v.Waste), cap(v.Waste))
	}
	mustPlay(t, s, mvResign, sec(3))
	e := NewView(s, sec(4))
	if !e.Revealed || !reflect.DeepEqual(e.Stock, s.Position().Stock) {
		t.Fatalf("after the end: stock %v", e.Stock)
	}
	for i, p := range e.Tableau {
		if !reflect.DeepEqual(p.FaceDownCards, s.Position().Tableau[i].Down) {
			t.Fatalf("pile %d face-down cards %v", i, p.FaceDownCards)
		}
	}
}

// R6.4: RedactEvent hides the deal's face-down cards and stock while the
// game is in progress; other events pass unchanged.
func TestR6_4_RedactEvent(t *testing.T) {
	s, log := newTestGame(t, "klondike", 21, Options{})
	deal := *log[0].Data.Deal
	red := RedactEvent(log[0])
	d := red.Data.Deal
	if len(d.Stock) != 0 || red.Data.Hidden == nil || red.Data.Hidden.Stock != 24 {
		t.Fatalf("redacted stock %v hidden %+v", d.Stock, red.Data.Hidden)
	}
	for i, p := range d.Tableau {
		if len(p.Down) != 0 || red.Data.Hidden.FaceDown[i] != i || !reflect.DeepEqual(p.Up, deal.Tableau[i].Up) {
			t.Fatalf("pile %d: %+v", i, p)
		}
	}
	if red.Data.Commitment != log[0].Data.Commitment || *red.Data.Rules != *log[0].Data.Rules {
		t.Fatal("redaction changed public fields")
	}
	// The original event keeps its deal.
	if log[0].Data.Deal.String() != deal.String() || len(log[0].Data.Deal.Stock) != 24 {
		t.Fatal("RedactEvent changed its input")
	}
	// The JSON a client gets names no hidden card.
	b := mustJSON(t, red)
	for _, c := range deal.Stock {
		if strings.Contains(b, `"`+c.String()+`"`) {
			t.Fatalf("redacted JSON shows stock card %v: %s", c, b)
		}
	}
	evs := mustPlay(t, s, mvDraw, sec(1))
	if r := RedactEvent(evs[0]); !reflect.DeepEqual(r, evs[0]) {
		t.Fatal("a draw event was changed")
	}
}

// R6.4: the commitment is SHA-256 over the deal's notation and the hex salt
// as documented, and checks only against that deal and salt.
func TestR6_4_Commitment(t *testing.T) {
	r := variants[0].Defaults
	deal := Deal(r, 77)
	salt := []byte("0123456789abcdef0123456789abcdef")
	c := Commitment(deal, salt)
	if !strings.HasPrefix(c, "sha256:") || len(c) != len("sha256:")+64 {
		t.Fatalf("commitment %q", c)
	}
	// Recompute it as an outsider would: printf '%s\n%s' "$DEAL" "$SALT_HEX" | sha256sum.
	if c != sha256Commitment(deal.String()+"\n"+hexString(salt)) {
		t.Fatal("commitment does not follow its documented formula")
	}
	if !CheckCommitment(c, deal, salt) {
		t.Fatal("commitment does not check")
	}
	other := Deal(r, 78)
	swapped, _ := ParsePosition(deal.String())
	swapped.Stock[0], swapped.Stock[1] = swapped.Stock[1], swapped.Stock[0]
	for name, ok := range map[string]bool{
		"other deal":        CheckCommitment(c, other, salt),
		"two cards swapped": CheckCommitment(c, swapped, salt),
		"other salt":        CheckCommitment(c, deal, []byte("0123456789abcdef0123456789abcdeX")),
		"no salt":           CheckCommitment(c, deal, nil),
		"upper-case hex":    CheckCommitment(strings.ToUpper(c), deal, salt),
		"empty":             CheckCommitment("", deal, salt),
	} {
		if ok {
			t.Errorf("%s: commitment checked", name)
		}
	}
}

// R6.5: Validate refuses wrong card counts, pile counts, face-up tails that
// are not runs, bad foundations, a face-down top where flips are automatic,
// and recycles beyond the passes, as *LayoutError with a stable reason.
func TestR6_5_ValidateLayout(t *testing.T) {
	good := Deal(variants[0].Defaults, 5).String()
	rest := " " + posBuildFound + " 0"
	for _, tc := range []struct {
		name    string
		variant string
		pos     string
		reason  string // "" = valid
		where   string
	}{
		{"a deal", "klondike", good, "", ""},
		{"empty piles allowed, stock holds the rest", "klondike", emptyPiles(7) + " " + suitRun("9H", "KH") + suitRun("TS", "KS") + " -" + rest, "", ""},
		{"face-down top where the player flips", "relaxed", "TS:/" + emptyPiles(6) + " 9HTHJHQHKHJSQSKS -" + rest, "", ""},
		{"face-down top where flips are automatic", "klondike", "TS:/" + emptyPiles(6) + " 9HTHJHQHKHJSQSKS -" + rest, "face_down_top", "tableau/0"},
		{"card missing", "klondike", ":TS/" + emptyPiles(6) + " 9HTHJHQHKHJSQS -" + rest, "card_count", "KS"},
		{"card twice", "klondike", ":TS/" + emptyPiles(6) + " 9HTHJHQHKHJSQSKSKS -" + rest, "card_count", "KS"},
		{"one deck for tripleharp", "tripleharp", emptyPiles(12) + " " + suitRun("9H", "KH") + suitRun("TS", "KS") + " -" + rest, "card_count", "AC"},
		{"six piles", "klondike", emptyPiles(6) + " " + suitRun("9H", "KH") + suitRun("TS", "KS") + " -" + rest, "pile_count", "tableau"},
		{"eight piles", "klondike", emptyPiles(8) + " " + suitRun("9H", "KH") + suitRun("TS", "KS") + " -" + rest, "pile_count", "tableau"},
		{"five foundations", "klondike", emptyPiles(7) + " " + suitRun("9H", "KH") + suitRun("TS", "KS") + " - " + posBuildFound + "/- 0", "pile_count", "foundations"},
		{"face-up tail not a run", "klondike", ":TS9S/" + emptyPiles(6) + " 9HTHJHQHKHJSQSKS -" + " " + foundUpto("KC", "KD", "8H", "8S") + " 0", "not_a_run", "tableau/0"},
		{"face-up tail same colour", "klondike", ":TH9H/" + emptyPiles(6) + " JHQHKHTSJSQSKS -" + rest, "not_a_run", "tableau/0"},
		{"foundation not from the ace", "klondike", ":AH/" + emptyPiles(6) + " 9HTHJHQHKHTSJSQSKS - " + foundUpto("KC", "KD") + "/2H3H4H5H6H7H8H/" + suitRun("AS", "9S") + " 0", "not_a_run", "foundation/2"},
		{"foundation of mixed suits", "klondike", ":8H/" + emptyPiles(6) + " 9STHJHQHKHTSJSQSKS - " + foundUpto("KC", "KD", "7H") + "/" + suitRun("AS", "8S") + "9H 0", "not_a_run", "foundation/3"},
		{"recycles beyond the passes", "klondike", ":TS/" + emptyPiles(6) + " 9HTHJHQHKHJSQSKS - " + posBuildFound + " 1", "bad_syntax", "recycles"},
		{"recycles within the passes", "klondike-draw3", ":TS/" + emptyPiles(6) + " 9HTHJHQHKHJSQSKS - " + posBuildFound + " 2", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, _ := LookupVariant(tc.variant)
			p, err := ParsePosition(tc.pos)
			if err != nil {
				t.Fatal(err)
			}
			err = p.Validate(v.Defaults)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("valid layout refused: %v", err)
				}
				return
			}
			var le *LayoutError
			if !errors.As(err, &le) || le.Reason != tc.reason || le.Where != tc.where {
				t.Fatalf("got %v, want *LayoutError %s at %s", err, tc.reason, tc.where)
			}
			// A deal event with it does not start a game.
			s := &State{}
			s.Apply(DealtEvent(v.Defaults, p, "", t0))
			if s.Fault == "" || s.Version != 0 {
				t.Fatal("invalid deal applied")
			}
		})
	}
	// A value that is no card.
	p, _ := ParsePosition(good)
	p.Stock[3] = Card(99)
	var le *LayoutError
	if err := p.Validate(variants[0].Defaults); !errors.As(err, &le) || le.Reason != "bad_card" || le.Where != "stock" {
		t.Fatalf("card 99: %v", err)
	}
}

// sha256Commitment is the commitment formula of chain.go written out.
func sha256Commitment(text string) string {
	h := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(h[:])
}

func hexString(b []byte) string { return hex.EncodeToString(b) }

// ---- Apply is total (R6.2 replay) -------------------------------------------

// applyNoPanic applies e and reports a panic as a test failure.
func applyNoPanic(t *testing.T, s *State, e Event) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Apply(%s v%d) panicked: %v (Apply must be total: a misfit sets Fault)", e.Type, e.Version, r)
		}
	}()
	s.Apply(e)
}

// Replay (R6.2) relies on Apply's contract: "an event that does not fit
// ... changes nothing but sets s.Fault", also when the misfit would start a
// new command (Version, Moves, the clock and an empty undo Turn must not
// advance).
func TestR6_2_ApplyMisfitLeavesNoTrace(t *testing.T) {
	s, _ := newTestGame(t, "relaxed", 1, Options{})
	before := mustJSON(t, s.Clone())
	for _, e := range []Event{
		{Version: 2, Type: EventStockDrawn, OccurredAt: sec(5), Data: EventData{V: 1, Move: 1, Count: 0}},
		{Version: 2, Type: EventCardsMoved, OccurredAt: sec(5), Data: EventData{V: 1, Move: 1, From: StockPile, To: WastePile, Count: 1}},
		{Version: 2, Type: EventGameExpired, OccurredAt: sec(5), Data: EventData{V: 1, Move: 1}},
	} {
		x := s.Clone()
		x.Apply(e)
		if x.Fault == "" {
			t.Fatalf("%s: misfit accepted", e.Type)
		}
		x.Fault = ""
		if got := mustJSON(t, x.Clone()); got != before {
			t.Errorf("%s: a misfit changed the state (want only Fault set): version %d->%d, moves %d->%d, started %v, last %v, turns %d",
				e.Type, s.Version, x.Version, s.Moves, x.Moves, x.StartedAt, x.LastAt, len(x.Turns))
		}
	}
}

// Apply never panics, even on a forged log: here an automatic pile change
// joins an undo command, and an undo record that missed it would make a
// later undo pop a card from an empty waste (index out of range in
// undoTurn).
func TestR6_2_ApplyForgedUndoRecordNoPanic(t *testing.T) {
	s := setupPos(t, "relaxed", Options{}, emptyPiles(7)+" ASKS"+suitRun("2S", "QS")+" - "+foundUpto("KC", "KD", "KH", "-")+" 0")
	mustPlay(t, s, mvDraw, sec(1)) // turn at version 2: AS to the waste
	mustPlay(t, s, mvDraw, sec(2)) // turn at version 3: KS
	mustPlay(t, s, mvUndo, sec(3)) // version 4, move 3: KS back
	// Forged: an automatic follow-up of the undo command moving AS away.
	applyNoPanic(t, s, Event{Version: 5, Type: EventCardsMoved, OccurredAt: sec(3),
		Data: EventData{V: 1, Move: 3, Auto: true, From: WastePile, To: FoundationRef(3), Count: 1}})
	// Undo of the first draw: its OpDraw pops the (now empty) waste.
	applyNoPanic(t, s, Event{Version: s.Version + 1, Type: EventMoveUndone, OccurredAt: sec(4),
		Data: EventData{V: 1, Move: s.Moves + 1, Undone: 2}})
	if s.Fault == "" {
		t.Fatal("the forged log replayed without a fault")
	}
}

// Apply never panics on absurd rules in a deal event (2^50 foundations
// must not reach make([][]Card, r.Foundations) in applyDeal; values around
// 1e8..1e13 would allocate gigabytes or kill the process).
func TestR6_2_ApplyAbsurdRulesNoPanic(t *testing.T) {
	r := variants[0].Defaults
	deal := Deal(r, 1)
	r.Foundations = 1 << 50
	s := &State{}
	applyNoPanic(t, s, DealtEvent(r, deal, "", t0))
	if s.Fault == "" {
		t.Fatal("a deal with 2^50 foundations was accepted")
	}
}

// State.Fault "names the first event that did not fit the state"
// (a second deal event after a rejected one must not erase it).
func TestR6_2_FirstFaultIsKept(t *testing.T) {
	r := variants[0].Defaults
	s := &State{}
	s.Apply(DealtEvent(r, Position{}, "", t0)) // no piles: does not fit
	first := s.Fault
	if first == "" {
		t.Fatal("empty deal accepted")
	}
	s.Apply(DealtEvent(r, Deal(r, 1), "", t0.Add(time.Second)))
	if s.Fault != first {
		t.Fatalf("Fault %q after a later deal, want the first problem %q", s.Fault, first)
	}
}

// R6.4: RedactEvent's result shares no memory with e's deal (Waste and
// Foundations included: the stored event must not change).
func TestR6_4_RedactEventCopiesTheDeal(t *testing.T) {
	r := variants[3].Defaults
	p, err := ParsePosition(":KS/" + emptyPiles(6) + " QS JS " + foundUpto("KC", "KD", "KH", "TS") + " 0")
	if err != nil {
		t.Fatal(err)
	}
	e := DealtEvent(r, p, "", t0)
	red := RedactEvent(e)
	red.Data.Deal.Waste[0] = NoCard
	red.Data.Deal.Foundations[0] = nil
	if e.Data.Deal.Waste[0] == NoCard || len(e.Data.Deal.Foundations[0]) == 0 {
		t.Fatalf("changing the redacted event changed the original: waste %v, foundation/0 %v",
			e.Data.Deal.Waste, e.Data.Deal.Foundations[0])
	}
}

// R6.4: a redacted deal encodes its empty foundations as the stored deal
// does, as empty lists: the API sends the redacted payload in the shape
// the spec gives the stored one.
func TestR6_4_RedactEventKeepsEmptyFoundations(t *testing.T) {
	_, log := newTestGame(t, "klondike", 21, Options{})
	d := log[0].Data.Deal
	e := DealtEvent(*log[0].Data.Rules, Position{Tableau: d.Tableau, Stock: d.Stock, Foundations: make([][]Card, 4)}, "", t0)
	for _, x := range []Event{e, RedactEvent(e)} {
		if b := mustJSON(t, x.Data.Deal.Foundations); b != "[[],[],[],[]]" {
			t.Errorf("foundations %s", b)
		}
	}
}

// R5.3 in the service: reading a game past its deadline shows it expired
// before any command arrives, the expiry is appended once, and a command
// after the deadline is refused with time_expired (the expected version of
// the expiry's append is the one before it: with the version after it Get
// would recurse until the stack overflowed and Play return ErrConflict).
func TestR6_2_ApplyAfterAMisfitIsConsistent(t *testing.T) {
	s, _ := newTestGame(t, "relaxed", 1, Options{})
	s.Apply(Event{Version: 2, Type: EventStockDrawn, OccurredAt: sec(1), Data: EventData{V: 1, Move: 1, Count: 0}})
	if s.Fault == "" {
		t.Fatal("misfit accepted")
	}
	evs, _, err := Decide(s, mvDraw, sec(2))
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

// Apply never panics when the event after a misfit ends the game
// (FuzzApply's input "0000000080200000": a deferred restore must not slice
// s.Turns after end() has set it to nil).
func TestR6_2_ApplyEndAfterAMisfitNoPanic(t *testing.T) {
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
