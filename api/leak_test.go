package api_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
)

// leakGame is a game of TestNoLeaks and what its owner must not learn
// while it is in progress.
type leakGame struct {
	id       string
	secrets  map[string]string // text that must not appear -> what it is
	revealed map[string]bool   // cards that have been face up at some version
}

// TestNoLeaks plays games of every kind of deal (server seed, client seed,
// custom layout, PySolFC number of R6.7, proven winnable deal of R7.2) on the one-deck variants and, after every move, reads
// every view of each game while it is in progress: the game, its legal
// moves, its events as JSON pages and as NDJSON, its states, the list of
// games, and the audit and live stream where the server has them. The test
// knows the server's state, so it knows which card lies face down at each
// pile position and in what order the stock lies; no answer may name a card
// that has never been face up, nor the seed or the salt (RULES R6.4), nor
// a winnable deal's line (R7.2). The
// answers to the moves themselves are scanned too, and another player
// cannot read the game at all.
func TestNoLeaks(t *testing.T) {
	t.Parallel()
	spec, err := openapi3.NewLoader().LoadFromData(solitaire.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	hasAudit := spec.Paths.Value("/v1/games/{id}/audit") != nil
	hasStream := spec.Paths.Value("/v1/games/{id}/stream") != nil
	forEachStore(t, func(t *testing.T, e *env) {
		rnd := rand.New(rand.NewPCG(7, 7))
		_, mallory := e.newPlayer("Mallory")
		clientSeed := api.Seed(12345678901234567891)
		winnable := true
		layout := func() *api.Layout { // a known deal: face-down cards under every pile
			l := &api.Layout{Stock: []string{}}
			pack := domain.ShuffledPack(99, 1)
			next := 0
			for i := 0; i < 7; i++ {
				p := api.LayoutPile{FaceDown: []string{}, FaceUp: []string{}}
				for j := 0; j < i; j++ {
					p.FaceDown = append(p.FaceDown, pack[next].String())
					next++
				}
				p.FaceUp = append(p.FaceUp, pack[next].String())
				next++
				l.Tableau = append(l.Tableau, p)
			}
			for ; next < len(pack); next++ {
				l.Stock = append(l.Stock, pack[next].String())
			}
			return l
		}
		requests := []api.CreateGameRequest{
			{Variant: "klondike"},
			{Variant: "klassik", Seed: &clientSeed},
			{Variant: "relaxed", Layout: layout()},
			{Variant: "klondike-draw3"},
			{Variant: "klondike", Deal: str("pysolfc:12345")},
			{Variant: "relaxed", Deal: str("pysolfc:1000000")},
			{Variant: "relaxed", Winnable: &winnable}, // a proven deal (R7.2): its line is secret too
		}
		e.waitReady(rulesOf(t, "relaxed"), 1)
		moves := 12
		if e.store.Dialect() == "sqlite" {
			moves = 6 // fewer on SQLite, as when its driver was pure Go (slow under -race)
		}
		var bodies, leaks int
		for _, cr := range requests {
			r := e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", body: cr})
			var g api.Game
			r.decode(t, &g)
			lg := &leakGame{id: g.ID, secrets: map[string]string{}, revealed: map[string]bool{}}
			stored, err := e.store.Game(context.Background(), g.ID)
			if err != nil {
				t.Fatal(err)
			}
			if stored.HasSeed {
				s := strconv.FormatUint(stored.Seed, 10)
				lg.secrets[s] = "the seed"
				lg.secrets[strconv.FormatUint(stored.Seed, 16)] = "the seed in hex"
			}
			for _, enc := range []string{hex.EncodeToString(stored.Salt), base64.StdEncoding.EncodeToString(stored.Salt),
				base64.RawURLEncoding.EncodeToString(stored.Salt)} {
				lg.secrets[enc] = "the salt"
			}
			if stored.Winnable {
				for _, s := range lineSecrets(t, stored.Solution)[:2] {
					lg.secrets[s] = "the winning line"
				}
			}
			leaks += lg.scan(t, e, "POST /v1/games", r.body)
			for m := 0; m < moves; m++ {
				st := e.load(g.ID)
				if st.Status.Ended() {
					break
				}
				lg.see(st)
				bodies += lg.readAll(t, e, rnd, hasAudit, hasStream && m%6 == 0)
				leaks += lg.foreign(t, e, mallory)
				var choice []domain.Move
				for _, mv := range domain.LegalMoves(st) {
					if mv.Type != domain.MoveResign && (mv.Type != domain.MoveUndo || rnd.IntN(4) == 0) {
						choice = append(choice, mv)
					}
				}
				if len(choice) == 0 {
					break
				}
				r := e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + g.ID + "/moves",
					body: fromDomain(choice[rnd.IntN(len(choice))])})
				if after := e.load(g.ID); !after.Status.Ended() {
					lg.see(after)
					leaks += lg.scan(t, e, "POST moves", r.body)
					bodies++
				}
			}
			lg.selfCheck(t, e)
		}
		if leaks > 0 {
			t.Errorf("%d leaks", leaks)
		}
		figures(t, "%d games (server seed, client seed, layout, numbered, winnable), %d bodies scanned (game, legal moves, list, "+
			"events JSON and NDJSON, states, moves; audit %v, stream %v), hidden cards, seeds and salts found: %d",
			len(requests), bodies, hasAudit, hasStream, leaks)
	})
}

// see notes the cards face up in s: once seen, a card is no secret.
func (lg *leakGame) see(s *domain.State) {
	for _, p := range s.Tableau {
		for _, c := range p.Cards[p.Down:] {
			lg.revealed[c.String()] = true
		}
	}
	for _, c := range s.Waste {
		lg.revealed[c.String()] = true
	}
	for _, f := range s.Foundations {
		for _, c := range f {
			lg.revealed[c.String()] = true
		}
	}
}

// hidden are the cards of s never seen face up, by where they lie: each
// tableau pile's face-down cards by position, and the stock in draw order.
func (lg *leakGame) hidden(s *domain.State) map[string]string {
	out := map[string]string{}
	for i, p := range s.Tableau {
		for j, c := range p.Cards[:p.Down] {
			if !lg.revealed[c.String()] {
				out[c.String()] = fmt.Sprintf("face-down card %d of tableau/%d", j, i)
			}
		}
	}
	for j, c := range s.Stock {
		if !lg.revealed[c.String()] {
			out[c.String()] = fmt.Sprintf("stock card %d", j)
		}
	}
	return out
}

// endedOnly are fields a view shows only once the game has ended.
var endedOnly = regexp.MustCompile(`"face_down_cards"|"seed":\s*[0-9]`)

// leaksIn lists every card never seen face up, seed or salt of the game in
// body, given the game's state s.
func (lg *leakGame) leaksIn(s *domain.State, body []byte) []string {
	text := string(body)
	var out []string
	for code, where := range lg.hidden(s) {
		if strings.Contains(text, `"`+code+`"`) {
			out = append(out, fmt.Sprintf("%s, %s", code, where))
		}
	}
	for secret, name := range lg.secrets {
		if strings.Contains(text, secret) {
			out = append(out, name)
		}
	}
	if m := endedOnly.FindString(text); m != "" {
		out = append(out, m+" (a field shown only once the game has ended)")
	}
	return out
}

// scan reports every hidden card, seed or salt in body while the game is
// in progress.
func (lg *leakGame) scan(t *testing.T, e *env, what string, body []byte) int {
	t.Helper()
	s := e.load(lg.id)
	if s.Status.Ended() {
		return 0
	}
	found := lg.leaksIn(s, body)
	for _, f := range found {
		t.Errorf("%s: game %s at version %d: the body names %s: %s", what, lg.id, s.Version, f, truncate(body))
	}
	return len(found)
}

// selfCheck makes sure the scan would see a leak: the stored deal event
// of a game in progress, unredacted, names its hidden cards.
func (lg *leakGame) selfCheck(t *testing.T, e *env) {
	s := e.load(lg.id)
	if s.Status.Ended() || len(lg.hidden(s)) == 0 {
		return
	}
	recs, err := e.store.Events(context.Background(), lg.id, 0, 1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("events: %v", err)
	}
	if found := lg.leaksIn(s, recs[0].Payload); len(found) == 0 {
		t.Errorf("game %s: the scan finds nothing in the unredacted deal %s", lg.id, truncate(recs[0].Payload))
	}
}

// readAll reads every view of the game and scans it; it returns the number
// of bodies scanned.
func (lg *leakGame) readAll(t *testing.T, e *env, rnd *rand.Rand, audit, stream bool) (bodies int) {
	t.Helper()
	base := "/v1/games/" + lg.id
	s := e.load(lg.id)
	read := func(what string, q req) {
		r := e.must(http.StatusOK, q)
		if n := lg.scan(t, e, what, r.body); n > 0 {
			t.Logf("%d leaks in %s", n, what)
		}
		bodies++
	}
	read("game", req{method: "GET", path: base})
	read("legal moves", req{method: "GET", path: base + "/legal-moves"})
	read("list", req{method: "GET", path: "/v1/games?status=in_progress"})
	limit := 3 + rnd.IntN(8)
	for after := 0; after < s.Version; after += limit {
		read("events page", req{method: "GET", path: fmt.Sprintf("%s/events?after=%d&limit=%d", base, after, limit)})
	}
	read("events NDJSON", req{method: "GET", path: base + "/events", header: map[string]string{"Accept": "application/x-ndjson"}})
	for _, v := range []int{s.Version, 1 + rnd.IntN(s.Version)} {
		read("state", req{method: "GET", path: fmt.Sprintf("%s/states/%d", base, v)})
	}
	if audit {
		read("audit", req{method: "GET", path: base + "/audit"})
	}
	if stream {
		lg.scan(t, e, "stream", readStream(t, e, base+"/stream", 400*time.Millisecond))
		bodies++
	}
	return bodies
}

// readStream reads what a live stream (Server-Sent Events) sends within d,
// from outside the validating transport, which would wait for its end.
func readStream(t *testing.T, e *env, path string, d time.Duration) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+e.token)
	hr.Header.Set("Accept", "text/event-stream")
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Errorf("GET %s: %v", path, err)
		return nil
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %d", path, res.StatusCode)
	}
	var out []byte
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out
		}
	}
}

// foreign checks another player cannot read the game in progress.
func (lg *leakGame) foreign(t *testing.T, e *env, token string) int {
	n := 0
	for _, p := range []string{"", "/legal-moves", "/events", "/states/1"} {
		r := e.do(req{method: "GET", path: "/v1/games/" + lg.id + p, token: token})
		if r.status != http.StatusNotFound {
			n++
			t.Errorf("GET %s by another player: %d, want 404", p, r.status)
		}
	}
	return n
}
