package api

import (
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	solitaire "github.com/openpatience/solitaire"
)

// fakeClock is a settable clock for the limiters.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestLimitersRefillAndWait(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := newLimiters(2, 3)
	l.clock = clk.now
	for i := 0; i < 3; i++ {
		if ok, _, _ := l.take("a"); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, wait, _ := l.take("a")
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("over the burst: ok %v, wait %v, want a refusal and 500ms", ok, wait)
	}
	if ok, wait := l.check("a"); ok || wait != 500*time.Millisecond {
		t.Errorf("check of an empty bucket: %v %v", ok, wait)
	}
	if ok, _, _ := l.take("b"); !ok {
		t.Errorf("another key is limited too")
	}
	clk.advance(500 * time.Millisecond)
	if ok, _ := l.check("a"); !ok {
		t.Errorf("check after the refill: refused")
	}
	if ok, _, _ := l.take("a"); !ok {
		t.Errorf("take after the refill: refused")
	}
	if ok, _, _ := l.take("a"); ok {
		t.Errorf("a refused request was counted as a wait (the bucket went negative)")
	}
	if ok, _ := l.check("unknown"); !ok {
		t.Errorf("check of an unknown key refused")
	}
}

// TestLimitersEvict: a key unused long enough to have a full bucket is
// dropped, which loses nothing (a full bucket is a new one); past maxKeys
// new keys share one bucket.
func TestLimitersEvict(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	l := newLimiters(2, 4) // refills in 2 s
	l.clock = clk.now
	for _, k := range []string{"a", "b", "c"} {
		l.take(k)
	}
	clk.advance(time.Second)
	l.take("c")
	clk.advance(1500 * time.Millisecond) // a, b idle 2.5 s; c 1.5 s
	l.take("d")
	if n := l.len(); n != 2 {
		t.Errorf("%d keys after the sweep, want 2 (c, d)", n)
	}

	l = newLimiters(1, 1)
	l.clock = clk.now
	l.maxKeys = 2
	l.take("a")
	l.take("b")
	if ok, _, _ := l.take("c"); !ok {
		t.Errorf("the first key past the bound was refused")
	}
	if ok, _, _ := l.take("d"); ok {
		t.Errorf("keys past the bound do not share one bucket")
	}
	if n := l.len(); n != 3 {
		t.Errorf("%d keys, want the 2 of the bound and the shared one", n)
	}
}

func TestClientKey(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7":              "192.0.2.7",
		"2001:db8:1:2:3:4:5:6":   "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1":   "2001:db8:1:2::/64",
		"::ffff:192.0.2.7":       "192.0.2.7",
		"not an address":         "not an address",
		"2001:db8:1:3:0:0:0:1":   "2001:db8:1:3::/64",
		"2001:0db8:0001:0002::9": "2001:db8:1:2::/64",
	} {
		if got := ClientKey(in); got != want {
			t.Errorf("ClientKey(%q) = %q, want %q", in, got, want)
		}
	}
	for d, want := range map[time.Duration]string{0: "1", time.Millisecond: "1", time.Second: "1",
		1001 * time.Millisecond: "2", 10 * time.Second: "10"} {
		if got := retryAfter(d); got != want {
			t.Errorf("retryAfter(%v) = %s, want %s", d, got, want)
		}
	}
}

// TestRateLimitExemptMatchesSpec holds the server's exemptions and the
// spec's 429s to each other: an operation tagged operations is exempt and
// documents no 429, but the probes, which have their own limit and
// document it; every other one documents it (docs/gen fix 4).
func TestRateLimitExemptMatchesSpec(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(solitaire.OpenAPIYAML)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		route := path
		for strings.Contains(route, "{") { // {id} -> :id, as gin names it
			i, j := strings.Index(route, "{"), strings.Index(route, "}")
			route = route[:i] + ":" + route[i+1:j] + route[j+1:]
		}
		for method, op := range item.Operations() {
			ops := false
			for _, tag := range op.Tags {
				ops = ops || tag == "operations"
			}
			limited := op.Responses.Value("429") != nil
			probe := probeRoutes[route]
			if ops != (rateLimitExempt[route] || probe) || rateLimitExempt[route] == limited {
				t.Errorf("%s %s: tag operations %v, exempt %v, probe %v, documents 429 %v",
					method, path, ops, rateLimitExempt[route], probe, limited)
			}
			seen[route] = seen[route] || rateLimitExempt[route] || probe
		}
	}
	for route := range rateLimitExempt {
		if !seen[route] {
			t.Errorf("exempt route %s is not in the spec", route)
		}
	}
	for route := range probeRoutes {
		if !seen[route] || rateLimitExempt[route] {
			t.Errorf("probe route %s is not in the spec, or is also exempt", route)
		}
	}
}
