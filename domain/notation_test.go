package domain

// Tests of the one-line position notation (layout.go): ParsePosition and
// Position.String are inverse on canonical text, and errors say where and
// why as a *LayoutError.

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// normPos returns p with every empty card list as nil, so positions from
// the parser (nil) and from a State (empty slices) compare equal.
func normPos(p Position) Position {
	n := func(cs []Card) []Card {
		if len(cs) == 0 {
			return nil
		}
		return append([]Card(nil), cs...)
	}
	out := Position{Stock: n(p.Stock), Waste: n(p.Waste), Recycles: p.Recycles}
	for _, t := range p.Tableau {
		out.Tableau = append(out.Tableau, PileLayout{Down: n(t.Down), Up: n(t.Up)})
	}
	for _, f := range p.Foundations {
		out.Foundations = append(out.Foundations, n(f))
	}
	return out
}

// format(parse(s)) == s for canonical strings.
func TestNotationCanonicalRoundTrip(t *testing.T) {
	canon := []string{
		":KH/:/:/:/:/:/: - - - 0",
		":KH/:/:/:/:/:/: - - -/-/-/- 0",
		":KH/:/:/:/:/:/: QS JS AC2C/-/AD/- 1",
		"5C9H:TS/:/QDJC:KSQHJS/:/:/:/7D: 2H3H4H AS AH/-/-/- 2",
		":/: - - AH 0",
		"AS: - - - 1000",
		":KH/:/:/:/:/:/: - - " + posBuildFound + " 0",
		Deal(variants[0].Defaults, 42).String(),
		Deal(variants[4].Defaults, 1).String(),
		Deal(variants[5].Defaults, 1<<64-1).String(),
	}
	for _, s := range canon {
		p, err := ParsePosition(s)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if got := p.String(); got != s {
			t.Fatalf("format(parse(s)) != s\n   s %q\n got %q", s, got)
		}
	}
	// Accepted non-canonical forms: RECYCLES may be left out (0).
	p, err := ParsePosition(":KH/:/:/:/:/:/: - - -")
	if err != nil || p.Recycles != 0 || p.String() != ":KH/:/:/:/:/:/: - - - 0" {
		t.Fatalf("4 fields: %v %q", err, p.String())
	}
}

// parse(format(p)) equals p for deals, positions of played games, endings
// and hand-made positions.
func TestNotationPositionRoundTrip(t *testing.T) {
	var ps []Position
	for _, v := range Variants() {
		for _, seed := range []uint64{0, 3, 1 << 40} {
			ps = append(ps, Deal(v.Defaults, seed), unplayedEnding(v.Defaults, seed))
		}
		s, log := playRandom(t, v.ID, 2, 150, Options{Undo: ptr(true)})
		ps = append(ps, s.Position())
		for i := 1; i <= len(log); i += 17 {
			r, _ := Replay(log[:i])
			ps = append(ps, r.Position())
		}
	}
	for _, p := range ps {
		text := p.String()
		q, err := ParsePosition(text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if !reflect.DeepEqual(normPos(q), normPos(p)) {
			t.Fatalf("parse(format(p)) != p for %q\n got %+v", text, q)
		}
		if q.String() != text {
			t.Fatalf("not canonical: %q -> %q", text, q.String())
		}
		// The JSON form of a Position (custom layouts, the deal event) round-trips too.
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var j Position
		if err := json.Unmarshal(b, &j); err != nil || !reflect.DeepEqual(normPos(j), normPos(p)) {
			t.Fatalf("JSON round trip of %q: %v", text, err)
		}
	}
}

// Errors name the part and a stable reason.
func TestNotationErrors(t *testing.T) {
	for _, tc := range []struct {
		in, where, reason string
	}{
		{"", "", "bad_syntax"},
		{":KH - -", "", "bad_syntax"},
		{":KH - - - 0 0", "", "bad_syntax"},
		{":KH - - - 0 ", "", "bad_syntax"},
		{":KH\t- - - 0", "tableau/0", "bad_card"}, // a tab is no separator
		{"KH/: - - - 0", "tableau/0", "bad_syntax"},
		{":KH/KS - - - 0", "tableau/1", "bad_syntax"},
		{":KH/:K - - - 0", "tableau/1", "bad_syntax"},
		{":KH:QS - - - 0", "tableau/0", "bad_syntax"},
		{":KX - - - 0", "tableau/0", "bad_card"},
		{":kh - - - 0", "tableau/0", "bad_card"},
		{"1S: - - - 0", "tableau/0", "bad_card"},
		{":KH  - - 0", "stock", "bad_syntax"},
		{":KH -- - - 0", "stock", "bad_card"},
		{":KH A - - 0", "stock", "bad_syntax"},
		{":KH - -AS - 0", "waste", "bad_syntax"},
		{":KH - ?? - 0", "waste", "bad_card"},
		{":KH - - AH//- 0", "foundation/1", "bad_syntax"},
		{":KH - - AH/-/Q 0", "foundation/2", "bad_syntax"},
		{":KH - - AH/-/QQ 0", "foundation/2", "bad_card"},
		{":KH - - / 0", "foundation/0", "bad_syntax"},
		{":KH - - - x", "recycles", "bad_syntax"},
		{":KH - - - -1", "recycles", "bad_syntax"},
		{":KH - - - +1", "recycles", "bad_syntax"},
		{":KH - - - 01", "recycles", "bad_syntax"},
		{":KH - - - 1001", "recycles", "bad_syntax"},
		{":KH - - - 99999999999999999999", "recycles", "bad_syntax"},
		{":KH - - - 0\n", "recycles", "bad_syntax"},
	} {
		_, err := ParsePosition(tc.in)
		var le *LayoutError
		if !errors.As(err, &le) || le.Reason != tc.reason || le.Where != tc.where {
			t.Errorf("ParsePosition(%q) = %v, want *LayoutError %s at %q", tc.in, err, tc.reason, tc.where)
		}
	}
	// Syntax only: a position that breaks the rules parses (Validate refuses it).
	p, err := ParsePosition(":KHKS - - - 0")
	if err != nil {
		t.Fatal(err)
	}
	var le *LayoutError
	if err := p.Validate(variants[0].Defaults); !errors.As(err, &le) {
		t.Fatalf("Validate: %v", err)
	}
}
