package api_test

import (
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/openpatience/solitaire/api"
)

func redo() api.MoveRequest { return api.MoveRequest{Type: "redo"} }

func hasMove(l api.LegalMoves, typ string) bool {
	return slices.ContainsFunc(l.Moves, func(m api.MoveRequest) bool { return m.Type == typ })
}

// TestR2_9_RedoOverHTTP: in relaxed, a redo after an undo re-applies the
// undone turn exactly (the game after it is the game after the move, but
// for version and move count), names the undo in a move_redone event, is
// counted, and is listed by legal-moves and can_redo exactly while
// possible. A second redo, and a redo after another move, are refused with
// nothing_to_redo and change nothing; klondike (no undo) refuses it with
// undo_not_allowed. The log audits clean.
func TestR2_9_RedoOverHTTP(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		l := runs()
		l.Tableau[4] = api.LayoutPile{FaceDown: []string{"AS"}, FaceUp: []string{}}
		l.Tableau[0].FaceUp = l.Tableau[0].FaceUp[:12]
		g := e.createGame(map[string]any{"variant": "relaxed", "layout": l, "options": map[string]any{"autocomplete": "offered"}})
		if g.CanRedo || hasMove(e.legal(g.ID), "redo") {
			t.Errorf("redo offered at the start")
		}
		refused := func(m api.MoveRequest, reason string) {
			t.Helper()
			v := e.version(g.ID)
			res := e.do(req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: m})
			if p := res.problem(t); res.status != http.StatusUnprocessableEntity || p.Code != api.CodeIllegalMove || p.Reason != reason {
				t.Errorf("%s: %d %+v, want 422 %s", m.Type, res.status, p, reason)
			}
			if e.version(g.ID) != v {
				t.Errorf("a refused %s changed the log", m.Type)
			}
		}
		refused(redo(), "nothing_to_redo")
		// same is the game without what a redo advances: version, move
		// count and playing time.
		same := func(a, b api.Game) bool {
			for _, x := range []*api.Game{&a, &b} {
				x.Version, x.Moves, x.ElapsedMS = 0, 0, 0
			}
			return reflect.DeepEqual(a, b)
		}
		e.play(g.ID, flip("tableau/4"))
		afterAce := e.play(g.ID, move("tableau/4", "foundation", 0)).Game
		u := e.play(g.ID, undo())
		if !u.Game.CanRedo || !hasMove(e.legal(g.ID), "redo") || len(u.Game.Foundations[0].Cards) != 0 {
			t.Fatalf("after undo: can_redo %v, legal %+v", u.Game.CanRedo, e.legal(g.ID).Moves)
		}
		r := e.play(g.ID, redo())
		if len(r.Events) != 1 || r.Events[0].Type != "move_redone" || r.Events[0].Data.Redone != u.Events[0].Version ||
			r.Events[0].Data.Move != 4 || r.Game.Moves != 4 || r.Game.Version != afterAce.Version+2 {
			t.Errorf("redo: %+v, moves %d version %d", r.Events, r.Game.Moves, r.Game.Version)
		}
		if r.Game.CanRedo || !same(r.Game, afterAce) || !same(e.getGame(g.ID), afterAce) {
			t.Errorf("redo did not restore the game:\n got %+v\nwant %+v", r.Game, afterAce)
		}
		refused(redo(), "nothing_to_redo")
		// Another move after an undo ends what can be redone.
		e.play(g.ID, undo())
		afterAH := e.play(g.ID, move("tableau/1", "foundation", 0)).Game
		refused(redo(), "nothing_to_redo")
		// Two undos, two redos: forward through the chain.
		e.play(g.ID, undo())
		e.play(g.ID, undo())
		e.play(g.ID, redo())
		if got := e.play(g.ID, redo()).Game; !same(got, afterAH) || got.CanRedo || hasMove(e.legal(g.ID), "redo") {
			t.Errorf("after two undos and two redos:\n got %+v\nwant %+v", got, afterAH)
		}
		if a := e.audit(g.ID); !clean(a) {
			t.Errorf("audit of a game with redos: %+v", a)
		}
		e.play(g.ID, resign())
		if a := e.audit(g.ID); !clean(a) {
			t.Errorf("audit after the end: %+v", a)
		}
		// klondike is played without undo, so without redo.
		k := e.createGame(api.CreateGameRequest{Variant: "klondike", Layout: runs()})
		res := e.do(req{method: "POST", path: "/v1/games/" + k.ID + "/moves", body: redo()})
		if p := res.problem(t); res.status != http.StatusUnprocessableEntity || p.Reason != "undo_not_allowed" {
			t.Errorf("redo in klondike: %d %+v", res.status, p)
		}
	})
}
