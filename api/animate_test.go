package api_test

import (
	"math/rand/v2"
	"net/http"
	"reflect"
	"strconv"
	"testing"

	"github.com/openpatience/solitaire/api"
)

// board is a frontend's model of a game, built from the game at creation
// and then from the move answers' events alone: the stock's size, the
// waste, the foundations, and each tableau pile's face-down count and
// face-up cards.
type board struct {
	stock int
	piles map[string][]string // "waste", "foundation/i", "tableau/i": face-up cards, bottom first
	down  map[string]int      // "tableau/i": face-down count
}

func boardOf(g api.Game) board {
	b := board{stock: g.Stock.Count, piles: map[string][]string{"waste": cardCodesOf(g.Waste.Cards)}, down: map[string]int{}}
	for i, f := range g.Foundations {
		b.piles["foundation/"+strconv.Itoa(i)] = cardCodesOf(f.Cards)
	}
	for i, p := range g.Tableau {
		b.piles["tableau/"+strconv.Itoa(i)] = cardCodesOf(p.Cards)
		b.down["tableau/"+strconv.Itoa(i)] = p.FaceDown
	}
	return b
}

func cardCodesOf(cs []api.Card) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Code)
	}
	return out
}

// move takes n cards off pile from (the stock counts only) and lands
// cards on pile to.
func (b *board) move(from, to string, n int, cards []string) {
	if from == "stock" {
		b.stock -= n
	} else {
		p := b.piles[from]
		b.piles[from] = p[:len(p)-n]
	}
	if to == "stock" {
		b.stock += n
	} else {
		b.piles[to] = append(b.piles[to], cards...)
	}
}

// event animates one event on the model, as a frontend would.
func (b *board) event(t *testing.T, e api.Event) {
	d := e.Data
	switch e.Type {
	case "stock_drawn":
		b.move("stock", "waste", d.Count, cardCodes(d.Cards))
	case "stock_recycled":
		b.move("waste", "stock", len(b.piles["waste"]), nil)
	case "cards_moved":
		b.move(d.From.String(), d.To.String(), d.Count, cardCodes(d.Cards))
	case "card_flipped":
		b.turnUp(d.Pile.String(), d.Card.String())
	case "move_undone", "move_redone":
		if len(d.Changes) == 0 {
			t.Fatalf("%s without changes: %+v", e.Type, d)
		}
		for _, c := range d.Changes {
			switch c.Turn {
			case "up":
				b.turnUp(c.Pile.String(), c.Card.String())
			case "down":
				b.down[c.Pile.String()]++
				b.piles[c.Pile.String()] = b.piles[c.Pile.String()][1:]
			default:
				b.move(c.From.String(), c.To.String(), len(c.Cards), cardCodes(c.Cards))
			}
		}
	}
}

// turnUp turns card up as the top face-down card of pile.
func (b *board) turnUp(pile, card string) {
	b.down[pile]--
	b.piles[pile] = append([]string{card}, b.piles[pile]...)
}

// TestMoveAnswersAnimate: a frontend that knows the game at creation and
// then reads only the move answers (their events, undo and redo included,
// and the legal moves asked for with ?include=legal_moves) keeps an exact
// model of the board: after every move its stock size, waste, foundations
// and tableau equal the game in the answer. Random play with undo and
// redo on relaxed draw 3 and klondike with undo, on both databases. Also:
// waste_fanned (the latest draw's cards still on the waste), passes'
// recycles_left, legal_moves equal to GET legal-moves, and a bad include
// (a value other than legal_moves, in any of the parameter's occurrences)
// answers 400 and plays nothing.
func TestMoveAnswersAnimate(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, body := range []map[string]any{
			{"variant": "relaxed", "options": map[string]any{"draw": 3}},
			{"variant": "klondike", "options": map[string]any{"undo": true}},
		} {
			g := e.createGame(body)
			if g.Passes.Used != 1 || (g.Passes.Limit == nil) != (g.Passes.RecyclesLeft == nil) ||
				(g.Passes.Limit != nil && *g.Passes.RecyclesLeft != *g.Passes.Limit-1) || g.Competition != nil {
				t.Fatalf("a new game's passes %+v, competition %+v", g.Passes, g.Competition)
			}
			model := boardOf(g)
			path := "/v1/games/" + g.ID + "/moves?include=legal_moves"
			for _, bad := range []string{"include=everything", "include=legal_moves&include=everything", "include=legal_moves,"} {
				r := e.must(http.StatusBadRequest, req{method: "POST", path: "/v1/games/" + g.ID + "/moves?" + bad,
					body: draw(), invalid: true})
				if p := r.problem(t); p.Code != api.CodeInvalidParameter || e.version(g.ID) != 1 {
					t.Fatalf("a bad include (%s): %+v, version %d", bad, p, e.version(g.ID))
				}
			}
			var got api.Game
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "?include=legal_moves"}).decode(t, &got)
			legal := got.LegalMoves
			undos := 0
			for i := 0; i < 120; i++ {
				if len(legal) == 0 {
					break
				}
				m := legal[rng.IntN(len(legal))]
				if m.Type == "resign" {
					continue
				}
				if x := rng.IntN(8); x == 0 && got.CanUndo {
					m = undo()
				} else if x == 1 && got.CanRedo {
					m = api.MoveRequest{Type: "redo"}
				}
				var res api.MoveResult
				e.must(http.StatusOK, req{method: "POST", path: path, body: m}).decode(t, &res)
				for _, ev := range res.Events {
					model.event(t, ev)
					if ev.Type == "move_undone" || ev.Type == "move_redone" {
						undos++
					}
				}
				got = res.Game
				if want := boardOf(got); !reflect.DeepEqual(model, want) {
					t.Fatalf("after %s %v the model is\n%+v\nthe game\n%+v", m.Type, res.Events, model, want)
				}
				if !reflect.DeepEqual(got.LegalMoves, e.legal(g.ID).Moves) {
					t.Fatalf("legal_moves in the answer differ from GET legal-moves")
				}
				w := len(got.Waste.Cards)
				if (w == 0) != (got.WasteFanned == 0) || got.WasteFanned > min(w, got.Options.Draw) {
					t.Fatalf("waste_fanned %d with %d waste cards, draw %d", got.WasteFanned, w, got.Options.Draw)
				}
				if len(res.Events) > 0 && res.Events[0].Type == "stock_drawn" && got.WasteFanned != res.Events[0].Data.Count {
					t.Fatalf("after drawing %d, waste_fanned %d", res.Events[0].Data.Count, got.WasteFanned)
				}
				legal = got.LegalMoves
			}
			if undos < 5 {
				t.Fatalf("only %d undos and redos played", undos)
			}
		}
	})
}
