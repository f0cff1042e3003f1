package api

import (
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gin-gonic/gin"
)

// Keys of values the middleware keeps in the gin context.
const (
	ctxRequestID   = "api.request_id"
	ctxProblemCode = "api.problem_code"
	ctxPlayer      = "api.player"
)

// RequestIDHeader carries the request id: taken from the request when it
// is 1..128 characters of [A-Za-z0-9._-], else generated (32 hex digits),
// and always sent back.
const RequestIDHeader = "X-Request-Id"

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// requestID sets the request id (RequestIDHeader) for the log, the
// response and problem bodies.
func (s *server) requestID(c *gin.Context) {
	id := c.GetHeader(RequestIDHeader)
	if !validRequestID(id) {
		var b [16]byte
		if _, err := io.ReadFull(s.cfg.Random, b[:]); err != nil {
			s.log.Error("api: random source for request id", "err", err)
		}
		id = hex.EncodeToString(b[:])
	}
	c.Set(ctxRequestID, id)
	c.Writer.Header().Set(RequestIDHeader, id)
	c.Next()
}

func requestIDOf(c *gin.Context) string { return c.GetString(ctxRequestID) }

// route is the matched route pattern, "unmatched" for none (bounded label
// values for logs and metrics).
func route(c *gin.Context) string {
	if p := c.FullPath(); p != "" {
		return p
	}
	return "unmatched"
}

// accessLog writes one structured line per request.
func (s *server) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	status := c.Writer.Status()
	level := slog.LevelInfo
	switch {
	case status >= 500 && c.GetString(ctxProblemCode) == CodeSolverBusy:
		level = slog.LevelWarn // load shed on purpose (README "Limits"), not a fault
	case c.GetString(ctxProblemCode) == CodeDealNotReady:
		level = slog.LevelWarn // expected while the supply fills (R7.2); the client retries
	case status >= 500:
		level = slog.LevelError
	}
	if !s.log.Enabled(c.Request.Context(), level) {
		return // at a level above info the line would be built for nothing
	}
	attrs := []slog.Attr{
		slog.String("request_id", requestIDOf(c)),
		slog.String("method", c.Request.Method),
		slog.String("route", route(c)),
		slog.String("path", c.Request.URL.Path),
		slog.Int("status", status),
		slog.Int("bytes", max(c.Writer.Size(), 0)),
		slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
		slog.String("remote", c.ClientIP()),
	}
	if code := c.GetString(ctxProblemCode); code != "" {
		attrs = append(attrs, slog.String("problem", code))
	}
	if p := playerOf(c); p != nil {
		attrs = append(attrs, slog.String("player", p.ID))
	}
	s.log.LogAttrs(c.Request.Context(), level, "http request", attrs...)
}

// recover turns a panic into a logged 500 problem. A request-reachable
// panic is a bug; this keeps it from taking the connection down silently.
func (s *server) recover(c *gin.Context) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
			panic(v)
		}
		s.log.ErrorContext(c.Request.Context(), "panic serving request", "request_id", requestIDOf(c),
			"route", route(c), "panic", v, "stack", string(debug.Stack()))
		if !c.Writer.Written() {
			p := newProblem(http.StatusInternalServerError, CodeInternal,
				"an internal error occurred; quote the request id when reporting it")
			p.RequestID = requestIDOf(c)
			s.write(c, s.problemReply(p))
		}
		c.Abort()
	}()
	c.Next()
}

// limitBody caps every request body at MaxBodyBytes; reading past it fails
// with *http.MaxBytesError, answered 413.
func (s *server) limitBody(c *gin.Context) {
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.MaxBodyBytes)
	}
	c.Next()
}
