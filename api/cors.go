package api

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-contrib/cors"
	"github.com/gin-gonic/gin"
)

// The CORS policy (Fetch standard, "CORS protocol") for browser frontends
// on other origins. Bearer tokens travel in Authorization, never in
// cookies, so credentials are not allowed.
var (
	// corsAllowHeaders are the request headers a frontend may send.
	corsAllowHeaders = []string{"Authorization", "Content-Type", "Accept", "If-Match", "If-None-Match",
		IdempotencyKeyHeader, "Last-Event-ID", RequestIDHeader}
	// corsExposeHeaders are the response headers a frontend may read.
	corsExposeHeaders = []string{"ETag", "Location", "Retry-After", RequestIDHeader, "Idempotent-Replayed",
		"WWW-Authenticate", "Allow", RateLimitPolicyHeader, RateLimitHeader}
	// corsMethods are the methods of the API.
	corsMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost}
)

// corsMaxAge is how long a browser may keep a preflight answer.
const corsMaxAge = time.Hour

// newCORS returns the CORS middleware for origins (each scheme://host[:port],
// or "*" for any), nil for none. Errors: an origin without http:// or
// https://, or with a path.
func newCORS(origins []string) (gin.HandlerFunc, error) {
	if len(origins) == 0 {
		return nil, nil
	}
	allowed := map[string]bool{}
	for _, o := range origins {
		o = strings.ToLower(strings.TrimSpace(o))
		if o != "*" && (!strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") ||
			strings.Count(o, "/") != 2 || strings.Contains(o, "*")) {
			return nil, fmt.Errorf("api: CORS origin %q: want scheme://host[:port] or *", o)
		}
		allowed[o] = true
	}
	cfg := cors.Config{AllowMethods: corsMethods, AllowHeaders: corsAllowHeaders,
		ExposeHeaders: corsExposeHeaders, MaxAge: corsMaxAge}
	if allowed["*"] {
		cfg.AllowAllOrigins = true
	} else {
		for o := range allowed {
			cfg.AllowOrigins = append(cfg.AllowOrigins, o)
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("api: CORS: %w", err)
	}
	h := cors.New(cfg)
	return func(c *gin.Context) {
		origin := c.GetHeader("Origin")
		if origin == "" {
			return
		}
		c.Writer.Header().Add("Vary", "Origin")
		// gin-contrib/cors answers an origin it does not allow with a bare
		// 403. Such a request goes on without CORS headers instead, as the
		// protocol intends (the browser withholds the response): a
		// same-origin page behind a proxy that rewrites Host keeps working,
		// and every error stays a problem document.
		if !allowed["*"] && !allowed[strings.ToLower(origin)] {
			return
		}
		h(c)
	}, nil
}

// cors applies the CORS policy of Config.CORSOrigins, if any.
func (s *server) cors(c *gin.Context) {
	if s.corsHandler != nil {
		s.corsHandler(c)
	}
}
