package api_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	solitaire "github.com/openpatience/solitaire"
)

// badTexts are the strings no database may be handed: PostgreSQL refuses
// both in a text column (SQLSTATE 22021), SQLite keeps them. Each must be
// refused the same way on both, before any write.
var badTexts = map[string]string{"NUL": "x\x00y", "invalid UTF-8": "x\xffy"}

// stringLeaves lists the paths of every string in a JSON schema: object
// properties by name, an array's items as element 0.
func stringLeaves(s *openapi3.Schema, path []string, out *[][]string) {
	if s == nil {
		return
	}
	for _, sub := range s.AllOf {
		stringLeaves(sub.Value, path, out)
	}
	if len(s.OneOf) > 0 { // each alternative's fields, each path once
		var all [][]string
		for _, sub := range s.OneOf {
			stringLeaves(sub.Value, path, &all)
		}
		seen := map[string]bool{}
		for _, l := range all {
			if k := strings.Join(l, "."); !seen[k] {
				seen[k] = true
				*out = append(*out, l)
			}
		}
		return
	}
	switch {
	case s.Type.Is("string"):
		*out = append(*out, path)
	case s.Type.Is("array") && s.Items != nil:
		stringLeaves(s.Items.Value, append(append([]string(nil), path...), "0"), out)
	default:
		names := make([]string, 0, len(s.Properties))
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			stringLeaves(s.Properties[n].Value, append(append([]string(nil), path...), n), out)
		}
	}
}

// withLeaf is a copy of base (a JSON object) with the value at path set
// to v, making the objects and one-element arrays on the way.
func withLeaf(base map[string]any, path []string, v string) map[string]any {
	var set func(node any, path []string) any
	set = func(node any, path []string) any {
		if len(path) == 0 {
			return v
		}
		if _, err := strconv.Atoi(path[0]); err == nil {
			return []any{set(nil, path[1:])}
		}
		m := map[string]any{}
		if old, ok := node.(map[string]any); ok {
			for k, x := range old {
				m[k] = x
			}
		}
		m[path[0]] = set(m[path[0]], path[1:])
		return m
	}
	return set(base, path).(map[string]any)
}

// TestEveryStringField: every string the spec declares in a request, in
// a body (walked from each operation's schema), a path, the query or a
// header, is sent once with a NUL and once with invalid UTF-8, on both
// databases. Each answer is a 4xx problem the spec lists for the
// operation (never a 500) and nothing is written: a NUL in duel_id, say, must not
// reach PostgreSQL, which refuses it with an error (a 500). An operation with a body
// this test has no valid example of fails the test, so new routes are
// covered when they come.
func TestEveryStringField(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(solitaire.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	// A valid body of each operation that takes one; each bad string is
	// put in its place.
	bodies := map[string]map[string]any{
		"createPlayer": {"name": "Ada"},
		"createGame":   {"variant": "klondike"},
		"createDuel":   {"variant": "klondike", "winnable": false},
		"playMove":     {"type": "draw"},
		"getHint":      {},
		"joinDuel":     {},
		"playDaily":    {},
		"solveLayout": {"variant": "relaxed", "budget_ms": 100,
			"layout": map[string]any{"tableau": []any{map[string]any{"face_down": []string{"AS"}, "face_up": []string{"KD"}}},
				"stock": []string{"2C"}}},
	}
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(map[string]any{"variant": "klondike"})
		var duel struct{ ID string }
		e.must(http.StatusCreated, req{method: "POST", path: "/v1/duels", body: map[string]any{"variant": "klondike", "winnable": false}}).decode(t, &duel)
		// Valid values of the path parameters, by operation where a name
		// means different things.
		pathValue := func(op, name string) string {
			switch {
			case name == "id" && strings.Contains(strings.ToLower(op), "duel"):
				return duel.ID
			case name == "id":
				return g.ID
			case name == "variant":
				return "klondike"
			case name == "version":
				return "1"
			case name == "height": // the transparency log's tiles (C2SP tlog-tiles)
				return "8"
			case name == "level":
				return "0"
			case strings.HasPrefix(name, "p"):
				return "000"
			}
			t.Fatalf("%s: no valid value for path parameter %q", op, name)
			return ""
		}
		checked := 0
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				if !strings.HasPrefix(path, "/v1/") {
					continue
				}
				type attempt struct {
					what   string
					target string // path and query
					body   any
					header map[string]string
				}
				var attempts []attempt
				target := func(bad map[string]string) string {
					p := path
					q := url.Values{}
					for _, pr := range op.Parameters {
						prm := pr.Value
						if prm.In == "path" {
							v, ok := bad[prm.Name]
							if !ok {
								v = pathValue(op.OperationID, prm.Name)
							}
							p = strings.ReplaceAll(p, "{"+prm.Name+"}", url.PathEscape(v))
						}
						if prm.In == "query" {
							if v, ok := bad[prm.Name]; ok {
								q.Set(prm.Name, v)
							}
						}
					}
					if len(q) > 0 {
						p += "?" + q.Encode()
					}
					return p
				}
				base := bodies[op.OperationID]
				if op.RequestBody != nil && base == nil {
					t.Errorf("%s %s (%s) takes a body this test has no example of", method, path, op.OperationID)
					continue
				}
				var baseBody any
				if base != nil {
					baseBody = base
				}
				for kind, bad := range badTexts {
					for _, pr := range op.Parameters {
						prm := pr.Value
						if prm.Schema == nil || !prm.Schema.Value.Type.Is("string") {
							continue
						}
						switch prm.In {
						case "path", "query":
							attempts = append(attempts, attempt{what: kind + " in " + prm.In + " " + prm.Name,
								target: target(map[string]string{prm.Name: bad}), body: baseBody})
						case "header":
							if kind == "NUL" {
								continue // no HTTP client can send it (RFC 9110 §5.5)
							}
							attempts = append(attempts, attempt{what: kind + " in header " + prm.Name,
								target: target(nil), body: baseBody, header: map[string]string{prm.Name: bad}})
						}
					}
					if op.RequestBody != nil {
						var leaves [][]string
						stringLeaves(op.RequestBody.Value.Content.Get("application/json").Schema.Value, nil, &leaves)
						if len(leaves) == 0 && len(base) != 0 { // an empty object has no string field
							t.Errorf("%s: no string field found in the body's schema", op.OperationID)
						}
						for _, leaf := range leaves {
							b, _ := json.Marshal(withLeaf(base, leaf, bad)) // invalid UTF-8 is kept as U+FFFD by Marshal
							if kind == "invalid UTF-8" {
								b = []byte(strings.ReplaceAll(string(b), "\ufffd", "\xff"))
							}
							attempts = append(attempts, attempt{what: kind + " in body " + strings.Join(leaf, "."),
								target: target(nil), body: b})
						}
					}
				}
				for _, a := range attempts {
					checked++
					before := tableCounts(t, e.store)
					r := e.do(req{method: method, path: a.target, body: a.body, header: a.header, invalid: true})
					// If-None-Match is only compared with the version, never kept.
					onlyCompared := a.header["If-None-Match"] != ""
					if (r.status < 400 || r.status > 499) && !(onlyCompared && r.status == http.StatusOK) {
						t.Errorf("%s %s: %s: status %d, want 4xx: %s", method, path, a.what, r.status, truncate(r.body))
					}
					if d := sameCounts(before, tableCounts(t, e.store)); d != "" {
						t.Errorf("%s %s: %s: the database changed: %s", method, path, a.what, d)
					}
				}
			}
		}
		if checked < 40 {
			t.Errorf("only %d requests checked; the walk of the spec missed fields", checked)
		}
		t.Logf("%d requests with a bad string, each refused", checked)
	})
}
