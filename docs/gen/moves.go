package main

import (
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openpatience/solitaire/api"
)

// pilePattern is a pile name as a move request spells it (README "The API
// in brief"): stock, waste, foundation (whichever takes the card),
// foundation/N or tableau/N.
const pilePattern = `^(stock|waste|foundation(/(0|[1-9][0-9]?))?|tableau/(0|[1-9][0-9]?))$`

// moveSchemas names the schema of each command of MoveRequest; the fields
// each takes are api.MoveFields, the table the server checks requests by.
var moveSchemas = []struct{ typ, name string }{
	{"draw", "DrawRequest"}, {"move", "MoveCardsRequest"}, {"take-back", "TakeBackRequest"},
	{"flip", "FlipRequest"}, {"undo", "UndoRequest"}, {"redo", "RedoRequest"},
	{"autocomplete", "AutocompleteRequest"}, {"resign", "ResignRequest"},
}

// typedMoves is fix 12: MoveRequest becomes a oneOf of one schema per
// command, with a discriminator on type, so that a generated client has
// one type per move with exactly the fields it takes (swag describes the
// Go type, one flat object with every field optional). Pile names get
// their pattern. The server decodes the same JSON either way.
func typedMoves(doc *openapi3.T) error {
	base := doc.Components.Schemas["MoveRequest"]
	if base == nil || base.Value == nil || base.Value.Properties["type"] == nil {
		return fmt.Errorf("typed moves: no MoveRequest component with a type")
	}
	flat := base.Value
	known := map[string]bool{}
	for _, v := range flat.Properties["type"].Value.Enum {
		known[fmt.Sprint(v)] = true
	}
	req := &openapi3.Schema{Description: "One command (RULES R2): type says which, and each type takes only its own fields.",
		Discriminator: &openapi3.Discriminator{PropertyName: "type", Mapping: map[string]openapi3.MappingRef{}}}
	if len(moveSchemas) != len(api.MoveFields) {
		return fmt.Errorf("typed moves: %d schemas for the %d commands of api.MoveFields", len(moveSchemas), len(api.MoveFields))
	}
	for _, m := range moveSchemas {
		fields, ok := api.MoveFields[m.typ]
		if !known[m.typ] || !ok {
			return fmt.Errorf("typed moves: %q is not both a value of MoveRequest's type and a row of api.MoveFields", m.typ)
		}
		delete(known, m.typ)
		kind := openapi3.NewStringSchema().WithEnum(m.typ)
		kind.Description = flat.Properties["type"].Value.Description
		s := &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeObject}, Properties: openapi3.Schemas{"type": openapi3.NewSchemaRef("", kind)},
			Required: append([]string{"type"}, fields[0]...), Description: fmt.Sprintf("The command %s (RULES R2).", m.typ)}
		for _, f := range append(append([]string{}, fields[0]...), fields[1]...) {
			p := flat.Properties[f]
			if p == nil || p.Value == nil {
				return fmt.Errorf("typed moves: MoveRequest has no field %s", f)
			}
			field := *p.Value
			if f != "count" {
				field.Pattern = pilePattern
			}
			s.Properties[f] = openapi3.NewSchemaRef("", &field)
		}
		doc.Components.Schemas[m.name] = openapi3.NewSchemaRef("", s)
		ref := schemaPrefix + m.name
		req.OneOf = append(req.OneOf, openapi3.NewSchemaRef(ref, s))
		req.Discriminator.Mapping[m.typ] = openapi3.MappingRef{Ref: ref, Value: s}
	}
	if len(known) > 0 {
		return fmt.Errorf("typed moves: MoveRequest types without a schema: %v", known)
	}
	base.Value = req
	// A field of type MoveRequest with a description is swag's
	// `allOf: [$ref]`, which generators read as the oneOf's common part
	// (openapi-typescript: the type without its discriminator): refer to
	// it directly.
	ref := schemaPrefix + "MoveRequest"
	for _, c := range doc.Components.Schemas {
		if c.Value == nil {
			continue
		}
		for name, p := range c.Value.Properties {
			if v := p.Value; p.Ref == "" && v != nil && len(v.AllOf) == 1 && v.AllOf[0].Ref == ref && !v.Nullable {
				c.Value.Properties[name] = openapi3.NewSchemaRef(ref, req)
			}
		}
	}
	return nil
}
