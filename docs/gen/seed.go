package main

import (
	"github.com/getkin/kin-openapi/openapi3"
)

// seedExt marks, in swag's output, a property that is a seed (api.Seed):
// "input" on a request's, true on a response's.
const seedExt = "x-seed"

// seedPattern is a seed's decimal string: 1 to 20 digits (2^64 − 1 has 20).
const seedPattern = "^[0-9]{1,20}$"

// maxJSONSafeSeed is api.MaxJSONSafeSeed, 2^53 − 1.
const maxJSONSafeSeed = 1<<53 - 1

// seeds is fix 5: every property marked seedExt gets the pattern of a
// decimal seed (swag drops it with swaggertype), and a request's becomes a
// oneOf of that string and an integer from 0 to 2^53 − 1 (Swagger 2.0 has
// no oneOf). The two never overlap, so exactly one matches a valid seed.
func seeds(doc *openapi3.T) {
	for _, name := range componentNames(doc) {
		s := doc.Components.Schemas[name].Value
		if s == nil {
			continue
		}
		for _, p := range sortedKeys(s.Properties) {
			ref := s.Properties[p]
			if ref.Value == nil || ref.Value.Extensions[seedExt] == nil {
				continue
			}
			input := ref.Value.Extensions[seedExt] == "input"
			delete(ref.Value.Extensions, seedExt)
			ref.Value.Pattern = seedPattern
			if !input {
				continue
			}
			ref.Value = &openapi3.Schema{Description: ref.Value.Description,
				OneOf: openapi3.SchemaRefs{seedComponent(doc, "Seed", ref.Value), seedComponent(doc, "SeedNumber", nil)}}
		}
	}
}

// seedComponent adds (once) and refers to the component name: Seed, the
// decimal string like str (with neither description nor extensions), or
// SeedNumber, the integer from 0 to 2^53 − 1.
func seedComponent(doc *openapi3.T, name string, str *openapi3.Schema) *openapi3.SchemaRef {
	if c := doc.Components.Schemas[name]; c != nil {
		return openapi3.NewSchemaRef("#/components/schemas/"+name, c.Value)
	}
	var s *openapi3.Schema
	if str != nil {
		s = openapi3.NewStringSchema().WithPattern(seedPattern)
		s.Example = str.Example
		s.Description = "a deal seed (R6.1), 0 to 2^64-1, as a decimal string: what every response sends, and what a request may send for any seed"
	} else {
		s = openapi3.NewInt64Schema().WithMin(0).WithMax(maxJSONSafeSeed)
		s.Example = 42
		s.Description = "a deal seed as a JSON integer, which a request may send up to 2^53-1 (the largest integer every JSON reader holds exactly); a larger one is refused with 400: send it as a decimal string (Seed)"
	}
	doc.Components.Schemas[name] = openapi3.NewSchemaRef("", s)
	return openapi3.NewSchemaRef("#/components/schemas/"+name, s)
}
