// Command gen converts swag's Swagger 2.0 output into the OpenAPI 3.0
// description served by the API:
//
//	go run ./docs/gen -in docs/swagger.json -out openapi.yaml
//
// It is run by `go generate ./docs`. The conversion is kin-openapi's
// openapi2conv.ToV3, followed by fixes for what Swagger 2.0 or swag
// cannot say (each deterministic, none hand-edited):
//
//  1. The BearerAuth scheme becomes an HTTP bearer scheme (Swagger 2.0 only
//     knows an API key in the Authorization header).
//  2. A response whose schema is Problem is served as
//     application/problem+json (RFC 9457) only, and no other response lists
//     that media type (Swagger 2.0 has one produces list per operation).
//  3. An application/x-ndjson response is text, one item per line: its
//     schema becomes a string, and the media type's x-itemSchema (after
//     OpenAPI 3.2's itemSchema) refers to the schema of one line, the
//     items of the page's one array property. A text/event-stream
//     response is a string.
//  4. The responses of middleware, declared once as components and
//     referenced by each operation they apply to (common.go): 429
//     RateLimited on every operation not tagged operations, 503
//     DatabaseUnavailable on every operation that lists a 500.
//  5. Seeds (seed.go): the pattern of a decimal seed, and a request's seed
//     a oneOf of that string and a JSON integer up to 2^53 − 1.
//  6. `security: []` on every operation that takes no credentials
//     (security.go).
//  7. Event is a oneOf of one schema per event type with a discriminator
//     on type, built from the table api.EventTypes (events.go).
//  8. A nullable schema with an enum lists null among its values
//     (nullable.go): OpenAPI 3.0 allows null there only if enum does.
//  9. The response fields of middleware (headers.go), declared once as
//     components.headers: X-Request-Id on every response, RateLimit and
//     RateLimit-Policy on every response of an operation that lists a 429.
//  10. A HEAD operation beside every GET (head.go): the GET's status codes
//     and header fields, no bodies.
//  11. A nullable property that only references a schema gets the type
//     object beside nullable (nullable.go).
//  12. MoveRequest is a oneOf of one schema per command with a
//     discriminator on type, pile names with their pattern (moves.go).
//
// The result is validated and written as YAML with sorted keys (the top
// level in the usual order), so the same input always gives the same
// bytes.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v4"
)

const (
	problemRef  = "#/components/schemas/Problem"
	mimeJSON    = "application/json"
	mimeProblem = "application/problem+json"
	mimeNDJSON  = "application/x-ndjson"
	mimeSSE     = "text/event-stream"

	// itemSchemaExt, on an application/x-ndjson media type, refers to the
	// schema of one line (fix 3): OpenAPI 3.2's itemSchema, which 3.0 lacks.
	itemSchemaExt = "x-itemSchema"
)

func main() {
	in := flag.String("in", "swagger.json", "swag's Swagger 2.0 JSON")
	out := flag.String("out", "../openapi.yaml", "the OpenAPI 3.0 YAML to write")
	flag.Parse()
	src, err := os.ReadFile(*in)
	if err != nil {
		fail(err)
	}
	b, err := Convert(src)
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out, b, 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

// Convert turns a Swagger 2.0 document (JSON) into the OpenAPI 3.0 YAML of
// the API, applying the fixes of the package comment.
func Convert(swagger []byte) ([]byte, error) {
	var doc2 openapi2.T
	if err := json.Unmarshal(swagger, &doc2); err != nil {
		return nil, fmt.Errorf("read swagger: %w", err)
	}
	doc, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, fmt.Errorf("convert: %w", err)
	}
	if err := bearer(doc); err != nil {
		return nil, err
	}
	if err := typedEvents(doc); err != nil {
		return nil, err
	}
	if err := typedMoves(doc); err != nil {
		return nil, err
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		for _, op := range doc.Paths.Value(path).Operations() {
			for _, r := range op.Responses.Map() {
				if r.Value == nil {
					continue
				}
				problems(r.Value)
				eventStream(r.Value)
				if err := ndjson(doc, r.Value); err != nil {
					return nil, fmt.Errorf("%s: %w", path, err)
				}
			}
		}
	}
	commonResponses(doc)
	seeds(doc)
	publicSecurity(doc)
	nullableEnums(doc)
	if err := responseHeaders(doc); err != nil {
		return nil, err
	}
	if err := headOperations(doc); err != nil {
		return nil, err
	}
	nullableRefs(doc)
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the converted spec is invalid: %w", err)
	}
	return encode(doc)
}

// topLevel is the order of the document's top-level keys in the YAML;
// nested keys are sorted.
var topLevel = []string{"openapi", "info", "servers", "tags", "security", "paths", "components"}

// encode writes doc as YAML, two-space indented, top-level keys in the
// order of topLevel (then any other, sorted).
func encode(doc *openapi3.T) ([]byte, error) {
	var n yaml.Node
	if err := n.Encode(doc); err != nil {
		return nil, err
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("encode: the document is not a mapping")
	}
	rank := func(key string) int {
		for i, k := range topLevel {
			if k == key {
				return i
			}
		}
		return len(topLevel)
	}
	pairs := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		pairs = append(pairs, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	sort.SliceStable(pairs, func(i, j int) bool { return rank(pairs[i][0].Value) < rank(pairs[j][0].Value) })
	n.Content = n.Content[:0]
	for _, p := range pairs {
		n.Content = append(n.Content, p[0], p[1])
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// bearer is fix 1.
func bearer(doc *openapi3.T) error {
	ref := doc.Components.SecuritySchemes["BearerAuth"]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("no BearerAuth security scheme")
	}
	ref.Value = &openapi3.SecurityScheme{Type: "http", Scheme: "bearer", Description: ref.Value.Description}
	return nil
}

// problems is fix 2.
func problems(r *openapi3.Response) {
	var problem *openapi3.MediaType
	for _, mt := range r.Content {
		if mt.Schema != nil && mt.Schema.Ref == problemRef {
			problem = mt
		}
	}
	if problem != nil {
		r.Content = openapi3.Content{mimeProblem: problem}
		return
	}
	delete(r.Content, mimeProblem)
}

// eventStream is part of fix 3: a text/event-stream response is text
// (its events are described by the operation, their data by the NDJSON
// item schema beside it), whatever schema swag gave the operation's 200.
func eventStream(r *openapi3.Response) {
	if mt := r.Content[mimeSSE]; mt != nil {
		s := openapi3.NewStringSchema()
		s.Description = "Server-Sent Events (WHATWG HTML §9.2): each event's data is one Event as JSON"
		r.Content[mimeSSE] = openapi3.NewMediaType().WithSchema(s)
	}
}

// ndjson is fix 3.
func ndjson(doc *openapi3.T, r *openapi3.Response) error {
	mt := r.Content[mimeNDJSON]
	if mt == nil || mt.Schema == nil {
		return nil
	}
	name := strings.TrimPrefix(mt.Schema.Ref, "#/components/schemas/")
	page := doc.Components.Schemas[name]
	if page == nil || page.Value == nil {
		return fmt.Errorf("%s response: schema %q is not a component", mimeNDJSON, mt.Schema.Ref)
	}
	var items *openapi3.SchemaRef
	for _, p := range page.Value.Properties {
		if p.Value != nil && p.Value.Type.Is("array") {
			if items != nil {
				return fmt.Errorf("%s response: %s has more than one array", mimeNDJSON, name)
			}
			items = p.Value.Items
		}
	}
	if items == nil {
		return fmt.Errorf("%s response: %s has no array", mimeNDJSON, name)
	}
	item, ok := strings.CutPrefix(items.Ref, schemaPrefix)
	if !ok {
		return fmt.Errorf("%s response: the items of %s are not a component", mimeNDJSON, name)
	}
	s := openapi3.NewStringSchema()
	s.Description = fmt.Sprintf("newline-delimited JSON (NDJSON): each line that is not empty is one %s as JSON, "+
		"ending in a line feed (%s refers to its schema); an empty line carries nothing", item, itemSchemaExt)
	lines := openapi3.NewMediaType().WithSchema(s)
	lines.Extensions = map[string]any{itemSchemaExt: map[string]any{"$ref": items.Ref}}
	r.Content[mimeNDJSON] = lines
	return nil
}
