package domain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
	"time"
)

// reasonConstants reads errors.go and returns every Reason constant's
// value, so that a reason added later without a row below fails the test.
func reasonConstants(t *testing.T) map[Reason]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[Reason]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Reason" {
				continue
			}
			for i, name := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s is not a string literal", name.Name)
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				out[Reason(v)] = name.Name
			}
		}
	}
	if len(out) < 25 {
		t.Fatalf("found only %d reasons in errors.go", len(out))
	}
	return out
}

// TestReasonWords checks every refusal reason against a situation that
// produces it: a position (ParsePosition notation) in a variant, the moves
// played before, the move refused and the reason its word must be. Every
// Reason constant of errors.go has at least one row, and a refused move is
// never in LegalMoves (time_expired aside: the clock is not a position). The words are API (clients switch on them), so each
// row is also the reason's definition by example.
func TestReasonWords(t *testing.T) {
	// relaxed (the player flips): a king-queen run on tableau/0, a lone
	// face-down card on tableau/1, tableau/2 empty, a 9C on tableau/3, a
	// stock of 7 and a waste of 6 (KH on top), the rest on the foundations.
	base := ":KSQH/5D:/:/:9C/:/:/: TCJCQCKC6D7D8D 9DTDJDQDKDKH " + foundUpto("8C", "4D", "JH", "QS") + " 0"
	// klondike (automatic flips, no undo, one pass): the waste holds KS,
	// the stock is empty.
	strict := ":QS/:KH/" + emptyPiles(5) + " - KS " + foundUpto("KC", "KD", "QH", "JS") + " 0"
	// stock and waste empty.
	bare := ":KS/" + emptyPiles(6) + " - - " + foundUpto("KC", "KD", "KH", "QS") + " 0"
	// harp, two decks, single cards only: a run of two on tableau/0.
	harp := ":KSQH/" + emptyPiles(8) + " KH - " + foundUpto("KC", "KC", "KD", "KD", "KH", "JH", "KS", "QS") + " 0"
	undo := Options{Undo: ptr(true)}
	rows := []struct {
		reason  Reason
		variant string // "" = a state with no deal
		opts    Options
		pos     string
		before  []Move
		at      time.Duration // after t0; default one second per move
		move    Move
	}{
		{ReasonUnknownType, "relaxed", Options{}, base, nil, 0, Move{Type: "shuffle"}},
		{ReasonBadPile, "relaxed", Options{}, base, nil, 0, Move{Type: MoveCards, To: TableauRef(2), Count: 1}},
		{ReasonNoSuchPile, "relaxed", Options{}, base, nil, 0, mvCards("tableau/7", "tableau/2", 1)},
		{ReasonNoSuchPile, "relaxed", Options{}, base, nil, 0, mvCards("tableau/3", "foundation/4", 1)},
		{ReasonBadCount, "relaxed", Options{}, base, nil, 0, mvCards("tableau/0", "tableau/2", 14)},
		{ReasonBadSource, "relaxed", Options{}, base, nil, 0, mvCards("stock", "tableau/0", 1)},
		{ReasonBadSource, "relaxed", Options{}, base, nil, 0, mvTakeBack("tableau/3", "tableau/0")},
		{ReasonBadSource, "relaxed", Options{}, base, nil, 0, mvFlip("waste")},
		{ReasonBadDestination, "relaxed", Options{}, base, nil, 0, mvCards("tableau/3", "waste", 1)},
		{ReasonBadDestination, "relaxed", Options{}, base, nil, 0, mvTakeBack("foundation/0", "waste")},
		{ReasonSamePile, "relaxed", Options{}, base, nil, 0, mvCards("tableau/3", "tableau/3", 1)},
		{ReasonEmptyPile, "relaxed", Options{}, base, nil, 0, mvCards("tableau/2", "tableau/0", 1)},
		{ReasonEmptyPile, "relaxed", Options{}, bare, nil, 0, mvCards("waste", "tableau/1", 1)},
		{ReasonNotARun, "relaxed", Options{}, base, nil, 0, mvCards("tableau/3", "tableau/2", 2)},
		{ReasonSingleCardOnly, "relaxed", Options{}, base, nil, 0, mvCards("tableau/0", "foundation", 2)},
		{ReasonOnlyTopWasteCard, "relaxed", Options{}, base, nil, 0, mvCards("waste", "tableau/2", 2)},
		{ReasonOnlyTopWasteCard, "relaxed", Options{}, base, nil, 0, mvCards("waste", "foundation", 2)},
		{ReasonTakeBackOneCard, "relaxed", Options{}, base, nil, 0,
			Move{Type: MoveTakeBack, From: FoundationRef(2), To: TableauRef(2), Count: 2}},
		{ReasonSequenceNotAllowed, "harp", Options{}, harp, nil, 0, mvCards("tableau/0", "tableau/1", 2)},
		{ReasonCardDoesNotFit, "relaxed", Options{}, base, nil, 0, mvCards("tableau/3", "tableau/0", 1)},
		{ReasonCardDoesNotFit, "relaxed", Options{}, base, nil, 0, mvCards("tableau/3", "foundation/1", 1)},
		{ReasonOnlyKingOnEmpty, "relaxed", Options{}, base, nil, 0, mvCards("tableau/3", "tableau/2", 1)},
		{ReasonFaceDownTop, "relaxed", Options{}, base, nil, 0, mvCards("tableau/1", "tableau/2", 1)},
		{ReasonFaceDownTop, "relaxed", Options{}, base, nil, 0, mvCards("waste", "tableau/1", 1)},
		{ReasonNoFaceDownCard, "relaxed", Options{}, base, nil, 0, mvFlip("tableau/3")},
		{ReasonFlipIsAutomatic, "klondike", Options{}, strict, nil, 0, mvFlip("tableau/0")},
		{ReasonNothingToDraw, "relaxed", Options{}, bare, nil, 0, mvDraw},
		{ReasonNoPassesLeft, "klondike", Options{}, strict, nil, 0, mvDraw},
		{ReasonTakeBackNotAllowed, "klondike", Options{}, strict, nil, 0, mvTakeBack("foundation/0", "tableau/2")},
		{ReasonTakeBackNotAllowed, "klondike", Options{}, strict, nil, 0, mvCards("foundation/0", "tableau/2", 1)},
		{ReasonUseTakeBack, "relaxed", Options{}, base, nil, 0, mvCards("foundation/3", "tableau/2", 1)},
		{ReasonNothingToUndo, "relaxed", Options{}, base, nil, 0, mvUndo},
		{ReasonNothingToUndo, "klondike", undo, strict, []Move{mvCards("tableau/0", "tableau/1", 1), mvUndo}, 0, mvUndo},
		{ReasonUndoNotAllowed, "klondike", Options{}, strict, []Move{mvCards("tableau/0", "tableau/1", 1)}, 0, mvUndo},
		{ReasonUndoNotAllowed, "klondike", Options{}, strict, []Move{mvCards("tableau/0", "tableau/1", 1)}, 0, mvRedo},
		{ReasonNothingToRedo, "relaxed", Options{}, base, nil, 0, mvRedo},
		{ReasonNothingToRedo, "relaxed", Options{}, base, []Move{mvDraw, mvUndo, mvDraw}, 0, mvRedo},
		{ReasonCannotAutocomplete, "relaxed", Options{}, base, nil, 0, mvAutocomplete},
		{ReasonGameOver, "relaxed", Options{}, base, []Move{mvResign}, 0, mvDraw},
		{ReasonTimeExpired, "klassik", Options{}, base, nil, 301 * time.Second, mvDraw},
		{ReasonIllegal, "", Options{}, "", nil, 0, mvDraw}, // no deal: no rule applies
	}
	covered := map[Reason]bool{}
	for _, row := range rows {
		name := string(row.reason) + "/" + row.move.String()
		t.Run(name, func(t *testing.T) {
			s := &State{}
			if row.variant != "" {
				s = setupPos(t, row.variant, row.opts, row.pos)
			}
			now := t0
			for _, m := range row.before {
				now = now.Add(time.Second)
				mustPlay(t, s, m, now)
			}
			now = now.Add(time.Second)
			if row.at != 0 {
				now = t0.Add(row.at)
			}
			_, err := decideApply(t, s, row.move, now)
			wantReason(t, err, row.reason)
			// LegalMoves is about the position; the clock is Decide's
			// first check (R5.3), so a draw past the deadline stays listed.
			if row.reason != ReasonTimeExpired && contains(LegalMoves(s), normalize(s, row.move)) {
				t.Fatalf("refused move %v is in LegalMoves", row.move)
			}
			var me *MoveError
			if asMoveError(err, &me); me.Detail == "" {
				t.Fatalf("reason %s without a detail", row.reason)
			}
			t.Logf("%s: %s", me.Reason, me.Detail)
		})
		covered[row.reason] = true
	}
	// The pile parser's reason, as the API meets it.
	if _, err := ParsePileRef("tableau/x"); err == nil {
		t.Fatal("tableau/x parsed")
	} else {
		wantReason(t, err, ReasonBadPile)
	}
	for r, name := range reasonConstants(t) {
		if !covered[r] {
			t.Errorf("%s (%s) has no row: add the situation that produces it", name, r)
		}
	}
}

func asMoveError(err error, me **MoveError) bool {
	e, ok := err.(*MoveError)
	*me = e
	return ok
}
