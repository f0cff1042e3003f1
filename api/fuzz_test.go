package api

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
)

// Fuzz targets for the request decoding (STYLE.md "Fuzz what takes outside
// input"). Their seeds run as normal tests; `go test -fuzz FuzzX ./api`
// explores further. Each asserts the properties every request relies on:
// no panic, every refusal a known problem (4xx with a stable code), and
// accepted input round-trips.

// checkRefusal fails unless err maps to a known 4xx problem of one of the
// codes.
func checkRefusal(t *testing.T, what string, err error, codes ...string) {
	t.Helper()
	p, known := problemFor(err)
	if !known || p.Status < 400 || p.Status >= 500 || p.Title == "" || p.Detail == "" {
		t.Fatalf("%s: %v maps to %+v (known %v)", what, err, p, known)
	}
	for _, c := range codes {
		if p.Code == c {
			return
		}
	}
	t.Fatalf("%s: code %s, want one of %v", what, p.Code, codes)
}

// FuzzDecodeMove: a move body decodes to a domain move or is refused as
// invalid_body (400) or illegal_move (422); an accepted move, sent back in
// request form, decodes to the same move.
func FuzzDecodeMove(f *testing.F) {
	for _, s := range []string{
		`{"type":"draw"}`, `{"type":"move","from":"tableau/3","to":"foundation","count":1}`,
		`{"type":"move","from":"waste","to":"tableau/0"}`, `{"type":"take-back","from":"foundation/2","to":"tableau/6"}`,
		`{"type":"flip","pile":"tableau/11"}`, `{"type":"undo"}`, `{"type":"autocomplete"}`, `{"type":"resign"}`,
		`{"type":"move","from":"tableau/01","to":"foundation/99","count":0}`, `{"type":"move","count":-1}`,
		`{"type":"move","count":1e400}`, `{"type":"move","count":9223372036854775808}`, `{"type":1}`,
		`{"type":"draw","extra":true}`, `{"type":"draw"} {}`, `{"type":"draw"`, `[]`, `null`, ``, `"draw"`,
		"{\"type\":\"\xff\"}", `{"type":"\u0000"}`, `{"from":"tableau/` + strings.Repeat("9", 40) + `"}`,
		`{"type":"move","from":"foundation/-0","to":"tableau/+1"}`, `{"type":"flip","pile":"Tableau/1"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req MoveRequest
		if err := decodeStrict(body, &req); err != nil {
			checkRefusal(t, "decode", err, CodeInvalidBody)
			return
		}
		m, err := req.move()
		if err != nil {
			checkRefusal(t, "move", err, CodeIllegalMove)
			return
		}
		back, err := json.Marshal(newMoveRequest(m))
		if err != nil {
			t.Fatal(err)
		}
		var again MoveRequest
		if err := decodeStrict(back, &again); err != nil {
			t.Fatalf("%s does not decode: %v", back, err)
		}
		m2, err := again.move()
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("%s -> %+v -> %s -> %+v (%v)", body, m, back, m2, err)
		}
	})
}

// FuzzDecodeCreateGame: a create-game body decodes or is refused as
// invalid_body; its options and layout are then refused by the domain
// only with known problems (unknown variant, invalid option, invalid
// layout), never a panic or an unknown error.
func FuzzDecodeCreateGame(f *testing.F) {
	runs := `{"tableau":[{"face_down":[],"face_up":["KS","QH","JS","TH","9S","8H","7S","6H","5S","4H","3S","2H","AS"]},` +
		`{"face_down":[],"face_up":["KH","QS","JH","TS","9H","8S","7H","6S","5H","4S","3H","2S","AH"]},` +
		`{"face_down":[],"face_up":["KC","QD","JC","TD","9C","8D","7C","6D","5C","4D","3C","2D","AC"]},` +
		`{"face_down":[],"face_up":["KD","QC","JD","TC","9D","8C","7D","6C","5D","4C","3D","2C","AD"]},` +
		`{"face_down":[],"face_up":[]},{"face_down":[],"face_up":[]},{"face_down":[],"face_up":[]}],"stock":[]}`
	for _, s := range []string{
		`{"variant":"klondike"}`, `{"variant":"klassik","options":{"draw":3,"scoring":"vegas","time_limit_s":10}}`,
		`{"variant":"relaxed","layout":` + runs + `}`, `{"variant":"klondike","seed":18446744073709551615}`,
		`{"variant":"klondike","seed":-1}`, `{"variant":"klondike","seed":1.5}`, `{"variant":"harp","layout":{"tableau":[],"stock":[]}}`,
		`{"variant":"klondike","seed":1,"layout":` + runs + `}`, `{"variant":"tripleharp","options":{"undo":false,"flip":"player"}}`,
		`{"variant":"klondike","options":{"draw":2}}`, `{"variant":"klondike","options":{"time_limit_s":-5}}`,
		`{"variant":"spider"}`, `{"variant":""}`, `{"variant":"klondike","duel_id":"x"}`,
		`{"variant":"klondike","layout":{"tableau":[{"face_down":["XX"],"face_up":["AS"]}],"stock":["AS","AS"]}}`,
		`{"variant":"klondike","layout":{"tableau":null,"stock":null}}`, `{"variant":"klondike","options":null}`,
		`{"variant":"klondike","layout":{"tableau":[{"face_down":["AS"],"face_up":[]}],"stock":[]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req CreateGameRequest
		if err := decodeStrict(body, &req); err != nil {
			checkRefusal(t, "decode", err, CodeInvalidBody)
			return
		}
		v, err := domain.LookupVariant(req.Variant)
		if err != nil {
			checkRefusal(t, "variant", err, CodeUnknownVariant)
			return
		}
		rules, _, err := v.Resolve(req.Options.options())
		if err != nil {
			checkRefusal(t, "options", err, CodeInvalidOption)
			return
		}
		if req.Layout == nil {
			return
		}
		pos, err := req.Layout.position()
		if err != nil {
			checkRefusal(t, "layout", err, CodeInvalidLayout)
			return
		}
		deal := domain.Position{Tableau: pos.Tableau, Stock: pos.Stock, Foundations: make([][]domain.Card, rules.Foundations)}
		if err := deal.Validate(rules); err != nil {
			checkRefusal(t, "layout", err, CodeInvalidLayout)
		}
	})
}

// FuzzQueryAndHeaders: the query parameters and headers the handlers read
// (limit and after, If-Match, If-None-Match, Authorization, the path) are
// parsed within their ranges or refused as invalid_parameter (400).
func FuzzQueryAndHeaders(f *testing.F) {
	for _, s := range [][4]string{
		{"limit=50&after=0", `"12"`, `"12", W/"3"`, "Bearer abc"},
		{"limit=0", `*`, `*`, "bearer x y"},
		{"limit=501&after=-1", `"-1"`, ``, "Basic x"},
		{"limit=9223372036854775808", `"01"`, `W/`, "Bearer"},
		{"after=2147483648&limit=1", `12`, `"`, ""},
		{"limit=%00&limit=2", `"99999999999999999999"`, `,,,`, "Bearer \xff"},
		{"limit=+5", `" 1"`, `"1`, "Bearer  \t tok "},
		{"after=1e3", `""`, `*,"1"`, "Token t"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	gin.SetMode(gin.ReleaseMode)
	f.Fuzz(func(t *testing.T, query, ifMatchValue, ifNoneMatch, authorization string) {
		r, err := http.NewRequest("GET", "/v1/games", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.URL.RawQuery = query
		r.Header["If-Match"] = []string{ifMatchValue}
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = r
		for _, q := range []struct {
			name        string
			def, lo, hi int
		}{{"limit", defaultLimit, 1, maxLimit}, {"after", 0, 0, math.MaxInt32}} {
			n, err := intQuery(c, q.name, q.def, q.lo, q.hi)
			if err != nil {
				checkRefusal(t, q.name, err, CodeInvalidParameter)
				var re *requestError
				if !errors.As(err, &re) || re.param != q.name {
					t.Fatalf("%s: refusal names %v", q.name, err)
				}
				continue
			}
			if n < q.lo || n > q.hi {
				t.Fatalf("%s=%d outside %d..%d", q.name, n, q.lo, q.hi)
			}
		}
		if v, err := ifMatch(c); err != nil {
			checkRefusal(t, "If-Match", err, CodeInvalidParameter)
		} else if v < -1 {
			t.Fatalf("If-Match %q read as %d", ifMatchValue, v)
		}
		_ = etagListHas(ifNoneMatch, `"12"`)
		if tok, ok := bearerToken(authorization); ok && (tok == "" || tok != strings.TrimSpace(tok)) {
			t.Fatalf("token %q from %q", tok, authorization)
		}
		_ = ClientKey(query)
		if validText(query) && strings.ContainsRune(query, 0) {
			t.Fatalf("validText(%q) with a NUL", query)
		}
	})
}
