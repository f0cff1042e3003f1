package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/openpatience/solitaire/api"
	client "github.com/openpatience/solitaire/clients/go"
	"github.com/openpatience/solitaire/domain/domaintest"
)

// solvedLine is one deal of testdata/klondike-solved-draw*.jsonl with its
// winning line from an independent solver (see testdata/README.md).
type solvedLine struct{ domaintest.SolvedDeal }

func loadSolvedLines(t *testing.T, file string) []solvedLine {
	t.Helper()
	deals, err := domaintest.LoadSolved("../testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]solvedLine, len(deals))
	for i, d := range deals {
		out[i] = solvedLine{d}
	}
	return out
}

func (l solvedLine) layout() *client.Layout {
	out := &client.Layout{Stock: l.Stock}
	for k, pile := range l.Tableau {
		n := len(pile) - l.FaceUp[k]
		out.Tableau = append(out.Tableau, client.LayoutPile{FaceDown: pile[:n], FaceUp: pile[n:]})
	}
	return out
}

// solverRequests turns one solver token into move requests against the
// game as the client last saw it: a suit letter names the foundation whose
// cards are of that suit (ours are not assigned in advance, R1.4).
func solverRequests(t *testing.T, g client.Game, tok string) []client.MoveRequest {
	t.Helper()
	s := func(v string) *string { return &v }
	switch {
	case tok == "NEW":
		return []client.MoveRequest{clientReq(draw())}
	case strings.HasPrefix(tok, "DR"):
		n, _ := strconv.Atoi(tok[2:])
		out := make([]client.MoveRequest, n)
		for i := range out {
			out[i] = clientReq(draw())
		}
		return out
	case tok[0] == 'F':
		if g.Options.Flip == "auto" {
			return nil
		}
		i, _ := strconv.Atoi(tok[1:])
		return []client.MoveRequest{clientReq(flip("tableau/" + strconv.Itoa(i-1)))}
	}
	count := 1
	body := tok
	if a, b, ok := strings.Cut(tok, "-"); ok {
		body = a
		count, _ = strconv.Atoi(b)
	}
	suitNames := map[byte]string{'C': "clubs", 'D': "diamonds", 'H': "hearts", 'S': "spades"}
	pile := func(ch byte) string {
		switch {
		case ch == 'W':
			return "waste"
		case ch >= '1' && ch <= '7':
			return "tableau/" + strconv.Itoa(int(ch-'1'))
		}
		for i, f := range g.Foundations {
			if len(f.Cards) > 0 && string(f.Cards[0].Suit) == suitNames[ch] {
				return "foundation/" + strconv.Itoa(i)
			}
		}
		return "foundation" // the ace starts whichever foundation takes it
	}
	from, to := pile(body[0]), pile(body[1])
	typ := "move"
	if strings.HasPrefix(from, "foundation") {
		typ = "take-back"
	}
	return []client.MoveRequest{clientReq(api.MoveRequest{Type: typ, From: s(from), To: s(to), Count: &count})}
}

// playSolvedOverHTTP creates the line's deal as a layout game and plays the
// solver's tokens through the generated client until the game is won. It
// returns the final game and every game the server returned live, by
// version.
func playSolvedOverHTTP(t *testing.T, c *client.ClientWithResponses, l solvedLine, variant string, opts *client.CreateOptions) (client.Game, map[int]client.Game) {
	t.Helper()
	ctx := context.Background()
	created, err := c.CreateGameWithResponse(ctx, nil, client.CreateGameRequest{Variant: variant, Layout: l.layout(), Options: opts})
	if err != nil || created.JSON201 == nil {
		t.Fatalf("%s %s: create: %v %s", l.ID, variant, err, created.Body)
	}
	g := *created.JSON201
	live := map[int]client.Game{g.Version: g}
	for i, tok := range l.Solution {
		for _, m := range solverRequests(t, g, tok) {
			if g.Status == client.GameStatusWon {
				return g, live // relaxed finished by itself (R2.6 automatic)
			}
			r, err := c.PlayMoveWithResponse(ctx, g.Id, nil, m)
			if err != nil || r.JSON200 == nil {
				t.Fatalf("%s %s: token %d %q refused: %v %s", l.ID, variant, i, tok, err, r.Body)
			}
			g = r.JSON200.Game
			live[g.Version] = g
		}
	}
	return g, live
}

// checkStates reads states/{v} for every version: each must answer, and
// those the server returned live must be equal to what it returned.
func checkStates(t *testing.T, c *client.ClientWithResponses, g client.Game, live map[int]client.Game) {
	t.Helper()
	ctx := context.Background()
	for v := 1; v <= g.Version; v++ {
		st, err := c.GetStateWithResponse(ctx, g.Id, v)
		if err != nil || st.JSON200 == nil {
			t.Fatalf("states/%d: %v %s", v, err, st.Body)
		}
		if st.JSON200.Version != v {
			t.Fatalf("states/%d has version %d", v, st.JSON200.Version)
		}
		want, ok := live[v]
		if !ok {
			continue // an automatic event inside a command: never returned live
		}
		got := *st.JSON200
		if v < g.Version {
			// A replayed earlier state of a finished game reveals its
			// hidden cards (R6.4); live it was in progress. Compare the
			// rest, and the revealed counts with the live ones.
			for i := range got.Tableau {
				if n := got.Tableau[i].FaceDownCards; n == nil || len(*n) != want.Tableau[i].FaceDown {
					t.Fatalf("states/%d tableau/%d: face-down cards not revealed", v, i)
				}
				got.Tableau[i].FaceDownCards = nil
			}
			if got.Stock.Cards == nil || len(*got.Stock.Cards) != want.Stock.Count {
				t.Fatalf("states/%d: stock not revealed", v)
			}
			got.Stock.Cards = nil
			// Time and status-derived fields are those of that version.
			got.ElapsedMs, want.ElapsedMs = 0, 0
		}
		if !reflect.DeepEqual(got, want) {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			t.Fatalf("states/%d differs from the live game:\nreplay %s\nlive   %s", v, gj, wj)
		}
	}
}

// TestSolverLinesOverHTTP is the end-to-end check of the rules: the independent solver's
// winning lines played to a win through the generated client over real
// HTTP, on the embedded database and PostgreSQL, then every version read
// back with states/{v}.
func TestSolverLinesOverHTTP(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		hc := &http.Client{Transport: e.tr}
		auth := func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+e.token)
			return nil
		}
		c, err := client.NewClientWithResponses(e.srv.URL, client.WithHTTPClient(hc), client.WithRequestEditorFn(auth))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range []string{"klondike-solved-draw1.jsonl", "klondike-solved-draw3.jsonl"} {
			t.Run(file, func(t *testing.T) {
				t.Parallel()
				solverFile(t, c, file)
			})
		}
	})
}

// solverFile plays every line of testdata/file (see TestSolverLinesOverHTTP).
func solverFile(t *testing.T, c *client.ClientWithResponses, file string) {
	t.Helper()
	won := 0
	for _, l := range loadSolvedLines(t, file) {
		draw := client.CreateOptionsDraw(l.Draw)
		g, live := playSolvedOverHTTP(t, c, l, "relaxed", &client.CreateOptions{Draw: &draw})
		if g.Status != client.GameStatusWon {
			t.Fatalf("%s relaxed: ended %s", l.ID, g.Status)
		}
		checkStates(t, c, g, live)
		won++
		if l.Draw == 3 {
			g, _ := playSolvedOverHTTP(t, c, l, "klassik", nil)
			if g.Status != client.GameStatusWon || g.Score == nil {
				t.Fatalf("%s klassik: ended %s", l.ID, g.Status)
			}
			// R4.2: 1700 for the cards, 1700 for all out, 10 per
			// turned card, -20 per recycle after the first, 5 per
			// whole second left of the 300.
			recycles := strings.Count(strings.Join(l.Solution, " "), "NEW")
			want := 1700 + 1700 + 21*10 - 20*max(0, recycles-1) + 5*((300_000-g.ElapsedMs)/1000)
			if *g.Score != want {
				t.Errorf("%s klassik: R4.2 score %d, want %d (elapsed %d ms)", l.ID, *g.Score, want, g.ElapsedMs)
			}
			won++
		}
		if l.Strict() {
			variant := map[int]string{1: "klondike", 3: "klondike-draw3"}[l.Draw]
			if g, _ := playSolvedOverHTTP(t, c, l, variant, nil); g.Status != client.GameStatusWon {
				t.Fatalf("%s %s: ended %s", l.ID, variant, g.Status)
			}
			won++
		}
	}
	t.Logf("%d solver games won over HTTP", won)
}
