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
//	@Description	200 while the process serves requests; it does not ask the database (that is /readyz). Never rate limited.
//	@Tags		operations
//	@Produce	json
//	@Success	200	{object}	Health
//	@ID		healthz
//	@Router		/healthz [get]
func (s *server) healthz(*gin.Context) reply {
	return s.jsonReply(http.StatusOK, Health{Status: "ok"})
}

// readyz says whether the database answers.
//
//	@Summary	Readiness
//	@Description	200 when the database answers, 503 not_ready when it does not (a load balancer stops sending traffic). Never rate limited.
//	@Tags		operations
//	@Produce	json
//	@Success	200	{object}	Health
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
