package main

import "github.com/getkin/kin-openapi/openapi3"

// nullableRefs gives every nullable property that only references a
// schema (swag writes `allOf: [$ref]` beside `nullable: true`) the type
// object: OpenAPI 3.0 defines nullable only beside a type, and validators
// (Redocly's nullable-type-sibling) refuse it alone.
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
