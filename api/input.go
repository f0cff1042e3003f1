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
// (PostgreSQL would refuse the query, and the answer would be a 500).
// Request bodies are checked by decodeStrict, the headers that are kept
// (Idempotency-Key) and the query parameters where they are read (each is
// an enum, a number, a variant id or a cursor the server made), so every
// string of a request is treated alike on both databases
// (TestEveryStringField).
func (s *server) cleanPath(c *gin.Context) {
	if validText(c.Request.URL.Path) {
		return
	}
	s.write(c, s.fail(c, &requestError{status: http.StatusNotFound, code: CodeNotFound,
		detail: "no such route or resource"}))
	c.Abort()
}
