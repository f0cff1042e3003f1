package api

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the HTTP metrics of the API. Labels are bounded: route is
// the route pattern ("unmatched" for unknown paths), never the raw path.
type metrics struct {
	requests *prometheus.CounterVec   // by method, route, code
	duration *prometheus.HistogramVec // seconds, by method, route
	inFlight prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "solitaire", Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests served, by method, route pattern and status code.",
		}, []string{"method", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "solitaire", Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Time to serve an HTTP request, by method and route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"method", "route"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "solitaire", Subsystem: "http", Name: "requests_in_flight",
			Help: "HTTP requests being served.",
		}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.inFlight} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// knownMethods bounds the method label.
var knownMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true,
	"DELETE": true, "OPTIONS": true}

// observe counts and times each request.
func (s *server) observe(c *gin.Context) {
	start := time.Now()
	s.metrics.inFlight.Inc()
	defer s.metrics.inFlight.Dec()
	c.Next()
	method := c.Request.Method
	if !knownMethods[method] {
		method = "other"
	}
	r := route(c)
	s.metrics.requests.WithLabelValues(method, r, strconv.Itoa(c.Writer.Status())).Inc()
	s.metrics.duration.WithLabelValues(method, r).Observe(time.Since(start).Seconds())
}

// serveMetrics is GET /metrics in the Prometheus text format.
//
//	@Summary	Prometheus metrics
//	@Description	The HTTP metrics (requests by method, route and status; latencies) and the process and Go runtime metrics, in the Prometheus text format. Never rate limited.
//	@Tags		operations
//	@Produce	plain
//	@Success	200	{string}	string	"metrics in the Prometheus text exposition format"
//	@ID		metrics
//	@Router		/metrics [get]
func (s *server) serveMetrics(c *gin.Context) {
	s.metricsHandler.ServeHTTP(c.Writer, c.Request)
}
