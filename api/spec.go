package api

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gin-gonic/gin"
	swaggerFiles "github.com/swaggo/files"
	ginSwagger "github.com/swaggo/gin-swagger"
	"golang.org/x/net/webdav"
)

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
//	@Description	openapi.yaml byte for byte: the contract of this API, generated from the handlers (go generate ./docs). Never rate limited.
//	@Tags		operations
//	@Produce	application/yaml
//	@Success	200	{string}	string	"openapi.yaml, as YAML text"
//	@ID		getSpecYAML
//	@Router		/openapi.yaml [get]
func (s *server) specYAML(*gin.Context) reply {
	return reply{status: http.StatusOK, contentType: mimeYAML, body: s.cfg.Spec}
}

// specJSONHandler serves the spec as JSON.
//
//	@Summary	The OpenAPI 3 description (JSON)
//	@Description	The same description as /openapi.yaml, as JSON; the documentation page (/docs) renders it. Never rate limited.
//	@Tags		operations
//	@Produce	json
//	@Success	200	{object}	object	"the spec as JSON"
//	@ID		getSpecJSON
//	@Router		/openapi.json [get]
func (s *server) specJSONHandler(*gin.Context) reply {
	return reply{status: http.StatusOK, contentType: mimeJSON, body: s.specJSON}
}

// docsFiles are the files of the documentation page that /docs/{file}
// serves: Swagger UI's, embedded in the binary by swaggo/files, and the
// page and start-up script gin-swagger renders. Anything else is 404.
var docsFiles = map[string]bool{
	"index.html": true, "index.css": true, "swagger-initializer.js": true,
	"swagger-ui.css": true, "swagger-ui-bundle.js": true, "swagger-ui-standalone-preset.js": true,
	"favicon-32x32.png": true, "favicon-16x16.png": true,
}

// docsCSP keeps the page to this server: scripts, styles, images and the
// requests of "Try it out" may come from it alone (Swagger UI styles some
// elements inline and shows data: images).
const docsCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'"

// docsPage serves Swagger UI's page, rendered once by gin-swagger, with a
// base of /docs/ so that its relative links find the files beside it.
//
//	@Summary		Interactive API documentation
//	@Description	Swagger UI, served with its assets from this server (/docs/{file}; no other host is asked for anything), rendering /openapi.json; "Try it out" sends requests to this server. Never rate limited.
//	@Tags			operations
//	@Produce		html
//	@Success		200	{string}	string	"an HTML page"
//	@ID				getDocs
//	@Router			/docs [get]
func (s *server) docsPage(*gin.Context) reply {
	return reply{status: http.StatusOK, contentType: mimeHTML, body: s.docsIndex}.with("Content-Security-Policy", docsCSP)
}

// newDocsUI returns the handler of /docs/{file} and the page of /docs.
func newDocsUI() (gin.HandlerFunc, []byte, error) {
	files := &webdav.Handler{FileSystem: swaggerFiles.FS, LockSystem: webdav.NewMemLS()}
	ui := ginSwagger.WrapHandler(files, ginSwagger.URL("/openapi.json"), func(c *ginSwagger.Config) {
		c.Title = "Solitaire server API"
	})
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	c.Request = httptest.NewRequest(http.MethodGet, "/docs/index.html", nil)
	ui(c)
	page := rec.Body.Bytes()
	if rec.Code != http.StatusOK || !bytes.Contains(page, []byte("<head>")) {
		return nil, nil, fmt.Errorf("api: Swagger UI's page: %d", rec.Code)
	}
	page = bytes.Replace(page, []byte("<head>"), []byte("<head>\n  <base href=\"/docs/\">"), 1)
	return ui, page, nil
}

// docsFileHandler serves the files of the documentation page with
// gin-swagger, from a file handler of this server's own (gin-swagger sets
// the handler's prefix on first use, so a shared one would be written by
// every server).
//
//	@Summary		A file of the documentation page
//	@Description	index.html is Swagger UI rendering /openapi.json; the others are its scripts, styles and icons (swaggo/files, embedded in the server). Rate limited like the API.
//	@Tags			documentation
//	@Produce		text/html,text/css,application/javascript,image/png
//	@Param			file	path		string	true	"a file of the page"	Enums(index.html, index.css, swagger-initializer.js, swagger-ui.css, swagger-ui-bundle.js, swagger-ui-standalone-preset.js, favicon-32x32.png, favicon-16x16.png)
//	@Success		200		{string}	string	"the file (text/html, text/css, application/javascript or image/png)"
//	@Header			200		{string}	ETag	"the file's entity tag, on the files of Swagger UI that have one"
//	@Failure		404		{object}	Problem	"not a file of the page"
//	@ID				getDocsFile
//	@Router			/docs/{file} [get]
func (s *server) docsFileHandler(c *gin.Context) {
	if !docsFiles[c.Param("file")] {
		s.write(c, s.fail(c, &requestError{status: http.StatusNotFound, code: CodeNotFound,
			detail: "not a file of the documentation page; start at /docs"}))
		return
	}
	c.Header("Content-Security-Policy", docsCSP)
	// The files are sent whole: the file server would answer conditions
	// and ranges with 304, 206, 412 or 416, which are not worth describing
	// for a page's assets.
	for _, h := range []string{"If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range", "Range"} {
		c.Request.Header.Del(h)
	}
	// gin-swagger answers GET alone; a HEAD (routed as GET, see
	// headAsGet) gets the same answer, and net/http drops the body.
	method := c.Request.Method
	c.Request.Method = http.MethodGet
	s.docsUI(c)
	c.Request.Method = method
}
