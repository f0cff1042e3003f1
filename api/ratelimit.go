package api

import (
	"errors"
	"fmt"
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

// rateLimitExempt are the routes never rate limited (tag operations, but
// the probes): metrics must answer a scraper that shares an address with
// busy clients, and the spec and its page are static. The generator
// (docs/gen) documents 429 on every operation but those tagged operations,
// and the probes document their own; a test holds the two to each other.
// Requests that match no route are not limited either: their 404 or 405
// asks nothing of the database.
var rateLimitExempt = map[string]bool{
	"/metrics": true, "/openapi.yaml": true, "/openapi.json": true, "/docs": true,
}

// probeRoutes are the probes: limited per address by a bucket of their own
// (Config.ProbeRateLimit), never by the API's buckets, so that a load
// balancer sharing an address with busy clients still gets its answer,
// while a client cannot ping them without bound.
var probeRoutes = map[string]bool{"/healthz": true, "/readyz": true}

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
	policy  string           // its name in the RateLimit fields (Policy*)

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
// is spent and wait says when one request will be allowed. left is what
// the bucket holds after the request (for the RateLimit field).
func (l *limiters) take(key string) (ok bool, wait time.Duration, left quota) {
	now := l.clock()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.get(key, now)
	r := b.lim.ReserveN(now, 1)
	if !r.OK() { // only for a burst below 1, which New refuses
		return false, time.Second, l.quotaOf(b, now)
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d, l.quotaOf(b, now)
	}
	return true, 0, l.quotaOf(b, now)
}

// quota is what a bucket holds at one moment, as the RateLimit field
// tells it: remaining whole requests, and the time until the bucket is
// full again.
type quota struct {
	remaining int
	reset     time.Duration
}

// quotaOf is b's quota at now; l.mu is held.
func (l *limiters) quotaOf(b *bucket, now time.Time) quota {
	tokens := max(b.lim.TokensAt(now), 0)
	missing := float64(l.burst) - tokens
	return quota{remaining: int(math.Floor(tokens)),
		reset: time.Duration(max(missing, 0) / float64(l.limit) * float64(time.Second))}
}

// window is the policy's window (the w parameter): the time an empty
// bucket takes to fill, in which it serves burst requests.
func (l *limiters) window() time.Duration {
	return time.Duration(float64(l.burst) / float64(l.limit) * float64(time.Second))
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
// client address without one), failed authentications per client address,
// new players per client address, and probes per client address. A nil
// field is no limit.
type rateLimits struct {
	requests *limiters
	badAuth  *limiters
	players  *limiters
	probes   *limiters
}

// newRateLimits returns the limits of a Config: perSecond requests with
// burst (none if perSecond is 0), playersPerHour new players per address
// (none if 0), and probesPerSecond probes per address with bursts of twice
// that, rounded up (none if 0). nil when there are none.
func newRateLimits(perSecond float64, burst int, playersPerHour int, probesPerSecond float64) *rateLimits {
	if perSecond <= 0 && playersPerHour <= 0 && probesPerSecond <= 0 {
		return nil
	}
	l := &rateLimits{}
	if perSecond > 0 {
		l.requests, l.badAuth = newLimiters(perSecond, burst), newLimiters(perSecond, burst)
		l.requests.policy, l.badAuth.policy = PolicyRequests, PolicyBadTokens
	}
	if playersPerHour > 0 {
		l.players = newLimiters(float64(playersPerHour)/3600, playersPerHour)
		l.players.policy = PolicyPlayers
	}
	if probesPerSecond > 0 {
		l.probes = newLimiters(probesPerSecond, max(1, int(math.Ceil(2*probesPerSecond))))
		l.probes.policy = PolicyProbes
	}
	return l
}

// The policy names of the RateLimit-Policy and RateLimit fields.
const (
	// PolicyRequests is the request rate of a token, or of an address
	// without one (Config.RateLimit, Config.RateBurst).
	PolicyRequests = "requests"
	// PolicyBadTokens is the rate of requests with tokens the server does
	// not know, per address; named only on its own 429.
	PolicyBadTokens = "bad_tokens"
	// PolicyPlayers is the rate of POST /v1/players per address
	// (Config.PlayersPerHour).
	PolicyPlayers = "players"
	// PolicyProbes is the rate of GET /healthz and /readyz per address
	// (Config.ProbeRateLimit); the probes spend from no other bucket.
	PolicyProbes = "probes"
)

// The rate-limit fields of draft-ietf-httpapi-ratelimit-headers-10
// ("RateLimit header fields for HTTP", the latest draft), both Structured
// Field Lists (RFC 9651) of one item per policy that applies to the
// request: RateLimit-Policy `"name";q=Q;w=W` (Q requests per window of W
// seconds) and RateLimit `"name";r=R;t=T` (R requests left now; T seconds
// until the quota is whole again). The limits are token buckets
// (golang.org/x/time/rate): Q is the burst, W the seconds an empty bucket
// takes to fill, R the whole requests in the bucket after this one, T the
// seconds until it is full, rounded up.
const (
	RateLimitPolicyHeader = "RateLimit-Policy"
	RateLimitHeader       = "RateLimit"
)

// advertise adds l's policy and key's quota after this request to the
// response's rate-limit fields.
func advertise(c *gin.Context, l *limiters, left quota) {
	h := c.Writer.Header()
	h.Add(RateLimitPolicyHeader, fmt.Sprintf("%q;q=%d;w=%d", l.policy, l.burst, seconds(l.window())))
	h.Add(RateLimitHeader, fmt.Sprintf("%q;r=%d;t=%d", l.policy, left.remaining, seconds(left.reset)))
}

// seconds is d in whole seconds, rounded up.
func seconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

// ClientKey is the address a client is limited by, from the peer's IP in
// text (as net.IP.String or gin's ClientIP give it): an IPv4 address as
// dotted decimal (an IPv4-mapped IPv6 address counts as its IPv4 one), or
// for IPv6 its /64 ("2001:db8:1:2::/64"), which one subscriber usually
// holds whole, so that one subscriber cannot escape a per-address limit by
// changing addresses within it. Text that is not an IP is its own key. The
// rate limits, the live streams' per-address bound and the server's
// per-address connection bound (cmd/solitaire-server) all group clients by
// it.
func ClientKey(ip string) string {
	a := net.ParseIP(ip)
	if a == nil {
		return ip
	}
	if a.To4() == nil {
		return a.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return a.String()
}

// limitRate applies the rate limit (README "Limits"): each bearer token, or each
// client address for requests without a valid one, may send
// Config.RateLimit requests per second with bursts of Config.RateBurst;
// beyond that the answer is 429 rate_limited with Retry-After (whole
// seconds). A token counts as its own only once the store knows it, so
// made-up tokens cannot escape their address's limit, on any route; each
// unknown token also spends from its address's failure bucket, and while
// that is empty every request of the address that carries a token is
// refused before the database is asked. POST /v1/players also spends from
// its address's player bucket (Config.PlayersPerHour), since free tokens
// would otherwise defeat the per-token limit. The probes (GET /healthz,
// /readyz) spend only from their address's probe bucket
// (Config.ProbeRateLimit), tokens or not. Every limited response, 429 or
// not, carries the RateLimit-Policy and RateLimit fields of the buckets it
// spent from.
func (s *server) limitRate(c *gin.Context) {
	if s.limits == nil || c.FullPath() == "" || rateLimitExempt[c.FullPath()] {
		return
	}
	newPlayer := c.Request.Method == http.MethodPost && c.FullPath() == "/v1/players"
	if !probeRoutes[c.FullPath()] && s.limits.requests == nil && (s.limits.players == nil || !newPlayer) {
		return // no bucket to spend from: the address is not worked out for nothing
	}
	addr := "ip:" + ClientKey(c.ClientIP())
	if probeRoutes[c.FullPath()] {
		if l := s.limits.probes; l != nil {
			ok, wait, left := l.take(addr)
			advertise(c, l, left)
			if !ok {
				s.tooMany(c, wait, "too many probes from this address; retry after Retry-After seconds")
			}
		}
		return
	}
	if l := s.limits.requests; l != nil {
		key := addr
		if token, ok := bearerToken(c.GetHeader("Authorization")); ok {
			if ok, wait := s.limits.badAuth.check(addr); !ok {
				advertise(c, s.limits.badAuth, quota{reset: wait})
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
		ok, wait, left := l.take(key)
		advertise(c, l, left)
		if !ok {
			s.tooMany(c, wait, "too many requests; send the next one after Retry-After seconds")
			return
		}
	}
	if l := s.limits.players; l != nil && newPlayer {
		ok, wait, left := l.take(addr)
		advertise(c, l, left)
		if !ok {
			s.tooMany(c, wait, "too many new players from this address; use the token you have, or retry after Retry-After seconds")
			return
		}
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
