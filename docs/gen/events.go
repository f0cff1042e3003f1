package main

import (
	"fmt"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// The table of event types swag describes from api.EventTypes, through an
// operation that exists for that alone (api/eventtypes.go).
const (
	eventTypesPath = "/x-schemas/event-types"
	eventTypesTag  = "x-schemas"
	schemaPrefix   = "#/components/schemas/"
)

// typedEvents is fix 7: Event becomes a oneOf of one schema per event type,
// with a discriminator on type, so that generated clients narrow an event
// by its type (Swagger 2.0 has neither oneOf nor discriminator mappings).
//
// Each property of the EventTypes table names a type and refers to its
// payload, <Name>Data; the schema of that type, <Name>Event, is swag's
// Event with type the one value and data the payload. The table's
// operation, EventTypes and the untyped payload Event had are removed. The
// order is the table's names, sorted.
func typedEvents(doc *openapi3.T) error {
	item := doc.Paths.Value(eventTypesPath)
	if item == nil || item.Get == nil || len(item.Get.Tags) != 1 || item.Get.Tags[0] != eventTypesTag {
		return fmt.Errorf("typed events: no operation GET %s tagged %s", eventTypesPath, eventTypesTag)
	}
	resp := item.Get.Responses.Status(200)
	if resp == nil || resp.Value == nil || resp.Value.Content[mimeJSON] == nil {
		return fmt.Errorf("typed events: GET %s has no JSON 200", eventTypesPath)
	}
	tableRef := resp.Value.Content[mimeJSON].Schema.Ref
	doc.Paths.Delete(eventTypesPath)
	tableName := strings.TrimPrefix(tableRef, schemaPrefix)
	table := doc.Components.Schemas[tableName]
	base := doc.Components.Schemas["Event"]
	if table == nil || table.Value == nil || base == nil || base.Value == nil {
		return fmt.Errorf("typed events: no %s or Event component", tableName)
	}
	delete(doc.Components.Schemas, tableName)
	untyped := base.Value.Properties["data"]
	if untyped == nil || base.Value.Properties["type"] == nil {
		return fmt.Errorf("typed events: Event has no type or data")
	}

	desc := base.Value.Description
	if desc == "" {
		desc = "An entry of a game's log, one schema per event type: type says which, and data is that type's payload."
	}
	event := &openapi3.Schema{Description: desc,
		Discriminator: &openapi3.Discriminator{PropertyName: "type", Mapping: map[string]openapi3.MappingRef{}}}
	for _, typ := range sortedKeys(table.Value.Properties) {
		payload := table.Value.Properties[typ]
		data, ok := strings.CutPrefix(payload.Ref, schemaPrefix)
		name, named := strings.CutSuffix(data, "Data")
		if !ok || !named {
			return fmt.Errorf("typed events: %s's payload %q is not a component <Name>Data", typ, payload.Ref)
		}
		name += "Event"
		s := *base.Value
		s.Description = fmt.Sprintf("An event of type %s: its data is %s.", typ, data)
		s.Properties = openapi3.Schemas{}
		for k, p := range base.Value.Properties {
			s.Properties[k] = p
		}
		kind := openapi3.NewStringSchema().WithEnum(typ)
		kind.Description = base.Value.Properties["type"].Value.Description
		s.Properties["type"] = openapi3.NewSchemaRef("", kind)
		s.Properties["data"] = openapi3.NewSchemaRef(payload.Ref, payload.Value)
		doc.Components.Schemas[name] = openapi3.NewSchemaRef("", &s)
		ref := schemaPrefix + name
		event.OneOf = append(event.OneOf, openapi3.NewSchemaRef(ref, &s))
		event.Discriminator.Mapping[typ] = openapi3.MappingRef{Ref: ref, Value: &s}
	}
	base.Value = event
	if untyped.Ref != "" {
		delete(doc.Components.Schemas, strings.TrimPrefix(untyped.Ref, schemaPrefix))
	}
	return nil
}
