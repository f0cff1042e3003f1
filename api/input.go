package api

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// validText reports whether s can be kept as text by either database:
// valid UTF-8 without NUL (PostgreSQL refuses both, SQLSTATE 22021).
func validText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// cleanPath answers 404 to a path that is not valid text: no resource has
// such a name, and a path parameter made of it must not reach the database
// (PostgreSQL would refuse the query, and the answer would be a 500). A
// query parameter that is not valid text is 400 invalid_parameter naming
// it, for the same reason; request bodies are checked by decodeStrict, the
// headers that are kept (Idempotency-Key) where they are read. Together
// they treat every string of a request alike on both databases (SQLite
// would keep what PostgreSQL refuses).
func (s *server) cleanPath(c *gin.Context) {
	if !validText(c.Request.URL.Path) {
		s.write(c, s.fail(c, &requestError{status: http.StatusNotFound, code: CodeNotFound,
			detail: "no such route or resource"}))
		c.Abort()
		return
	}
	for name, values := range c.Request.URL.Query() {
		bad := !validText(name)
		for _, v := range values {
			bad = bad || !validText(v)
		}
		if bad {
			if !validText(name) {
				name = "query"
			}
			s.write(c, s.fail(c, badParam(name, "query parameters must be UTF-8 text without NUL characters")))
			c.Abort()
			return
		}
	}
}
