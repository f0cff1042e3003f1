package main

import (
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
)

// nullableEnums is fix 8: a nullable schema with an enum lists null among
// its values. OpenAPI 3.0.3 says nullable adds null to the types a schema
// allows, but an enum still allows only the values it lists, so a strict
// validator refuses null where enum lacks it (swag writes the enum of the
// Go field's non-null values).
func nullableEnums(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(ref *openapi3.SchemaRef)
	walk = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if s.Nullable && len(s.Enum) > 0 && !slices.Contains(s.Enum, nil) {
			s.Enum = append(s.Enum, nil)
		}
		for _, name := range sortedKeys(s.Properties) {
			walk(s.Properties[name])
		}
		walk(s.Items)
		if s.AdditionalProperties.Schema != nil {
			walk(s.AdditionalProperties.Schema)
		}
		for _, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, r := range list {
				walk(r)
			}
		}
		walk(s.Not)
	}
	for _, name := range componentNames(doc) {
		walk(doc.Components.Schemas[name])
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		for _, op := range doc.Paths.Value(path).Operations() {
			for _, p := range op.Parameters {
				if p.Value != nil {
					walk(p.Value.Schema)
				}
			}
		}
	}
}

// nullableRefs is fix 11: a nullable property that only references a
// schema (swag writes `allOf: [$ref]` beside `nullable: true`) gets the
// type object: OpenAPI 3.0 defines nullable only beside a type, and
// validators (Redocly's nullable-type-sibling) refuse it alone.
func nullableRefs(doc *openapi3.T) {
	for _, s := range doc.Components.Schemas {
		if s.Value == nil {
			continue
		}
		for _, p := range s.Value.Properties {
			v := p.Value
			if p.Ref == "" && v != nil && v.Nullable && v.Type == nil && len(v.AllOf) > 0 {
				v.Type = &openapi3.Types{openapi3.TypeObject}
			}
		}
	}
}
