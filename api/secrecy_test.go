package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
)

// cardCode is a card's text code (RULES R1.1).
var cardCode = regexp.MustCompile(`^[A2-9TJQK][CDHS]$`)

// cardsIn adds to set every card code that appears as a JSON string
// anywhere in v, and reports the keys "seed" and "salt" that carry a value
// other than null.
func cardsIn(v any, set map[string]bool, secrets *[]string) {
	switch x := v.(type) {
	case string:
		if cardCode.MatchString(x) {
			set[x] = true
		}
	case []any:
		for _, y := range x {
			cardsIn(y, set, secrets)
		}
	case map[string]any:
		for k, y := range x {
			if (k == "seed" || k == "salt") && y != nil {
				*secrets = append(*secrets, k)
			}
			cardsIn(y, set, secrets)
		}
	}
}

// readable collects what a body shows: JSON, NDJSON, or an SSE stream
// (the data of each event). It fails the test on a body it cannot parse,
// and on a seed or salt shown unless secrets is nil.
func readable(t *testing.T, what string, body []byte, set map[string]bool, secrets *[]string) {
	t.Helper()
	var docs [][]byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Bytes()
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			line = bytes.TrimSpace(d)
		} else if len(line) == 0 || line[0] != '{' && line[0] != '[' {
			continue // SSE id:/event: lines, blank lines
		}
		if len(line) > 0 {
			docs = append(docs, slices.Clone(line))
		}
	}
	if len(docs) == 0 {
		t.Fatalf("%s: nothing readable in %q", what, truncate(body))
	}
	for _, d := range docs {
		var v any
		if err := json.Unmarshal(d, &v); err != nil {
			t.Fatalf("%s: %v in %q", what, err, truncate(d))
		}
		var found []string
		cardsIn(v, set, &found)
		if secrets != nil && len(found) > 0 {
			*secrets = append(*secrets, found...)
			t.Errorf("%s shows %v: %s", what, found, truncate(d))
		}
	}
}

// faceUp adds the face-up cards of a game as its owner sees it.
func faceUp(g api.Game, set map[string]bool) {
	add := func(cs []api.Card) {
		for _, c := range cs {
			set[c.Code] = true
		}
	}
	add(g.Waste.Cards)
	for _, f := range g.Foundations {
		add(f.Cards)
	}
	for _, p := range g.Tableau {
		add(p.Cards)
	}
}

// everyRoute reads game id as token's player through every route that
// shows a game (game, states/1..v, events JSON and NDJSON, stream, audit)
// and returns the card codes found. sealed: fail on any seed or salt shown.
func (e *cenv) everyRoute(t *testing.T, token, id string, sealed bool) (cards map[string]bool, audit api.Audit) {
	t.Helper()
	cards = map[string]bool{}
	var secrets *[]string
	if sealed {
		secrets = new([]string)
	}
	get := func(path string, header map[string]string) resp {
		return e.must(http.StatusOK, req{method: "GET", path: path, token: token, header: header})
	}
	g := get("/v1/games/"+id, nil)
	readable(t, "game", g.body, cards, secrets)
	var game api.Game
	g.decode(t, &game)
	for v := 1; v <= game.Version; v++ {
		readable(t, "states/"+strconv.Itoa(v), get("/v1/games/"+id+"/states/"+strconv.Itoa(v), nil).body, cards, secrets)
	}
	readable(t, "events", get("/v1/games/"+id+"/events?limit=500", nil).body, cards, secrets)
	readable(t, "events NDJSON", get("/v1/games/"+id+"/events", map[string]string{"Accept": "application/x-ndjson"}).body,
		cards, secrets)
	// The stream of an ended game sends its whole log and ends.
	hr, err := http.NewRequest("GET", e.srv.URL+"/v1/games/"+id+"/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+token)
	hr.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	_, err = stream.ReadFrom(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d, %v", res.StatusCode, err)
	}
	readable(t, "stream", stream.Bytes(), cards, secrets)
	a := get("/v1/games/"+id+"/audit", nil)
	readable(t, "audit", a.body, cards, secrets)
	a.decode(t, &audit)
	return cards, audit
}

// R6.6, R6.4: a second account on a shared deal (a daily deal, a duel)
// resigns at once; while its main account still plays the same cards,
// nothing the second can read through any route shows a card it has not
// seen face up, nor the seed or salt, and its audit checks chain and replay
// but not the commitment (sealed, commitment_checked_after the close). A
// rival still gets 404. After the close (the end of the UTC day, the
// duel's deadline) the whole deal, the seed and the salt appear, and the
// audit checks the commitment.
func TestR6_6_SharedDealSecrecy(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"daily", "duel"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			forEachCompStore(t, func(t *testing.T, e *cenv) {
				_, altToken := e.newPlayer("Alt")
				var main, alt api.Game
				var closes time.Time
				switch kind {
				case "daily":
					main = e.playDaily(e.token, "klondike")
					alt = e.playDaily(altToken, "klondike")
					closes = time.Date(start.Year(), start.Month(), start.Day()+1, 0, 0, 0, 0, time.UTC)
				case "duel":
					d := e.createDuel(map[string]any{"variant": "klondike", "duration_s": 3600})
					main = e.join(e.token, d.ID)
					alt = e.join(altToken, d.ID)
					closes = start.Add(time.Hour)
				}
				seen := map[string]bool{}
				faceUp(alt, seen)
				resigned := e.playAs(altToken, alt.ID, resign())
				if resigned.Game.Status != "lost" || resigned.Game.Stock.Cards != nil {
					t.Fatalf("the resign answer reveals: status %s, stock %v", resigned.Game.Status, resigned.Game.Stock.Cards)
				}
				var secrets []string
				shown := map[string]bool{}
				b, _ := json.Marshal(resigned)
				readable(t, "resign", b, shown, &secrets)
				// The main account draws through the stock: it sees cards the
				// second account never did.
				for range 10 {
					e.playAs(e.token, main.ID, draw())
				}
				e.clock.Advance(time.Minute)

				cards, audit := e.everyRoute(t, altToken, alt.ID, true)
				for c := range shown {
					cards[c] = true
				}
				for c := range cards {
					if !seen[c] {
						t.Errorf("the second account reads %s, which it never saw face up", c)
					}
				}
				if len(seen) != 7 || len(cards) == 0 {
					t.Fatalf("saw %d cards face up, reads %d", len(seen), len(cards))
				}
				if !audit.Sealed || audit.CommitmentOK != nil || audit.Seed != nil || audit.Salt != nil ||
					audit.Problem != nil || !audit.ChainOK || !audit.ReplayOK || !audit.ProjectionOK ||
					audit.CommitmentCheckedAfter == nil || *audit.CommitmentCheckedAfter != domain.FormatTime(closes) {
					t.Errorf("sealed audit: %+v", audit)
				}
				// Rivals see neither game.
				e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + alt.ID})
				e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + alt.ID + "/audit"})
				e.must(http.StatusNotFound, req{method: "GET", path: "/v1/games/" + main.ID, token: altToken})

				// One millisecond before the close nothing changes.
				e.clock.Advance(closes.Sub(e.clock.Now()) - time.Millisecond)
				if _, a := e.everyRoute(t, altToken, alt.ID, true); !a.Sealed {
					t.Errorf("unsealed before the close: %+v", a)
				}
				e.clock.Advance(time.Millisecond)
				cards, audit = e.everyRoute(t, altToken, alt.ID, false)
				if want := 52; len(cards) != want {
					t.Errorf("after the close the second account reads %d cards, want the whole deal (%d)", len(cards), want)
				}
				if audit.Sealed || audit.CommitmentCheckedAfter != nil || audit.CommitmentOK == nil || !*audit.CommitmentOK ||
					audit.Seed == nil || audit.Salt == nil || !audit.ChainOK || !audit.ReplayOK {
					t.Errorf("audit after the close: %+v", audit)
				}
				e.checkReveal(rulesOf(t, "klondike"), alt.Commitment, audit.Seed, audit.Salt, 0)
				// Now anyone may read it, deal included.
				var g api.Game
				e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + alt.ID}).decode(t, &g)
				if g.Stock.Cards == nil || len(g.Tableau[6].FaceDownCards) != 6 {
					t.Errorf("a rival's view after the close: stock %v, face down %v", g.Stock.Cards, g.Tableau[6].FaceDownCards)
				}
				if strings.Contains(string(e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + alt.ID + "/events",
					header: map[string]string{"Accept": "application/x-ndjson"}}).body), `"hidden"`) {
					t.Error("the log is still redacted after the close")
				}
			})
		})
	}
}
