// Package docs holds the generated description of the HTTP API: swag's
// Swagger 2.0 output (swagger.json), made from the annotations on the
// handlers in package api. `go generate ./docs` (or ./...) rebuilds, in
// order, docs/swagger.json, openapi.yaml at the repository root (OpenAPI
// 3.0, converted by ./gen) and the Go client in clients/go (configured by
// oapi-codegen.yaml, which applies the overlay oapi-codegen-overlay.yaml).
// The generators are pinned by the tool directives of go.mod; nothing
// generated is edited by hand, and TestGeneratedFilesAreCurrent fails when
// it is stale.
package docs

//go:generate go tool swag init --quiet --requiredByDefault --generalInfo doc.go --dir ../api --output . --outputTypes json
//go:generate go run ./gen -in swagger.json -out ../openapi.yaml
//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../openapi.yaml
