package api

import (
	"errors"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/time/rate"

	"github.com/openpatience/solitaire/domain"
)

// rateLimitExempt are the routes never rate limited (the operations tag):
// probes and metrics must answer a load balancer or a scraper that shares
// an address with busy clients, and the spec and its page are static. The
// generator (docs/gen) documents 429 on every operation but these; a test
// holds the two to each other. Requests that match no route are not
// limited either: their 404 or 405 asks nothing of the database.
var rateLimitExempt = map[string]bool{
	"/healthz": true, "/readyz": true, "/metrics": true,
	"/openapi.yaml": true, "/openapi.json": true, "/docs": true,
}

// maxRateKeys bounds the limiter map. Keys idle long enough to have a full
// bucket are dropped (without loss: a full bucket is a new one), so the map
// only grows under many distinct clients at once; past the bound, new
// clients share one bucket until old ones are dropped.
const maxRateKeys = 100_000

// overflowKey is the shared bucket of clients beyond maxRateKeys.
const overflowKey = "\x00overflow"

// limiters is a token bucket (golang.org/x/time/rate) per key, with
// eviction of idle keys.
type limiters struct {
	limit   rate.Limit
	burst   int
	idle    time.Duration    // after this long unused a bucket is full again
	clock   func() time.Time // the real clock (not the game clock)
	maxKeys int              // maxRateKeys

	mu        sync.Mutex
	keys      map[string]*bucket
	lastSweep time.Time
}

// bucket is one key's limiter and when it was last used.
type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

// newLimiters makes buckets of burst requests refilled at perSecond.
func newLimiters(perSecond float64, burst int) *limiters {
	idle := time.Duration(float64(burst) / perSecond * float64(time.Second))
	return &limiters{limit: rate.Limit(perSecond), burst: burst, idle: max(idle, time.Second),
		clock: time.Now, maxKeys: maxRateKeys, keys: map[string]*bucket{}}
}

// get is key's bucket, made if missing; l.mu is held.
func (l *limiters) get(key string, now time.Time) *bucket {
	if now.Sub(l.lastSweep) >= l.idle {
		for k, b := range l.keys {
			if now.Sub(b.seen) >= l.idle {
				delete(l.keys, k)
			}
		}
		l.lastSweep = now
	}
	b := l.keys[key]
	if b == nil {
		if len(l.keys) >= l.maxKeys {
			key = overflowKey
			b = l.keys[key]
		}
		if b == nil {
			b = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
			l.keys[key] = b
		}
	}
	b.seen = now
	return b
}

// take spends one request of key's bucket. If the bucket is empty nothing
// is spent and wait says when one request will be allowed.
func (l *limiters) take(key string) (ok bool, wait time.Duration) {
	now := l.clock()
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.get(key, now).lim.ReserveN(now, 1)
	if !r.OK() { // only for a burst below 1, which New refuses
		return false, time.Second
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// check reports whether key's bucket has a request left, spending nothing.
func (l *limiters) check(key string) (ok bool, wait time.Duration) {
	now := l.clock()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.keys[key]
	if b == nil {
		return true, 0
	}
	if tokens := b.lim.TokensAt(now); tokens < 1 {
		return false, time.Duration((1 - tokens) / float64(l.limit) * float64(time.Second))
	}
	return true, 0
}

// len is the number of keys held (for tests).
func (l *limiters) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// rateLimits are the server's limiters: requests per bearer token (or per
// client address without one), and failed authentications per client
// address.
type rateLimits struct {
	requests *limiters
	badAuth  *limiters
}

// newRateLimits returns the limits of a Config; nil when RateLimit is 0.
func newRateLimits(perSecond float64, burst int) *rateLimits {
	if perSecond <= 0 {
		return nil
	}
	return &rateLimits{requests: newLimiters(perSecond, burst), badAuth: newLimiters(perSecond, burst)}
}

// clientKey is the address a client is limited by: its IP, or for IPv6
// its /64, which one subscriber usually holds whole.
func clientKey(ip string) string {
	a := net.ParseIP(ip)
	if a == nil {
		return ip
	}
	if a.To4() == nil {
		return a.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return a.String()
}

// limitRate applies API.md "Rate limits": each bearer token, or each
// client address for requests without a valid one, may send
// Config.RateLimit requests per second with bursts of Config.RateBurst;
// beyond that the answer is 429 rate_limited with Retry-After (whole
// seconds). A token counts as its own only once the store knows it, so
// made-up tokens cannot escape their address's limit, on any route; each
// unknown token also spends from its address's failure bucket, and while
// that is empty every request of the address that carries a token is
// refused before the database is asked.
func (s *server) limitRate(c *gin.Context) {
	if s.limits == nil || c.FullPath() == "" || rateLimitExempt[c.FullPath()] {
		return
	}
	addr := "ip:" + clientKey(c.ClientIP())
	key := addr
	if token, ok := bearerToken(c.GetHeader("Authorization")); ok {
		if ok, wait := s.limits.badAuth.check(addr); !ok {
			s.tooMany(c, wait, "too many requests with tokens that are not valid from this address")
			return
		}
		hash := hashToken(token)
		_, err := s.cfg.Players.PlayerByTokenHash(c.Request.Context(), hash)
		switch {
		case err == nil:
			key = "token:" + string(hash)
		case errors.Is(err, domain.ErrNotFound):
			s.limits.badAuth.take(addr)
		}
		// Any other error (an outage) counts against the address; the
		// handler answers it.
	}
	if ok, wait := s.limits.requests.take(key); !ok {
		s.tooMany(c, wait, "too many requests; send the next one after Retry-After seconds")
		return
	}
}

// tooMany answers 429 and stops the chain.
func (s *server) tooMany(c *gin.Context, wait time.Duration, detail string) {
	r := s.fail(c, &requestError{status: http.StatusTooManyRequests, code: CodeRateLimited, detail: detail})
	s.write(c, r.with("Retry-After", retryAfter(wait)))
	c.Abort()
}

// retryAfter is a Retry-After value (RFC 9110 §10.2.3): whole seconds,
// rounded up, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

// bearerToken is the token of an Authorization: Bearer header, as auth
// reads it.
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(header, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}
