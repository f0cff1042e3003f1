package api_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/openpatience/solitaire/api"
)

// numberedVector is one line of testdata/pysolfc-klondike.jsonl.
type numberedVector struct {
	Number  string `json:"number"`
	Tableau []struct {
		FaceDown []string `json:"face_down"`
		FaceUp   []string `json:"face_up"`
	} `json:"tableau"`
	Stock []string `json:"stock"`
}

func readNumberedVectors(t *testing.T, file string) []numberedVector {
	t.Helper()
	f, err := os.Open("../testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []numberedVector
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var v numberedVector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		t.Fatal("no vectors")
	}
	return out
}

func codes(cs []api.Card) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Code
	}
	return out
}

// TestR6_7NumberedDeals: for every vector line (the shared ones and the
// edges, on the one-deck variants in turn), POST /v1/games with deal
// "pysolfc:<number>" deals PySolFC's Klondike deal of that number, shows
// the canonical deal on the game and in the listing, is unranked, shows
// only the face-up cards while in progress, and once resigned reveals
// exactly the vector's face-down cards and stock. GET /v1/variants lists
// numbered_deals per variant.
func TestR6_7NumberedDeals(t *testing.T) {
	t.Parallel()
	vectors := readNumberedVectors(t, "pysolfc-klondike.jsonl")
	vectors = append(vectors, readNumberedVectors(t, "pysolfc-klondike-edges.jsonl")...)
	forEachStore(t, func(t *testing.T, e *env) {
		var vl api.VariantList
		e.must(http.StatusOK, req{method: "GET", path: "/v1/variants", token: "-"}).decode(t, &vl)
		oneDeck := map[string]bool{}
		for _, v := range vl.Variants {
			want := []string{}
			if v.Decks == 1 {
				want = []string{"pysolfc"}
				oneDeck[v.ID] = true
			}
			if !slices.Equal(v.NumberedDeals, want) {
				t.Errorf("%s: numbered_deals %v, want %v", v.ID, v.NumberedDeals, want)
			}
		}
		for _, id := range []string{"klondike", "klondike-draw3", "klassik", "relaxed"} {
			if !oneDeck[id] {
				t.Errorf("%s not listed as a one-deck variant", id)
			}
		}
		ids := []string{"klondike", "klondike-draw3", "klassik", "relaxed"}
		for i, v := range vectors {
			id := ids[i%len(ids)]
			// The number as a player might type it: grouped with commas.
			typed := v.Number
			if len(typed) > 3 && !strings.HasPrefix(typed, "ms") {
				typed = typed[:len(typed)-3] + "," + typed[len(typed)-3:]
			}
			g := e.createGame(api.CreateGameRequest{Variant: id, Deal: str("pysolfc:" + typed)})
			if g.Deal == nil || *g.Deal != "pysolfc:"+v.Number {
				t.Errorf("%s %s: deal %v", id, typed, g.Deal)
			}
			if g.Ranked {
				t.Errorf("%s: a numbered deal is ranked", id)
			}
			if g.Stock.Count != 24 || g.Stock.Cards != nil {
				t.Errorf("%s: stock %+v while in progress", id, g.Stock)
			}
			for k, p := range g.Tableau {
				if p.FaceDown != k || p.FaceDownCards != nil || !slices.Equal(codes(p.Cards), v.Tableau[k].FaceUp) {
					t.Errorf("%s pile %d: %+v, want %d face down under %v", id, k, p, k, v.Tableau[k].FaceUp)
				}
			}
			var list api.GameList
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games"}).decode(t, &list)
			at := slices.IndexFunc(list.Games, func(s api.GameSummary) bool { return s.ID == g.ID })
			if at < 0 || list.Games[at].Deal == nil || *list.Games[at].Deal != *g.Deal {
				t.Errorf("%s: listing does not show the deal", id)
			}
			end := e.play(g.ID, resign()).Game
			for k, p := range end.Tableau {
				if !slices.Equal(codes(p.FaceDownCards), v.Tableau[k].FaceDown) {
					t.Errorf("%s pile %d: face down %v, want %v", id, k, codes(p.FaceDownCards), v.Tableau[k].FaceDown)
				}
			}
			if !slices.Equal(codes(end.Stock.Cards), v.Stock) {
				t.Errorf("%s: stock %v, want %v", id, codes(end.Stock.Cards), v.Stock)
			}
			if end.Deal == nil || *end.Deal != *g.Deal {
				t.Errorf("%s: deal after the end %v", id, end.Deal)
			}
		}
		// Other deals show none.
		if g := e.createGame(api.CreateGameRequest{Variant: "klondike"}); g.Deal != nil {
			t.Errorf("a server-seeded game shows deal %q", *g.Deal)
		}
	})
}

// TestR6_7NumberedDealRefused: a malformed or out-of-range number, an
// unknown scheme, a multi-deck variant, or a deal together with a seed, a
// layout or a duel is a 422 problem naming param "deal", and creates no
// game.
func TestR6_7NumberedDealRefused(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		seed := api.Seed(7)
		cases := []struct {
			name    string
			body    any
			detail  string
			invalid bool // breaks the spec on purpose
		}{
			{"malformed", api.CreateGameRequest{Variant: "klondike", Deal: str("pysolfc:12a")}, "not a decimal number", false},
			{"empty number", api.CreateGameRequest{Variant: "klondike", Deal: str("pysolfc:")}, "not a decimal number", false},
			{"above 10^20", api.CreateGameRequest{Variant: "klondike", Deal: str("pysolfc:100000000000000000001")}, "out of range", false},
			{"ms above 2^33", api.CreateGameRequest{Variant: "klondike", Deal: str("pysolfc:ms8589934592")}, "out of range", false},
			{"upper-case MS", api.CreateGameRequest{Variant: "relaxed", Deal: str("pysolfc:MS5")}, "not a decimal number", false},
			{"no scheme", api.CreateGameRequest{Variant: "klondike", Deal: str("12345")}, `must be "pysolfc:<number>"`, false},
			{"other scheme", api.CreateGameRequest{Variant: "klondike", Deal: str("freecell:1")}, `must be "pysolfc:<number>"`, false},
			{"empty", api.CreateGameRequest{Variant: "klondike", Deal: str("")}, `must be "pysolfc:<number>"`, true},
			{"tripleharp", api.CreateGameRequest{Variant: "tripleharp", Deal: str("pysolfc:1")}, "one-deck Klondike", false},
			{"harp", api.CreateGameRequest{Variant: "harp", Deal: str("pysolfc:1")}, "one-deck Klondike", false},
			{"with seed", api.CreateGameRequest{Variant: "klondike", Deal: str("pysolfc:1"), Seed: &seed}, "alone", false},
			{"with layout", api.CreateGameRequest{Variant: "klondike", Deal: str("pysolfc:1"), Layout: runs()}, "alone", false},
			{"with duel", api.CreateGameRequest{Variant: "klondike", Deal: str("pysolfc:1"), DuelID: str("d1")}, "alone", false},
		}
		for _, c := range cases {
			r := e.do(req{method: "POST", path: "/v1/games", body: c.body, invalid: c.invalid})
			if r.status != http.StatusUnprocessableEntity {
				t.Errorf("%s: status %d\n%s", c.name, r.status, r.body)
				continue
			}
			p := r.problem(t)
			if p.Param != "deal" || p.Code != api.CodeInvalidField || !strings.Contains(p.Detail, c.detail) {
				t.Errorf("%s: %+v, want param deal, code %s, detail with %q", c.name, p, api.CodeInvalidField, c.detail)
			}
		}
		var list api.GameList
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games"}).decode(t, &list)
		if len(list.Games) != 0 {
			t.Errorf("refused requests created %d games", len(list.Games))
		}
	})
}
