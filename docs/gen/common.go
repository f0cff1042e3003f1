package main

import (
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Responses every operation may give because of middleware rather than
// its handler, which swag cannot declare once for all (fix 4). Both are
// components, referenced by the operations.
const (
	// rateLimitedResponse is 429: api's rate limit (README "Limits"),
	// on every operation but those tagged operationsTag (the probes,
	// metrics and the spec, which the API's rate limit does not cover;
	// the probes document the 429 of their own limit themselves).
	rateLimitedResponse = "RateLimited"
	// unavailableResponse is 503 database_unavailable, on every operation
	// that lists a 500: the errors of the database are what such a handler
	// can meet, and an outage is answered 503, not 500.
	unavailableResponse = "DatabaseUnavailable"
	// operationsTag marks the operations outside the API's rate limit.
	operationsTag = "operations"
)

// commonResponses is fix 4: it adds the components RateLimited and
// DatabaseUnavailable and refers to them from the operations they apply
// to, unless an operation documents that status itself.
func commonResponses(doc *openapi3.T) {
	if doc.Components.Responses == nil {
		doc.Components.Responses = openapi3.ResponseBodies{}
	}
	retryAfter := func(what string) openapi3.Headers {
		min := 1.0
		return openapi3.Headers{"Retry-After": &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
			Description: "whole seconds to wait before " + what + " (RFC 9110 §10.2.3)",
			Schema:      openapi3.NewIntegerSchema().WithMin(min).NewRef(),
		}}}}
	}
	var problemSchema *openapi3.Schema
	if p := doc.Components.Schemas[strings.TrimPrefix(problemRef, "#/components/schemas/")]; p != nil {
		problemSchema = p.Value
	}
	problem := openapi3.Content{mimeProblem: openapi3.NewMediaType().WithSchemaRef(openapi3.NewSchemaRef(problemRef, problemSchema))}
	rateLimitedDesc := "too many requests from this token, or from this address without one (code rate_limited)"
	unavailableDesc := "the database is unavailable (code database_unavailable); a change answered so was made whole or not at all"
	doc.Components.Responses[rateLimitedResponse] = &openapi3.ResponseRef{Value: &openapi3.Response{
		Description: &rateLimitedDesc, Headers: retryAfter("the next request"), Content: problem}}
	doc.Components.Responses[unavailableResponse] = &openapi3.ResponseRef{Value: &openapi3.Response{
		Description: &unavailableDesc, Headers: retryAfter("trying again"), Content: problem}}
	for _, path := range doc.Paths.InMatchingOrder() {
		for _, op := range doc.Paths.Value(path).Operations() {
			limited := true
			for _, tag := range op.Tags {
				if tag == operationsTag {
					limited = false
				}
			}
			if limited && op.Responses.Value("429") == nil {
				op.Responses.Set("429", &openapi3.ResponseRef{Ref: "#/components/responses/" + rateLimitedResponse,
					Value: doc.Components.Responses[rateLimitedResponse].Value})
			}
			if op.Responses.Value("500") != nil && op.Responses.Value("503") == nil {
				op.Responses.Set("503", &openapi3.ResponseRef{Ref: "#/components/responses/" + unavailableResponse,
					Value: doc.Components.Responses[unavailableResponse].Value})
			}
		}
	}
}

// componentNames are the schema components' names, sorted.
func componentNames(doc *openapi3.T) []string { return sortedKeys(doc.Components.Schemas) }

// sortedKeys are a map's keys in order, for output that does not depend on
// map iteration.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
