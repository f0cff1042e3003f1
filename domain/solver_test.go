package domain

import (
	"bufio"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// solvedDeal is one line of testdata/klondike-solved-draw*.jsonl (see
// testdata/README.md for the source and the token grammar).
type solvedDeal struct {
	ID       string     `json:"id"`
	Draw     int        `json:"draw"`
	Tableau  [][]string `json:"tableau"`
	FaceUp   []int      `json:"face_up"`
	Stock    []string   `json:"stock"`
	Solution []string   `json:"solution"`
}

func loadSolved(t testing.TB, file string) []solvedDeal {
	t.Helper()
	f, err := os.Open("../testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []solvedDeal
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var d solvedDeal
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no deals", file)
	}
	return out
}

func (d solvedDeal) position(t testing.TB) Position {
	t.Helper()
	cards := func(codes []string) []Card {
		out := make([]Card, len(codes))
		for i, s := range codes {
			c, err := ParseCard(s)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = c
		}
		return out
	}
	p := Position{Stock: cards(d.Stock), Foundations: make([][]Card, 4)}
	for k, pile := range d.Tableau {
		all := cards(pile)
		n := len(all) - d.FaceUp[k]
		p.Tableau = append(p.Tableau, PileLayout{Down: all[:n], Up: all[n:]})
	}
	return p
}

// hasRecycleOrTakeBack reports whether a line needs passes or take-backs
// that strict Klondike does not have.
func (d solvedDeal) hasRecycleOrTakeBack() bool {
	for _, tok := range d.Solution {
		if tok == "NEW" || (strings.ContainsRune("CDHS", rune(tok[0])) && len(tok) > 1 && tok[1] >= '1' && tok[1] <= '7') {
			return true
		}
	}
	return false
}

// solverMoves translates one token into our moves against state s.
func solverMoves(t testing.TB, s *State, tok string) []Move {
	t.Helper()
	switch {
	case tok == "NEW":
		return []Move{{Type: MoveDraw}}
	case strings.HasPrefix(tok, "DR"):
		n, err := strconv.Atoi(tok[2:])
		if err != nil {
			t.Fatalf("token %q", tok)
		}
		ms := make([]Move, n)
		for i := range ms {
			ms[i] = Move{Type: MoveDraw}
		}
		return ms
	case tok[0] == 'F':
		if s.Rules.Flip == FlipAuto {
			return nil
		}
		i, _ := strconv.Atoi(tok[1:])
		return []Move{{Type: MoveFlip, Pile: TableauRef(i - 1)}}
	}
	count := 1
	body := tok
	if a, b, ok := strings.Cut(tok, "-"); ok {
		body = a
		count, _ = strconv.Atoi(b)
	}
	pile := func(ch byte, dest bool) PileRef {
		switch {
		case ch == 'W':
			return WastePile
		case ch >= '1' && ch <= '7':
			return TableauRef(int(ch - '1'))
		}
		suit := Suit(strings.IndexByte(suitLetters, ch))
		for i, f := range s.Foundations {
			if len(f) > 0 && f[0].Suit() == suit {
				return FoundationRef(i)
			}
		}
		if dest {
			return FoundationRef(AnyFoundation) // the ace starts a foundation
		}
		t.Fatalf("token %q: no %s foundation", tok, suit)
		return PileRef{}
	}
	from, to := pile(body[0], false), pile(body[1], true)
	if from.Kind == Foundation {
		return []Move{{Type: MoveTakeBack, From: from, To: to, Count: 1}}
	}
	return []Move{{Type: MoveCards, From: from, To: to, Count: count}}
}

// playSolved plays a solver line in the given variant, one second per
// move, and returns the final state and the number of recycles made.
func playSolved(t *testing.T, d solvedDeal, variant string, o Options) *State {
	t.Helper()
	v, _ := LookupVariant(variant)
	r, _, err := v.Resolve(o)
	if err != nil {
		t.Fatal(err)
	}
	deal := d.position(t)
	if err := deal.Validate(r); err != nil {
		t.Fatalf("%s: %v", d.ID, err)
	}
	s := &State{}
	s.Apply(DealtEvent(r, deal, "", t0))
	now := t0
	for i, tok := range d.Solution {
		for _, m := range solverMoves(t, s, tok) {
			if s.Status == StatusWon {
				return s // relaxed: autocomplete finished early (R2.6)
			}
			now = now.Add(100 * time.Millisecond)
			evs, err := Decide(s, m, now)
			if err != nil {
				t.Fatalf("%s %s: token %d %q (%v) refused: %v\nposition %s", d.ID, variant, i, tok, m, err, s.Position())
			}
			for _, e := range evs {
				s.Apply(e)
			}
		}
	}
	return s
}

// Every solver line wins in relaxed (R2, R3 relaxed: unlimited passes,
// take-back, player flips, automatic autocomplete R2.6, win R2.8).
func TestR3RelaxedWinsEverySolverLine(t *testing.T) {
	for _, file := range []string{"klondike-solved-draw1.jsonl", "klondike-solved-draw3.jsonl"} {
		for _, d := range loadSolved(t, file) {
			s := playSolved(t, d, "relaxed", Options{Draw: &d.Draw})
			if s.Status != StatusWon {
				t.Errorf("%s: relaxed ended %s, want won", d.ID, s.Status)
			}
		}
	}
}

// Every draw-3 line wins in klassik with the exact R4.2 score.
func TestR42KlassikScoreOfSolverLines(t *testing.T) {
	for _, d := range loadSolved(t, "klondike-solved-draw3.jsonl") {
		s := playSolved(t, d, "klassik", Options{})
		if s.Status != StatusWon {
			t.Fatalf("%s: klassik ended %s, want won", d.ID, s.Status)
		}
		faceDown := 0
		for _, p := range d.Tableau {
			faceDown += len(p) - 1
		}
		recycles := 0
		for _, tok := range d.Solution {
			if tok == "NEW" {
				recycles++
			}
		}
		secondsLeft := int(s.StartedAt.Add(300*time.Second).Sub(s.EndedAt) / time.Second)
		want := 1700 + 1700 + 10*faceDown - 20*max(0, recycles-1) + 5*secondsLeft
		got, ok := s.ScoreAt(s.EndedAt)
		if !ok || got != want {
			t.Errorf("%s: R4.2 score %d, want %d (flips %d, recycles %d, %d s left)", d.ID, got, want, faceDown, recycles, secondsLeft)
		}
	}
}

// Lines without recycle or take-back win in strict klondike (R3: 1 pass,
// no take-back, automatic flips).
func TestR3StrictKlondikeSolverLines(t *testing.T) {
	played := 0
	for _, file := range []string{"klondike-solved-draw1.jsonl", "klondike-solved-draw3.jsonl"} {
		for _, d := range loadSolved(t, file) {
			if d.hasRecycleOrTakeBack() {
				continue
			}
			variant := map[int]string{1: "klondike", 3: "klondike-draw3"}[d.Draw]
			s := playSolved(t, d, variant, Options{})
			if s.Status != StatusWon {
				t.Errorf("%s: %s ended %s, want won", d.ID, variant, s.Status)
			}
			played++
		}
	}
	if played == 0 {
		t.Fatal("no strict line in the test data")
	}
	t.Logf("%d strict lines won", played)
}
