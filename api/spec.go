package api

import (
	_ "embed"
	"fmt"
	"net/http"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gin-gonic/gin"
)

//go:embed docs.html
var docsHTML []byte

// specToJSON converts the YAML spec to JSON once, at start.
func specToJSON(spec []byte) ([]byte, error) {
	doc, err := openapi3.NewLoader().LoadFromData(spec)
	if err != nil {
		return nil, fmt.Errorf("api: openapi spec: %w", err)
	}
	b, err := doc.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("api: openapi spec: %w", err)
	}
	return b, nil
}

// specYAML serves openapi.yaml byte for byte.
//
//	@Summary	The OpenAPI 3 description (YAML)
//	@Tags		operations
//	@Produce	application/yaml
//	@Success	200	{object}	object	"openapi.yaml"
//	@ID		getSpecYAML
//	@Router		/openapi.yaml [get]
func (s *server) specYAML(*gin.Context) reply {
	return reply{status: http.StatusOK, contentType: mimeYAML, body: s.cfg.Spec}
}

// specJSONHandler serves the spec as JSON.
//
//	@Summary	The OpenAPI 3 description (JSON)
//	@Tags		operations
//	@Produce	json
//	@Success	200	{object}	object	"the spec as JSON"
//	@ID		getSpecJSON
//	@Router		/openapi.json [get]
func (s *server) specJSONHandler(*gin.Context) reply {
	return reply{status: http.StatusOK, contentType: mimeJSON, body: s.specJSON}
}

// docsPage serves a self-contained page that renders /openapi.json.
//
//	@Summary	Interactive API documentation
//	@Tags		operations
//	@Produce	html
//	@Success	200	{string}	string	"an HTML page"
//	@ID		getDocs
//	@Router		/docs [get]
func (s *server) docsPage(*gin.Context) reply {
	return reply{status: http.StatusOK, contentType: mimeHTML, body: docsHTML}.
		with("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'")
}
