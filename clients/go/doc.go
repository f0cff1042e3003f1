// Package client is a Go client of the solitaire server's API, generated
// from openapi.yaml by oapi-codegen (`go generate ./docs`, configured by
// docs/oapi-codegen.yaml); client.gen.go is never edited by hand. The API's
// end-to-end tests play games with it (api/e2e_test.go).
package client
