package main

import (
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// headOperations is fix 10: every GET operation gets a HEAD twin, since the
// server answers HEAD on every GET route with the GET's status and header
// fields and no body (RFC 9110 §9.3.2; api's headAsGet). The twin has the
// GET's parameters, security and tags, the operationId <GET's>Head, and
// each of the GET's responses with its description and header fields but
// no content; a response the GET refers to as a component is written out
// in place, since the component has a body. Run last, so that the twins
// carry what the other fixes added to the GETs.
func headOperations(doc *openapi3.T) error {
	ids := map[string]bool{}
	for _, path := range doc.Paths.InMatchingOrder() {
		for _, op := range doc.Paths.Value(path).Operations() {
			ids[op.OperationID] = true
		}
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		get := item.Get
		if get == nil {
			continue
		}
		if item.Head != nil {
			return fmt.Errorf("HEAD %s: already described", path)
		}
		id := get.OperationID + "Head"
		if ids[id] {
			return fmt.Errorf("HEAD %s: operationId %s is taken", path, id)
		}
		ids[id] = true
		head := &openapi3.Operation{
			Tags:        get.Tags,
			Summary:     get.Summary + " (headers only)",
			Description: fmt.Sprintf("The status and header fields GET %s answers, without its body (RFC 9110 §9.3.2).", path),
			OperationID: id,
			Parameters:  get.Parameters,
			Security:    get.Security,
			Responses:   openapi3.NewResponses(),
		}
		head.Responses.Delete("default")
		for status, r := range get.Responses.Map() {
			if r.Value == nil {
				return fmt.Errorf("GET %s: response %s has no value", path, status)
			}
			head.Responses.Set(status, &openapi3.ResponseRef{Value: &openapi3.Response{
				Description: r.Value.Description, Headers: r.Value.Headers}})
		}
		item.Head = head
	}
	return nil
}
