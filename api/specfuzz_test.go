package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
)

var (
	specFuzzN    = flag.Int("specfuzz.n", 0, "requests per database for TestSpecFuzz (0: 1500)")
	specFuzzSeed = flag.Uint64("specfuzz.seed", 1, "seed of TestSpecFuzz's generator")
)

// TestSpecFuzz reads openapi.yaml and sends generated requests to every
// operation it describes: valid ones (values from the schemas, real ids,
// legal moves) and mutated ones (wrong types, missing and unknown fields,
// huge, negative and fractional numbers, unicode and hostile strings,
// broken JSON, bad and foreign tokens, bad headers, wrong methods). Every
// answer goes through the validating transport (it must keep to the spec,
// and an error must be a problem document); on top of that no answer may
// be a 5xx, a rejected request or a read may change nothing in the
// database, a legal move or a well-formed game must be accepted, and a
// game in progress is answered to its owner only.
func TestSpecFuzz(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, e *env) {
		n := *specFuzzN
		if n == 0 {
			n = 1500
		}
		f := newSpecFuzzer(t, e, *specFuzzSeed)
		t0 := time.Now()
		for i := 0; i < n && !t.Failed(); i++ {
			f.one()
		}
		f.verifyGames()
		var codes []string
		for s, c := range f.byStatus {
			codes = append(codes, fmt.Sprintf("%d:%d", s, c))
		}
		sort.Strings(codes)
		figures(t, "%d requests to %d operations in %v (%d valid, %d mutated, %d wrong method; %d valid by the spec), "+
			"5xx: %d, rejected requests that changed the database: %d, reads that changed it: %d, "+
			"legal moves refused: %d, foreign games answered: %d, spec-valid requests answered 400: %d, "+
			"games verified: %d; statuses %s",
			f.sent, len(f.ops), time.Since(t0).Round(time.Millisecond), f.valid, f.mutated, f.wrongMethod, f.specValid,
			f.fiveXX, f.rejectedChanged, f.readChanged, f.legalRefused, f.foreign, f.valid400,
			len(f.owner), strings.Join(codes, " "))
	}, func(c *api.Config) { c.SolverMaxBudget = 500 * time.Millisecond }) // hints and solves well within the client's timeout
}

// fuzzOp is one operation of the spec.
type fuzzOp struct {
	method, path string
	op           *openapi3.Operation
	stream       bool // answers text/event-stream
	static       bool // tagged operations: probes, metrics, the spec
}

// specFuzzer generates and checks the requests of TestSpecFuzz.
type specFuzzer struct {
	t      *testing.T
	e      *env
	rnd    *rand.Rand
	ops    []fuzzOp
	router *openapi3.T

	tokens   []string            // players' tokens; 0 is e.token
	ids      map[string][]string // collection path -> ids created there
	owner    map[string]int      // game id -> index of its owner's token
	variants []api.Variant
	cursors  []string
	streams  int // valid stream requests sent

	sent, valid, mutated, wrongMethod, specValid                          int
	fiveXX, rejectedChanged, readChanged, legalRefused, foreign, valid400 int
	byStatus                                                              map[int]int
	counter                                                               *tableCounter
}

func newSpecFuzzer(t *testing.T, e *env, seed uint64) *specFuzzer {
	doc, err := openapi3.NewLoader().LoadFromData(solitaire.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	f := &specFuzzer{t: t, e: e, rnd: rand.New(rand.NewPCG(seed, 0x5eed)), router: doc,
		ids: map[string][]string{}, owner: map[string]int{}, byStatus: map[int]int{}}
	paths := doc.Paths.InMatchingOrder()
	sort.Strings(paths)
	for _, p := range paths {
		item := doc.Paths.Value(p)
		methods := make([]string, 0, len(item.Operations()))
		for m := range item.Operations() {
			methods = append(methods, m)
		}
		sort.Strings(methods)
		for _, m := range methods {
			if m == "HEAD" {
				continue // the GET's twin, without bodies: TestHeadOnEveryGetRoute
			}
			op := item.GetOperation(m)
			stream := false
			for _, r := range op.Responses.Map() {
				if r.Value != nil && r.Value.Content["text/event-stream"] != nil {
					stream = true
				}
			}
			static := false
			for _, tag := range op.Tags {
				static = static || tag == "operations"
			}
			f.ops = append(f.ops, fuzzOp{method: m, path: p, op: op, stream: stream, static: static})
		}
	}
	f.tokens = []string{e.token}
	_, bob := e.newPlayer("Bob")
	f.tokens = append(f.tokens, bob)
	var vl api.VariantList
	e.must(http.StatusOK, req{method: "GET", path: "/v1/variants", token: "-"}).decode(t, &vl)
	f.variants = vl.Variants
	// A few games to start from: in progress for each player, and one
	// that has ended.
	for i, v := range []string{"klondike", "klassik", "relaxed", "harp"} {
		var g api.Game
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", token: f.tokens[i%2],
			body: api.CreateGameRequest{Variant: v}}).decode(t, &g)
		f.addID("/v1/games", g.ID, i%2)
	}
	var g api.Game
	e.must(http.StatusCreated, req{method: "POST", path: "/v1/games", body: api.CreateGameRequest{Variant: "klondike"}}).decode(t, &g)
	e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + g.ID + "/moves", body: resign()})
	f.addID("/v1/games", g.ID, 0)
	f.counter = newTableCounter(t, e.store, tableList(t, e.store))
	return f
}

func (f *specFuzzer) addID(coll, id string, owner int) {
	f.ids[coll] = append(f.ids[coll], id)
	if coll == "/v1/games" {
		f.owner[id] = owner
	}
}

// pick returns one of xs.
func fuzzPick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// fuzzReq is a request being built.
type fuzzReq struct {
	op      fuzzOp
	method  string
	path    string // filled, escaped
	query   url.Values
	rawQ    string // appended verbatim after the encoded query
	header  map[string]string
	token   int    // index into tokens; -1 none; -2 a made-up one (header set directly)
	body    []byte // nil: none
	gameID  string // the {id} of a games path, if any
	version int    // the game's version when sent, for If-Match
	valid   bool   // built to be accepted
	legal   bool   // a legal move of the owner (must be 200)
	created bool   // a well-formed game (must be 201)
}

// one builds, sends and checks one request.
func (f *specFuzzer) one() {
	op := fuzzPick(f.rnd, f.ops)
	// Streams wait for their timeout, and validating the spec itself as an
	// answer is slow: fewer of both; the API's operations get the rest.
	for (op.stream && f.streams >= 4 || op.static) && f.rnd.IntN(4) != 0 {
		op = fuzzPick(f.rnd, f.ops)
	}
	q := f.build(op)
	switch r := f.rnd.IntN(100); {
	case r < 6:
		f.wrongMethodOf(q)
		f.wrongMethod++
	case r < 45:
		f.valid++
	default:
		f.mutate(q)
		f.mutated++
	}
	f.send(q)
}

// ---- valid requests ----

func (f *specFuzzer) build(op fuzzOp) *fuzzReq {
	q := &fuzzReq{op: op, method: strings.ToUpper(op.method), query: url.Values{}, header: map[string]string{},
		valid: true}
	// The caller: the owner of the game in the path, else anyone.
	q.token = f.rnd.IntN(len(f.tokens))
	if op.op.Security == nil || len(*op.op.Security) == 0 {
		q.token = -1 // the operation takes no token
	}
	path := op.path
	for _, p := range op.op.Parameters {
		pv := p.Value
		switch pv.In {
		case "path":
			v := f.pathValue(op.path, pv, q)
			path = strings.ReplaceAll(path, "{"+pv.Name+"}", url.PathEscape(v))
		case "query":
			if f.rnd.IntN(2) == 0 {
				if v, ok := f.queryValue(pv); ok {
					q.query.Set(pv.Name, v)
				}
			}
		case "header":
			if f.rnd.IntN(3) == 0 {
				if v := f.headerValue(pv.Name, q); v != "" {
					q.header[pv.Name] = v
				}
			}
		}
	}
	q.path = path
	if strings.Contains(op.path, "/events") && f.rnd.IntN(3) == 0 {
		q.header["Accept"] = "application/x-ndjson"
	}
	if op.op.RequestBody != nil && op.op.RequestBody.Value != nil {
		if mt := op.op.RequestBody.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			q.body = f.bodyFor(q, mt.Schema)
		}
	}
	return q
}

// pathValue is a path parameter: an id made earlier (its owner calling)
// or a version of the game.
func (f *specFuzzer) pathValue(tmpl string, p *openapi3.Parameter, q *fuzzReq) string {
	coll := tmpl[:max(strings.Index(tmpl, "/{"), 0)]
	switch {
	case p.Name == "id" && len(f.ids[coll]) > 0:
		id := fuzzPick(f.rnd, f.ids[coll])
		if coll == "/v1/games" {
			q.gameID = id
			q.token = f.owner[id]
			if _, st, err := f.e.store.Load(context.Background(), id); err == nil {
				q.version = st.Version
			}
		}
		return id
	case p.Name == "version":
		if q.version > 0 {
			return strconv.Itoa(1 + f.rnd.IntN(q.version))
		}
		return "1"
	case p.Name == "variant" || strings.Contains(strings.ToLower(p.Name), "variant"):
		return fuzzPick(f.rnd, f.variants).ID
	}
	return f.schemaString(p.Schema)
}

// queryValue is a valid value of a query parameter; false if there is
// none to give (an opaque cursor before any page gave one).
func (f *specFuzzer) queryValue(p *openapi3.Parameter) (string, bool) {
	switch {
	case p.Name == "cursor":
		if len(f.cursors) == 0 {
			return "", false
		}
		return fuzzPick(f.rnd, f.cursors), true
	case p.Name == "variant":
		return fuzzPick(f.rnd, f.variants).ID, true
	}
	if p.Schema == nil || p.Schema.Value == nil {
		return "x", true
	}
	return f.scalar(p.Schema.Value), true
}

// scalar is a valid value of a scalar schema, as text.
func (f *specFuzzer) scalar(s *openapi3.Schema) string {
	if len(s.Enum) > 0 {
		return fmt.Sprint(fuzzPick(f.rnd, s.Enum))
	}
	switch {
	case s.Type.Is("integer"), s.Type.Is("number"):
		lo, hi := 0.0, 100.0
		if s.Min != nil {
			lo = *s.Min
		}
		if s.Max != nil {
			hi = min(*s.Max, lo+1000)
		}
		return strconv.Itoa(int(lo) + f.rnd.IntN(int(hi-lo)+1))
	case s.Type.Is("boolean"):
		return strconv.FormatBool(f.rnd.IntN(2) == 0)
	}
	return f.schemaString(&openapi3.SchemaRef{Value: s})
}

func (f *specFuzzer) schemaString(s *openapi3.SchemaRef) string {
	if s != nil && s.Value != nil {
		if len(s.Value.Enum) > 0 {
			return fmt.Sprint(fuzzPick(f.rnd, s.Value.Enum))
		}
		if s.Value.Example != nil && f.rnd.IntN(2) == 0 {
			return fmt.Sprint(s.Value.Example)
		}
	}
	return fuzzPick(f.rnd, []string{"a", "abc", "0123456789abcdef0123456789abcdef", "klondike"})
}

func (f *specFuzzer) headerValue(name string, q *fuzzReq) string {
	switch name {
	case "If-Match":
		if q.version > 0 {
			return quoted(q.version)
		}
		return "*"
	case "If-None-Match":
		if q.version > 0 && f.rnd.IntN(2) == 0 {
			return quoted(q.version)
		}
		return `"1"`
	case api.IdempotencyKeyHeader:
		return fmt.Sprintf("key-%d", f.rnd.Uint64())
	case "Last-Event-ID":
		return strconv.Itoa(f.rnd.IntN(max(q.version, 1) + 1))
	}
	return ""
}

// bodyFor is a valid body for the schema: a legal move for a move of the
// owner, a well-formed game, a name, else values from the schema.
func (f *specFuzzer) bodyFor(q *fuzzReq, s *openapi3.SchemaRef) []byte {
	props := map[string]bool{}
	if s.Value != nil {
		for name := range s.Value.Properties {
			props[name] = true
		}
	}
	switch {
	case props["type"] && props["from"] && props["to"]: // MoveRequest
		if q.gameID != "" {
			if _, st, err := f.e.store.Load(context.Background(), q.gameID); err == nil && !st.Status.Ended() {
				var legal []domain.Move
				for _, m := range domain.LegalMoves(st) {
					if m.Type != domain.MoveResign || f.rnd.IntN(30) == 0 {
						legal = append(legal, m)
					}
				}
				if len(legal) > 0 {
					q.legal = q.header["If-Match"] == "" || q.header["If-Match"] == quoted(q.version) || q.header["If-Match"] == "*"
					b, _ := json.Marshal(fromDomain(fuzzPick(f.rnd, legal)))
					return b
				}
			}
		}
	case props["variant"] && props["layout"] && props["budget_ms"]: // SolveRequest: a short search of a well-formed deal
		v := fuzzPick(f.rnd, f.variants)
		b, _ := json.Marshal(map[string]any{"variant": v.ID, "layout": f.layout(v), "budget_ms": 1 + f.rnd.IntN(100)})
		return b
	case props["variant"] && props["layout"]: // CreateGameRequest
		v := fuzzPick(f.rnd, f.variants)
		body := map[string]any{"variant": v.ID}
		switch f.rnd.IntN(4) {
		case 0:
			body["seed"] = strconv.FormatUint(f.rnd.Uint64(), 10) // a decimal string: any seed
		case 1:
			body["layout"] = f.layout(v)
		case 2:
			body["options"] = f.object(s.Value.Properties["options"], 0)
			b, _ := json.Marshal(body)
			return b
		case 3:
			if f.rnd.IntN(2) == 0 {
				body["winnable"] = true // a proven deal (R7.2): 201, or 503 deal_not_ready
				b, _ := json.Marshal(body)
				return b
			}
		}
		q.created = true
		b, _ := json.Marshal(body)
		return b
	case props["name"] && len(props) == 1: // NewPlayer
		b, _ := json.Marshal(map[string]string{"name": fuzzPick(f.rnd, []string{"Ada", "Zoë", "李雷", "O'Brien", "  x  ", "🂡 player"})})
		return b
	}
	b, _ := json.Marshal(f.object(s, 0))
	return b
}

// layout is a well-formed deal of the variant: its piles, one face-up
// card each over some face-down ones, the rest in the stock.
func (f *specFuzzer) layout(v api.Variant) api.Layout {
	pack := domain.ShuffledPack(f.rnd.Uint64(), v.Decks)
	l := api.Layout{Tableau: make([]api.LayoutPile, v.Piles), Stock: []string{}}
	next := 0
	for i := range l.Tableau {
		down := f.rnd.IntN(i + 1)
		l.Tableau[i] = api.LayoutPile{FaceDown: []string{}, FaceUp: []string{}}
		for j := 0; j < down && next < len(pack)-1; j++ {
			l.Tableau[i].FaceDown = append(l.Tableau[i].FaceDown, pack[next].String())
			next++
		}
		l.Tableau[i].FaceUp = append(l.Tableau[i].FaceUp, pack[next].String())
		next++
	}
	for ; next < len(pack); next++ {
		l.Stock = append(l.Stock, pack[next].String())
	}
	return l
}

// object is a value of the schema: every required property and some
// optional ones.
func (f *specFuzzer) object(s *openapi3.SchemaRef, depth int) any {
	if s == nil || s.Value == nil || depth > 4 {
		return "x"
	}
	v := s.Value
	if len(v.AllOf) == 1 {
		return f.object(v.AllOf[0], depth)
	}
	switch {
	case v.Type.Is("object") || len(v.Properties) > 0:
		out := map[string]any{}
		req := map[string]bool{}
		for _, r := range v.Required {
			req[r] = true
		}
		for name, p := range v.Properties {
			if req[name] || f.rnd.IntN(3) == 0 {
				out[name] = f.object(p, depth+1)
			}
		}
		return out
	case v.Type.Is("array"):
		n := f.rnd.IntN(3)
		out := make([]any, n)
		for i := range out {
			out[i] = f.object(v.Items, depth+1)
		}
		return out
	case v.Type.Is("integer"), v.Type.Is("number"):
		n, _ := strconv.Atoi(f.scalar(v))
		return n
	case v.Type.Is("boolean"):
		return f.rnd.IntN(2) == 0
	}
	return f.scalar(v)
}

// ---- mutations ----

// fuzzHostile are strings that have broken servers before.
var fuzzHostile = []string{
	"", " ", "\t", "null", "true", "0", "-1", "1e999", "NaN", "[]", "{}",
	"' OR '1'='1", "'; DROP TABLE games; --", `" OR ""="`, "<script>alert(1)</script>", "../../etc/passwd",
	"%00", "%s%s%s%n", "${jndi:ldap://x}", "{{7*7}}", "\\u0000", "\u0000", "\u202eevil", "\u200b", "\ufeff",
	"Zoë", "李雷", "🂡🂢🂣", "\U0010ffff", "ﷺ", strings.Repeat("A", 300), strings.Repeat("ß", 2000),
	"tableau/1", "foundation", "foundation/99", "tableau/-1", "tableau/01", "stock", "waste", "klondike",
}

// fuzzNumbers are JSON numbers that are out of any range, not integers or not
// representable.
var fuzzNumbers = []string{"0", "-1", "-0", "2", "14", "1.5", "1e3", "1e400", "-1e400", "9223372036854775807",
	"9223372036854775808", "18446744073709551615", "18446744073709551616", "-9223372036854775809",
	"123456789012345678901234567890", "0.0000001", "4.9e-324"}

// fuzzGarbage are whole bodies that are not a JSON object of the schema.
var fuzzGarbage = []string{"", " ", "null", "[]", "[{}]", `"draw"`, "1", "true", "{", "}", `{"type":}`, `{"type":"draw"`,
	`{"type":"draw"}}`, `{"type":"draw"} {}`, `{'type':'draw'}`, `{"type":"draw",}`, "\xff\xfe", `{"type":"\xff"}`,
	`{"type":"draw","type":"resign"}`, `{"__proto__":{"x":1}}`, "\x00", strings.Repeat("[", 5000) + strings.Repeat("]", 5000),
	`{"a":` + strings.Repeat(`{"a":`, 3000) + "1" + strings.Repeat("}", 3001),
	`{"tableau":[` + strings.Repeat(`{"face_down":[],"face_up":["AS"]},`, 1200) + `{}],"variant":"klondike"}`}

func (f *specFuzzer) mutate(q *fuzzReq) {
	q.valid, q.legal, q.created = false, false, false
	for n := 1 + f.rnd.IntN(2); n > 0; n-- {
		switch k := f.rnd.IntN(10); {
		case k < 4 && q.body != nil:
			q.body = f.mutateBody(q.body)
		case k < 5:
			f.mutateAuth(q)
		case k < 6:
			f.mutatePath(q)
		case k < 7:
			f.mutateQuery(q)
		default:
			f.mutateHeaders(q)
		}
	}
}

func (f *specFuzzer) mutateBody(body []byte) []byte {
	var v any
	_ = json.Unmarshal(body, &v)
	obj, isObj := v.(map[string]any)
	switch k := f.rnd.IntN(9); {
	case k == 0 || !isObj:
		return []byte(fuzzPick(f.rnd, fuzzGarbage))
	case k == 1 && len(obj) > 0: // drop a field
		delete(obj, fuzzPick(f.rnd, fuzzKeys(obj)))
	case k == 2: // unknown field
		obj[fuzzPick(f.rnd, []string{"cards", "owner", "version", "Type", "id", "seed_secret", ""})] = fuzzPick(f.rnd, fuzzHostile)
	case k == 3 && len(obj) > 0: // a hostile string anywhere
		setRandom(f.rnd, obj, fuzzPick(f.rnd, fuzzHostile))
	case k == 4 && len(obj) > 0: // a number out of range
		setRandom(f.rnd, obj, json.RawMessage(fuzzPick(f.rnd, fuzzNumbers)))
	case k == 5 && len(obj) > 0: // a wrong type
		setRandom(f.rnd, obj, fuzzPick(f.rnd, []any{nil, true, 3, []any{}, map[string]any{}, []any{"AS", 1}}))
	case k == 6: // bytes flipped, cut or doubled
		b := append([]byte(nil), body...)
		if len(b) == 0 {
			return []byte("{")
		}
		i := f.rnd.IntN(len(b))
		switch f.rnd.IntN(3) {
		case 0:
			b[i] = byte(f.rnd.IntN(256))
		case 1:
			b = b[:i]
		default:
			b = append(b[:i], append([]byte(fuzzPick(f.rnd, []string{"\"", "{", "]", ",", "\\", "\x00"})), b[i:]...)...)
		}
		return b
	case k == 7: // null for the whole required set
		for name := range obj {
			obj[name] = nil
		}
	default: // a long array of hostile values in some field
		arr := make([]any, 50+f.rnd.IntN(500))
		for i := range arr {
			arr[i] = fuzzPick(f.rnd, fuzzHostile)
		}
		setRandom(f.rnd, obj, arr)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return []byte(fuzzPick(f.rnd, fuzzGarbage))
	}
	return b
}

// setRandom sets a random field, at any depth, of obj to v.
func setRandom(r *rand.Rand, obj map[string]any, v any) {
	if len(obj) == 0 {
		obj["x"] = v
		return
	}
	k := fuzzPick(r, fuzzKeys(obj))
	if inner, ok := obj[k].(map[string]any); ok && r.IntN(2) == 0 {
		setRandom(r, inner, v)
		return
	}
	if arr, ok := obj[k].([]any); ok && len(arr) > 0 && r.IntN(2) == 0 {
		if inner, ok := arr[r.IntN(len(arr))].(map[string]any); ok {
			setRandom(r, inner, v)
			return
		}
		arr[r.IntN(len(arr))] = v
		return
	}
	obj[k] = v
}

func fuzzKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (f *specFuzzer) mutateAuth(q *fuzzReq) {
	other := (max(q.token, 0) + 1) % len(f.tokens)
	switch f.rnd.IntN(8) {
	case 0:
		q.token = -1 // none
	case 1:
		q.token = other // another player: a foreign game
	default:
		q.token = -2
		q.header["Authorization"] = fuzzPick(f.rnd, []string{
			"Bearer", "Bearer ", "Bearer x", "bearer " + f.tokens[0] + "x", "Basic " + f.tokens[0],
			"Bearer " + strings.Repeat("A", 4000), "Bearer " + f.tokens[0] + " " + f.tokens[1],
			"Bearer ' OR 1=1 --", "Token " + f.tokens[0], f.tokens[0], "Bearer %00", "Bearer Zoë",
		})
	}
}

func (f *specFuzzer) mutatePath(q *fuzzReq) {
	segs := strings.Split(q.path, "/")
	if len(segs) < 3 {
		q.path += fuzzPick(f.rnd, []string{"/", "/x", "%20", "/.."})
		return
	}
	i := 2 + f.rnd.IntN(len(segs)-2)
	segs[i] = fuzzPick(f.rnd, []string{"", "..", ".", "%2e%2e", "%2F", "%00", "%ff", "0", "-1", "00000000000000000000000000000000",
		"99999999999999999999999", url.PathEscape(strings.Repeat("a", 100)), url.PathEscape(fuzzPick(f.rnd, fuzzHostile)),
		"1.5", "1e3", "%20", ";x=1", "1;", "null"})
	q.path = strings.Join(segs, "/")
}

func (f *specFuzzer) mutateQuery(q *fuzzReq) {
	names := []string{"limit", "after", "cursor", "status", "variant", "x", ""}
	for _, p := range q.op.op.Parameters {
		if p.Value.In == "query" {
			names = append(names, p.Value.Name, p.Value.Name)
		}
	}
	name := fuzzPick(f.rnd, names)
	switch f.rnd.IntN(4) {
	case 0:
		q.query.Set(name, fuzzPick(f.rnd, fuzzNumbers))
	case 1:
		q.query.Set(name, fuzzPick(f.rnd, fuzzHostile))
	case 2:
		q.query.Add(name, "1")
		q.query.Add(name, "2")
	default:
		q.rawQ = fuzzPick(f.rnd, []string{"%zz", "limit", "&&&", "limit=%00", "=1", "cursor=%ff%fe", "after=%00",
			// made-up cursors: base64url JSON as the store makes them, with
			// a NUL, a broken byte, an absurd time in place of the real ones
			"cursor=eyJ0IjoxLCJpIjoiXHUwMDAwIn0", "cursor=eyJ0IjoxLCJpIjoi_yJ9", "cursor=eyJ0IjotMSwiaSI6IngifQ",
			"cursor=eyJ0Ijo5OTk5OTk5OTk5OTk5OTk5OTk5OSwiaSI6IngifQ", "cursor=e30"})
	}
}

func (f *specFuzzer) mutateHeaders(q *fuzzReq) {
	h := fuzzPick(f.rnd, []string{"If-Match", "If-None-Match", api.IdempotencyKeyHeader, "Accept", "Content-Type",
		api.RequestIDHeader, "Last-Event-ID"})
	q.header[h] = fuzzPick(f.rnd, []string{`"1"`, `"0"`, `"-1"`, `W/"1"`, `"99999999999999999999"`, "*", "1", `"`, `""`,
		`"1", "2"`, "text/plain", "application/json; charset=utf-8", "application/json; x", "application/x-ndjson",
		"*/*", "text/event-stream", "key-reused", strings.Repeat("k", 256), "zoë", "../x", "-1", "abc",
		"k\xff", "\xc3\x28", "\u00e9"})
}

// wrongMethodOf sends q with a method its path does not take.
func (f *specFuzzer) wrongMethodOf(q *fuzzReq) {
	item := f.router.Paths.Value(q.op.path)
	for {
		m := fuzzPick(f.rnd, []string{"PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "POST", "GET", "PROPFIND"})
		if item.GetOperation(m) == nil {
			q.method = m
			break
		}
	}
	q.valid, q.legal, q.created = false, false, false
}

// ---- sending and checking ----

func (f *specFuzzer) send(q *fuzzReq) {
	t, e := f.t, f.e
	path := q.path
	if enc := q.query.Encode(); enc != "" || q.rawQ != "" {
		path += "?" + enc
		if q.rawQ != "" {
			if enc != "" {
				path += "&"
			}
			path += q.rawQ
		}
	}
	c := rawReq{method: q.method, path: path, body: q.body, header: q.header, invalid: true}
	switch q.token {
	case -1:
		c.token = "-"
	case -2:
	default:
		c.token = f.tokens[q.token]
	}
	if q.op.stream && q.method == "GET" {
		c.timeout = 300 * time.Millisecond
	}
	f.specValid += b2i(f.validBySpec(c))
	before := f.counter.counts(t)
	var wasInProgress bool
	if q.gameID != "" {
		if g, err := e.store.Game(context.Background(), q.gameID); err == nil {
			wasInProgress = g.Status == domain.StatusInProgress
		}
	}
	var r resp
	var err error
	if q.method == "HEAD" {
		r, err = f.head(c) // no body: the validating transport cannot read a problem
	} else {
		r, err = e.sendRaw(c)
	}
	f.sent++
	if err != nil {
		if q.op.stream && errors.Is(err, context.DeadlineExceeded) {
			f.streams++
			return // a stream stays open until its client leaves
		}
		var ue *url.Error
		if errors.As(err, &ue) && strings.Contains(err.Error(), "invalid") {
			return // the client refused to send it (bad URL or header)
		}
		t.Errorf("%s %s: %v", c.method, c.path, err)
		return
	}
	f.byStatus[r.status]++
	where := fmt.Sprintf("%s %s -> %d", c.method, c.path, r.status)
	if r.status >= 500 && !dealNotReady(r) {
		f.fiveXX++
		t.Errorf("%s: %s", where, truncate(r.body))
	}
	changed := sameCounts(before, f.counter.counts(t))
	switch {
	case changed != "" && r.status >= 300:
		f.rejectedChanged++
		t.Errorf("%s: a rejected request changed the database: %s", where, changed)
	case changed != "" && (q.method == "GET" || q.method == "HEAD"):
		f.readChanged++
		t.Errorf("%s: a read changed the database: %s", where, changed)
	}
	if q.legal && r.status != http.StatusOK {
		f.legalRefused++
		t.Errorf("%s: a legal move of the owner was refused: %s %s", where, c.body, truncate(r.body))
	}
	if q.created && r.status != http.StatusCreated && !dealNotReady(r) {
		f.legalRefused++
		t.Errorf("%s: a well-formed game was refused: %s %s", where, truncate(c.body), truncate(r.body))
	}
	if q.gameID != "" && q.token >= 0 && q.token != f.owner[q.gameID] && r.status < 400 &&
		(wasInProgress || q.method != "GET") && strings.HasPrefix(c.path, "/v1/games/"+q.gameID) {
		f.foreign++
		t.Errorf("%s: another player's game answered", where)
	}
	if r.status == http.StatusBadRequest && f.validBySpec(c) && q.valid {
		f.valid400++
		t.Errorf("%s: valid by the spec, refused as malformed: %s", where, truncate(r.body))
	}
	f.harvest(q, r)
}

// dealNotReady reports whether r is the answer to a request for a proven
// winnable deal (R7.2) when none was ready within the supply's short wait:
// 503 deal_not_ready with Retry-After, a documented "come back later",
// not a server error. Anything slower would have hit the client's timeout.
func dealNotReady(r resp) bool {
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		return false
	}
	var p api.Problem
	return json.Unmarshal(r.body, &p) == nil && p.Code == api.CodeDealNotReady
}

// head sends a HEAD request outside the validating transport, which wants
// a problem document in every error's body, and checks what a HEAD answer
// can show: the status and headers of one.
func (f *specFuzzer) head(c rawReq) (resp, error) {
	hr, err := newRequest(context.Background(), "HEAD", f.e.srv.URL+c.path, nil, c.token, c.header)
	if err != nil {
		return resp{}, err
	}
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		return resp{}, err
	}
	res.Body.Close()
	if (res.StatusCode != http.StatusMethodNotAllowed && res.StatusCode != http.StatusNotFound) ||
		res.Header.Get("Content-Type") != "application/problem+json" || res.Header.Get(api.RequestIDHeader) == "" {
		f.t.Errorf("HEAD %s -> %d %s: want 404 or 405 as a problem", c.path, res.StatusCode, res.Header.Get("Content-Type"))
	}
	return resp{status: res.StatusCode, header: res.Header}, nil
}

// harvest keeps the ids and cursors of successful answers.
func (f *specFuzzer) harvest(q *fuzzReq, r resp) {
	if r.status == http.StatusCreated {
		if loc := r.header.Get("Location"); loc != "" {
			i := strings.LastIndex(loc, "/")
			f.addID(loc[:i], loc[i+1:], max(q.token, 0))
		}
	}
	if r.status == http.StatusOK && bytes.Contains(r.body, []byte(`"next_cursor"`)) {
		var l struct {
			NextCursor *string `json:"next_cursor"`
		}
		if json.Unmarshal(r.body, &l) == nil && l.NextCursor != nil {
			f.cursors = append(f.cursors, *l.NextCursor)
		}
	}
}

// validBySpec reports whether the spec accepts the request (kin-openapi's
// request validation).
func (f *specFuzzer) validBySpec(c rawReq) bool {
	hr, err := http.NewRequest(c.method, f.e.srv.URL+c.path, bytes.NewReader(c.body))
	if err != nil {
		return false
	}
	if c.body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		hr.Header.Set(k, v)
	}
	route, params, err := strictSpec(f.t).FindRoute(hr)
	if err != nil || expand(route.Path, params) != hr.URL.Path {
		return false
	}
	// Only whether the request is valid counts here: without the schema
	// errors' details, which on a huge mutated body are megabytes of
	// message per oneOf branch and are most of its time.
	in := &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
			SchemaValidationOptions: []openapi3.SchemaValidationOption{openapi3.DisableSchemaErrorDetails()}}}
	return openapi3filter.ValidateRequest(context.Background(), in) == nil
}

// verifyGames checks every game's chain and that its log replays.
func (f *specFuzzer) verifyGames() {
	ctx := context.Background()
	for id := range f.owner {
		if bad, err := f.e.store.VerifyChain(ctx, id); err != nil || bad != 0 {
			f.t.Errorf("game %s: chain broken at %d (%v)", id, bad, err)
		}
		if _, _, err := f.e.store.Load(ctx, id); err != nil {
			f.t.Errorf("game %s does not load: %v", id, err)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
