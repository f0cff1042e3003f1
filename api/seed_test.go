package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
)

// TestSeedAboveTwoTo53RoundTrips (R6.1): a seed above 2^53, which a
// JavaScript number cannot hold, is sent as a decimal string, deals exactly
// the game domain.Deal deals from it, and comes back from the audit after
// the end as the same decimal string, byte for byte.
func TestSeedAboveTwoTo53RoundTrips(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		const seed = uint64(9925980916699881289) // > 2^53: 9925980916699881000 as a double
		g := e.createGame(map[string]any{"variant": "klondike", "seed": "9925980916699881289"})
		rules, _, _ := domain.Variants()[0].Resolve(domain.Options{})
		deal := domain.Deal(rules, seed)
		for i, p := range deal.Tableau {
			if got := g.Tableau[i].Cards[len(g.Tableau[i].Cards)-1].Code; got != p.Up[len(p.Up)-1].String() {
				t.Fatalf("tableau/%d shows %s, domain.Deal(%d) has %s", i, got, seed, p.Up[len(p.Up)-1])
			}
		}
		e.play(g.ID, resign())
		r := e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + g.ID + "/audit"})
		if !bytes.Contains(r.body, []byte(`"seed":"9925980916699881289"`)) {
			t.Errorf("the audit does not send the seed as the decimal string: %s", r.body)
		}
		var a api.Audit
		r.decode(t, &a)
		if a.Seed == nil || uint64(*a.Seed) != seed || a.CommitmentOK == nil || !*a.CommitmentOK {
			t.Errorf("audit seed %v, commitment_ok %v; want %d, true", a.Seed, a.CommitmentOK, seed)
		}
		// Sent back, the revealed seed deals the same game again.
		again := e.createGame(map[string]any{"variant": "klondike", "seed": json.RawMessage(`"` + a.Seed.String() + `"`)})
		for i := range g.Tableau {
			if g.Tableau[i].Cards[len(g.Tableau[i].Cards)-1] != again.Tableau[i].Cards[len(again.Tableau[i].Cards)-1] {
				t.Errorf("the seed sent back deals another tableau/%d", i)
			}
		}
		// The largest seed and the largest JSON-safe number are taken.
		for _, s := range []string{`"18446744073709551615"`, `"0"`, `9007199254740991`, `0`} {
			e.createGame(map[string]any{"variant": "klondike", "seed": json.RawMessage(s)})
		}
	})
}

// TestSeedRefused: a seed a client could have rounded (a JSON number above
// 2^53 − 1) or that is no seed at all is refused with 400 naming the field,
// and creates nothing; the detail tells a number's sender to send a string.
func TestSeedRefused(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		before := e.countGames()
		for _, tc := range []struct{ seed, detail string }{
			{`9007199254740992`, "decimal string"},
			{`9925980916699881289`, "decimal string"},
			{`18446744073709551616`, "decimal string"},
			{`1.5`, "decimal string"},
			{`-1`, "decimal string"},
			{`1e3`, "decimal string"},
			{`"18446744073709551616"`, "decimal seed"},
			{`"-1"`, "decimal seed"},
			{`"+1"`, "decimal seed"},
			{`""`, "decimal seed"},
			{`" 42"`, "decimal seed"},
			{`"000000000000000000042"`, "decimal seed"},
			{`"0x2a"`, "decimal seed"},
			{`true`, "neither a decimal string nor a number"},
			{`{}`, "neither a decimal string nor a number"},
		} {
			r := e.do(req{method: "POST", path: "/v1/games", invalid: true,
				body: `{"variant": "klondike", "seed": ` + tc.seed + `}`})
			p := r.problem(t)
			if r.status != http.StatusBadRequest || p.Code != api.CodeInvalidBody || p.Param != "seed" ||
				!strings.Contains(p.Detail, tc.detail) {
				t.Errorf("seed %s: %d %s param %q %q, want 400 invalid_body param seed mentioning %q",
					tc.seed, r.status, p.Code, p.Param, p.Detail, tc.detail)
			}
		}
		if n := e.countGames(); n != before {
			t.Errorf("refused seeds created %d games", n-before)
		}
	})
}
