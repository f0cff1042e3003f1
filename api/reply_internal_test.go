package api

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestReplyWith: a reply's extra header fields are kept by canonical name,
// once each (the later value wins, as http.Header.Set), and adding to a
// reply never changes another reply made from the same one (replies are
// values that share nothing); write sends each field as one value.
func TestReplyWith(t *testing.T) {
	base := reply{status: http.StatusOK}.with("etag", `"1"`)
	a := base.with("Location", "/v1/games/a")
	b := base.with("Retry-After", "3")
	b = b.with("ETag", `"2"`)
	if got := base.get("ETag"); got != `"1"` || len(base.header) != 1 {
		t.Errorf("base: ETag %q, %d fields", got, len(base.header))
	}
	if a.get("etag") != `"1"` || a.get("Location") != "/v1/games/a" || a.get("Retry-After") != "" || len(a.header) != 2 {
		t.Errorf("a: %+v", a.header)
	}
	if b.get("ETag") != `"2"` || b.get("Retry-After") != "3" || b.get("Location") != "" || len(b.header) != 2 {
		t.Errorf("b: %+v", b.header)
	}
	// A reply with spare capacity behind its fields: replies made from it
	// must not write into what it, or each other, hold.
	wide := reply{}.with("A", "1").with("B", "2").with("C", "3")
	x := wide.with("B", "x")
	y := wide.with("B", "y")
	z := wide.with("D", "4")
	if wide.get("A") != "1" || wide.get("B") != "2" || wide.get("C") != "3" || wide.get("D") != "" || len(wide.header) != 3 {
		t.Errorf("wide changed: %+v", wide.header)
	}
	if x.get("B") != "x" || y.get("B") != "y" || z.get("B") != "2" || z.get("D") != "4" || x.get("D") != "" || len(x.header) != 3 {
		t.Errorf("x %+v, y %+v, z %+v", x.header, y.header, z.header)
	}
	gin.SetMode(gin.ReleaseMode)
	rec := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(rec)
	c.Request = httptest.NewRequest(http.MethodGet, "/", nil)
	(&server{}).write(c, b)
	if h := rec.Result().Header; len(h.Values("Etag")) != 1 || h.Get("Etag") != `"2"` || h.Get("Retry-After") != "3" {
		t.Errorf("written: %v", h)
	}
}
