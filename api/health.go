package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// readyTimeout bounds the readiness check.
const readyTimeout = 2 * time.Second

// Health is the body of /healthz and /readyz.
type Health struct {
	Status string `json:"status" example:"ok"`
} // @name Health

// healthz says the process serves.
//
//	@Summary	Liveness
//	@Description	200 while the process serves requests; it does not ask the database (that is /readyz). Limited per client address by a bucket of the probes' own (10 a second, bursts of 20, by default), apart from the API's rate limit.
//	@Tags		operations
//	@Produce	json
//	@Success	200	{object}	Health
//	@Failure	429	{object}	Problem	"too many probes from this address (code rate_limited)"
//	@Header		429	{integer}	Retry-After	"whole seconds to wait before the next probe"
//	@ID		healthz
//	@Router		/healthz [get]
func (s *server) healthz(*gin.Context) reply {
	return s.jsonReply(http.StatusOK, Health{Status: "ok"})
}

// readyz says whether the database answers.
//
//	@Summary	Readiness
//	@Description	200 when the database answers, 503 not_ready when it does not (a load balancer stops sending traffic). Limited per client address by the probes' own bucket, shared with /healthz (10 a second, bursts of 20, by default).
//	@Tags		operations
//	@Produce	json
//	@Success	200	{object}	Health
//	@Failure	429	{object}	Problem	"too many probes from this address (code rate_limited)"
//	@Header		429	{integer}	Retry-After	"whole seconds to wait before the next probe"
//	@Failure	503	{object}	Problem	"the database does not answer"
//	@ID		readyz
//	@Router		/readyz [get]
func (s *server) readyz(c *gin.Context) reply {
	if s.cfg.Ready != nil {
		ctx, cancel := context.WithTimeout(c.Request.Context(), readyTimeout)
		defer cancel()
		if err := s.cfg.Ready(ctx); err != nil {
			s.log.WarnContext(ctx, "not ready", "request_id", requestIDOf(c), "err", err)
			p := newProblem(http.StatusServiceUnavailable, CodeNotReady, "the database does not answer")
			p.RequestID = requestIDOf(c)
			return s.problemReply(p)
		}
	}
	return s.jsonReply(http.StatusOK, Health{Status: "ok"})
}
