package api_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	solitaire "github.com/openpatience/solitaire"
	"github.com/openpatience/solitaire/api"
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
