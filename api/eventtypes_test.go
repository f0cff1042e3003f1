package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
	"github.com/openpatience/solitaire/domain"
	"github.com/openpatience/solitaire/domain/supply"
)

// TestEventSchemaIsTyped: openapi.yaml's Event is a oneOf with a
// discriminator on type mapping each type of the table api.EventTypes to
// its own schema, whose type is that one value and whose data is that
// type's payload; so a generated client narrows on type.
func TestEventSchemaIsTyped(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(solitaire.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	ev := doc.Components.Schemas["Event"].Value
	if ev.Discriminator == nil || ev.Discriminator.PropertyName != "type" {
		t.Fatalf("Event has no discriminator on type: %+v", ev)
	}
	table := reflect.TypeFor[api.EventTypes]()
	if len(ev.OneOf) != table.NumField() || len(ev.Discriminator.Mapping) != table.NumField() {
		t.Errorf("Event: %d oneOf, %d mapped, %d types in api.EventTypes", len(ev.OneOf), len(ev.Discriminator.Mapping), table.NumField())
	}
	for i := range table.NumField() {
		f := table.Field(i)
		typ, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		ref := ev.Discriminator.Mapping[typ].Ref
		if !slices.ContainsFunc(ev.OneOf, func(s *openapi3.SchemaRef) bool { return s.Ref == ref }) {
			t.Errorf("%s maps to %q, which is not one of Event's oneOf", typ, ref)
			continue
		}
		s := doc.Components.Schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
		if s == nil {
			t.Errorf("%s maps to %q, not a component", typ, ref)
			continue
		}
		if enum := s.Value.Properties["type"].Value.Enum; len(enum) != 1 || enum[0] != typ {
			t.Errorf("%s: the type of %s is %v", typ, ref, enum)
		}
		if data := s.Value.Properties["data"].Ref; data != "#/components/schemas/"+f.Type.Name() {
			t.Errorf("%s: data is %q, want the component %s", typ, data, f.Type.Name())
		}
	}
	if doc.Paths.Value("/x-schemas/event-types") != nil || doc.Components.Schemas["EventTypes"] != nil ||
		doc.Components.Schemas["EventData"] != nil {
		t.Errorf("the generator's table or the untyped payload is left in the spec")
	}
}

// TestEventsMatchTheirType: every event of real games (undo, a flip, a
// win, a resignation) matches the schema of its own type, strictly, and
// fails the schema once its type is changed to one whose payload differs:
// the type really tells the payload.
func TestEventsMatchTheirType(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *env) {
		g := e.createGame(map[string]any{"variant": "klondike", "seed": "42", "options": map[string]any{"undo": true, "flip": "player"}})
		e.playQuietly(g.ID, 12, time.Second)
		e.play(g.ID, undo())
		e.play(g.ID, resign())
		won := e.createGame(api.CreateGameRequest{Variant: "klondike", Layout: runs()})
		e.play(won.ID, api.MoveRequest{Type: "autocomplete"})
		seen := map[string]bool{}
		for _, id := range []string{g.ID, won.ID} {
			var page struct {
				Events []json.RawMessage `json:"events"`
			}
			e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id + "/events?limit=500"}).decode(t, &page)
			for _, raw := range page.Events {
				ev := checkEventJSON(t, raw)
				seen[ev.Type] = true
				var v map[string]any
				if err := json.Unmarshal(raw, &v); err != nil {
					t.Fatal(err)
				}
				other := map[string]string{"game_dealt": "card_flipped", "stock_drawn": "card_flipped",
					"cards_moved": "move_undone", "card_flipped": "cards_moved", "move_undone": "stock_drawn",
					"game_won": "game_expired", "game_resigned": "game_expired"}[ev.Type]
				if other == "" {
					continue
				}
				v["type"] = other
				if err := eventSchema.VisitJSON(v); err == nil {
					t.Errorf("a %s event passes as %s: %s", ev.Type, other, raw)
				}
			}
		}
		for _, typ := range []string{"game_dealt", "stock_drawn", "cards_moved", "card_flipped", "move_undone", "game_won", "game_resigned"} {
			if !seen[typ] {
				t.Errorf("no %s event among %v", typ, seen)
			}
		}
	})
}

// payload is one event's data as the server stores or sends it.
type payload struct {
	typ  string
	data json.RawMessage
}

// TestEventPayloadsAreTheirTypes: an event's data is the JSON of
// domain.EventData, its one definition; the spec describes it per type
// from api.EventTypes, which must say the same. So: the table has a field
// for each domain event type and no other; every field of
// domain.EventData is a key of some type's payload; and every payload of
// real games (the stored bytes, and the redacted deal as sent while in
// progress) decodes strictly (no unknown key, at any depth) into its
// type's payload struct and encodes back to the same bytes, while every
// key a payload struct declares, at any depth, occurs in some payload of
// its type (a key of api.EventMeta, in some payload).
func TestEventPayloadsAreTheirTypes(t *testing.T) {
	t.Parallel()
	table := reflect.TypeFor[api.EventTypes]()
	types := map[string]reflect.Type{}
	for i := range table.NumField() {
		types[jsonKey(table.Field(i))] = table.Field(i).Type
	}
	var domainTypes []string
	for _, typ := range domain.EventTypes() {
		domainTypes = append(domainTypes, string(typ))
	}
	if got := slices.Sorted(maps.Keys(types)); !slices.Equal(got, slices.Sorted(slices.Values(domainTypes))) {
		t.Errorf("api.EventTypes has %v, domain has %v", got, domainTypes)
	}

	declared := map[string]bool{}
	for _, pt := range types {
		for _, k := range keyPaths(pt, "") {
			if !strings.Contains(k, ".") && !strings.Contains(k, "[]") {
				declared[k] = true
			}
		}
	}
	for _, k := range keyPaths(reflect.TypeFor[domain.EventData](), "") {
		if !strings.Contains(k, ".") && !strings.Contains(k, "[]") && !declared[k] {
			t.Errorf("domain.EventData's %s is in no payload type of api.EventTypes", k)
		}
	}

	seen := map[string]map[string]bool{}
	for _, p := range payloadSamples(t) {
		pt := types[p.typ]
		if pt == nil {
			t.Errorf("a %s event, a type api.EventTypes lacks", p.typ)
			continue
		}
		v := reflect.New(pt)
		dec := json.NewDecoder(bytes.NewReader(p.data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v.Interface()); err != nil {
			t.Errorf("%s payload is not %s: %v\n%s", p.typ, pt.Name(), err, p.data)
			continue
		}
		again, err := json.Marshal(v.Interface())
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, p.data); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, want.Bytes()) {
			t.Errorf("%s payload through %s\n got %s\nwant %s", p.typ, pt.Name(), again, want.Bytes())
		}
		var tree any
		if err := json.Unmarshal(p.data, &tree); err != nil {
			t.Fatal(err)
		}
		if seen[p.typ] == nil {
			seen[p.typ] = map[string]bool{}
		}
		jsonPaths(tree, "", seen[p.typ])
	}
	// The keys of EventMeta are every type's; each must occur in some
	// payload, of any type.
	meta := keyPaths(reflect.TypeFor[api.EventMeta](), "")
	for _, k := range meta {
		if !slices.ContainsFunc(slices.Collect(maps.Values(seen)), func(s map[string]bool) bool { return s[k] }) {
			t.Errorf("api.EventMeta declares %s, which no payload of the games played has", k)
		}
	}
	for typ, pt := range types {
		for _, k := range keyPaths(pt, "") {
			if !seen[typ][k] && !slices.Contains(meta, k) {
				t.Errorf("%s declares %s, which no %s payload of the games played has", pt.Name(), k, typ)
			}
		}
	}
}

// payloadSamples plays games through the API on SQLite, a script meant to
// bring about every event type and every key of every payload (the caller
// checks that it does), and returns each event's stored payload and each
// deal as sent while in progress (redacted). One more deal is dealt from a position in mid-game, with
// waste, foundations and recycles, as `solitaire solve` deals one
// (domain.DealtEvent, which Apply accepts): the keys only such a deal
// carries, stored and redacted.
func payloadSamples(t *testing.T) []payload {
	e := newEnvWith(t, "sqlite", supply.Config{})
	var out []payload
	var ids []string
	sent := func(id string) {
		var page struct {
			Events []struct {
				Type string          `json:"type"`
				Data json.RawMessage `json:"data"`
			} `json:"events"`
		}
		e.must(http.StatusOK, req{method: "GET", path: "/v1/games/" + id + "/events?limit=1"}).decode(t, &page)
		if len(page.Events) != 1 || !strings.Contains(string(page.Events[0].Data), `"hidden"`) {
			t.Fatalf("the deal of %s as sent in progress: %+v", id, page.Events)
		}
		out = append(out, payload{page.Events[0].Type, page.Events[0].Data})
	}

	// Relaxed Klondike with undo and player flips: draws through the
	// stock and recycles it, moves to the foundations, from the waste and
	// off face-down cards, flips; the first move and the first flip are
	// undone and redone. Before the first move of each kind, the hint of
	// such a move (domain.HintEvent); then a hint asked for, and the
	// player resigns.
	g := e.createGame(map[string]any{"variant": "relaxed", "seed": "42", "options": map[string]any{"undo": true, "flip": "player"}})
	ids = append(ids, g.ID)
	sent(g.ID)
	undone, hinted := map[string]bool{}, map[string]bool{}
	recycled := false
	for step := 0; step < 400 && !(recycled && undone["cards_moved"] && undone["card_flipped"]); step++ {
		now := e.getGame(g.ID)
		// rank orders the moves that cannot undo one another: 0 for one
		// between tableau piles that uncovers no face-down card.
		rank := func(m api.MoveRequest) int {
			if m.Type == "move" && !strings.HasPrefix(*m.To, "foundation") && *m.From != "waste" {
				var i int
				if _, err := fmt.Sscanf(*m.From, "tableau/%d", &i); err != nil || now.Tableau[i].FaceDown == 0 ||
					m.Count == nil || *m.Count != len(now.Tableau[i].Cards) {
					return 0
				}
			}
			return map[string]int{"flip": 3, "move": 2, "draw": 1}[m.Type]
		}
		var pick *api.MoveRequest
		moves := e.legal(g.ID).Moves
		for i, m := range moves {
			if rank(m) > 0 && (pick == nil || rank(m) > rank(*pick)) {
				pick = &moves[i]
			}
		}
		if pick == nil {
			break
		}
		if !hinted[pick.Type] {
			hinted[pick.Type] = true
			st := e.load(g.ID)
			legal := domain.LegalMoves(st)
			i := slices.IndexFunc(legal, func(m domain.Move) bool { return string(m.Type) == pick.Type })
			if i < 0 {
				t.Fatalf("game %s: no legal %s among %v", g.ID, pick.Type, legal)
			}
			h, _ := domain.HintEvent(st, domain.Hint{Verdict: domain.VerdictWinnable, Move: &legal[i]}, e.clock.Now())
			b, err := domain.EncodePayload(h)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, payload{string(h.Type), b})
		}
		r := e.play(g.ID, *pick)
		typ := r.Events[0].Type
		recycled = recycled || typ == "stock_recycled"
		if (typ == "cards_moved" || typ == "card_flipped") && !undone[typ] {
			undone[typ] = true
			e.play(g.ID, undo())
			e.play(g.ID, api.MoveRequest{Type: "redo"})
		}
	}
	if !recycled || !undone["cards_moved"] || !undone["card_flipped"] {
		t.Fatalf("game %s: recycled %v, undone %v", g.ID, recycled, undone)
	}
	if len(e.getGame(g.ID).Waste.Cards) == 0 {
		e.play(g.ID, draw())
	}
	st := e.load(g.ID)
	mid := domain.DealtEvent(st.Rules, st.Position(), "sha256:00", start)
	if _, err := domain.DealtState(mid); err != nil {
		t.Fatalf("the position of %s as a deal: %v", g.ID, err)
	}
	for _, ev := range []domain.Event{mid, domain.RedactEvent(mid)} {
		b, err := domain.EncodePayload(ev)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, payload{string(ev.Type), b})
	}
	e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + g.ID + "/hints", body: map[string]any{}})
	e.play(g.ID, resign())

	// A layout won by autocomplete; a game whose clock runs out.
	won := e.createGame(api.CreateGameRequest{Variant: "klondike", Layout: runs()})
	e.play(won.ID, api.MoveRequest{Type: "autocomplete"})
	timed := e.createGame(map[string]any{"variant": "klondike", "options": map[string]any{"time_limit_s": 60}})
	e.clock.Advance(61 * time.Second)
	if expired, _, err := e.games.Sweep(t.Context(), e.clock.Now()); err != nil || expired != 1 {
		t.Fatalf("sweep: %d expired, %v", expired, err)
	}

	// A proven deal (winnable, its commitment and band) and a hint on it.
	rules := rulesOf(t, "relaxed")
	e.waitReady(rules, 1)
	proven := e.createGame(map[string]any{"variant": "relaxed", "winnable": true})
	sent(proven.ID)
	e.must(http.StatusOK, req{method: "POST", path: "/v1/games/" + proven.ID + "/hints", body: map[string]any{}})
	ids = append(ids, won.ID, timed.ID, proven.ID)

	for _, id := range ids {
		recs, err := e.store.Events(t.Context(), id, 0, 10000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			out = append(out, payload{string(r.Type), r.Payload})
		}
	}
	return out
}

// jsonKey is the JSON key of a struct field.
func jsonKey(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// keyPaths are the JSON keys a value of type t can carry, at any depth:
// "a.b" for key b of the object at key a, "a[]" for the items of the
// array at key a. Embedded structs add their keys to the outer object.
func keyPaths(t reflect.Type, prefix string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil
		}
		return keyPaths(t.Elem(), prefix+"[]")
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() || t.Implements(reflect.TypeFor[interface{ MarshalText() ([]byte, error) }]()) {
			return nil
		}
	default:
		return nil
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Tag.Get("json") == "-" {
			continue
		}
		if f.Anonymous && f.Tag.Get("json") == "" {
			out = append(out, keyPaths(f.Type, prefix)...)
			continue
		}
		k := prefix
		if k != "" {
			k += "."
		}
		k += jsonKey(f)
		out = append(out, k)
		out = append(out, keyPaths(f.Type, k)...)
	}
	return out
}

// jsonPaths adds to seen the key paths of a decoded JSON value, as
// keyPaths names them.
func jsonPaths(v any, prefix string, seen map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			seen[p] = true
			jsonPaths(x, p, seen)
		}
	case []any:
		for _, x := range v {
			jsonPaths(x, prefix+"[]", seen)
		}
	}
}
