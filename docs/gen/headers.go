package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// The response fields middleware sets (fix 9), declared once as
// components.headers and referred to from the responses that carry them.
const (
	// requestIDHeader is on every response (api.RequestIDHeader).
	requestIDHeader = "X-Request-Id"
	// rateLimitHeader and rateLimitPolicyHeader are on every response of a
	// rate-limited operation, one that lists a 429 (api.RateLimitHeader,
	// api.RateLimitPolicyHeader; README "Limits").
	rateLimitHeader       = "RateLimit"
	rateLimitPolicyHeader = "RateLimit-Policy"
	// wwwAuthenticateHeader is on every 401 (api's auth, RFC 6750 §3).
	wwwAuthenticateHeader = "WWW-Authenticate"
	// replayedHeader is on an answer that api's idempotent sends again for
	// a retry with the same Idempotency-Key (idempotencyKeyParam): one of
	// the answers it keeps, a success, 400, 422 or 409.
	replayedHeader      = "Idempotent-Replayed"
	idempotencyKeyParam = "Idempotency-Key"
	// requestIDPattern is what the server sends: the request's own id when
	// it is 1 to 128 characters of these, else 32 hex digits of its own.
	requestIDPattern = "^[A-Za-z0-9._-]{1,128}$"
)

// responseHeaders is fix 9: it adds the components X-Request-Id, RateLimit,
// RateLimit-Policy, WWW-Authenticate and Idempotent-Replayed to
// components.headers and refers to the first from every response, the
// next two from every response of an operation that lists a 429 (run
// after commonResponses, which adds those 429s), WWW-Authenticate from
// every 401, and Idempotent-Replayed from each answer that may be a replay
// (2xx, 400, 409, 422) of an operation that takes an Idempotency-Key. A
// component response gets them as the operations that refer to it do; one
// referred to by limited and unlimited operations alike is an error.
func responseHeaders(doc *openapi3.T) error {
	if doc.Components.Headers == nil {
		doc.Components.Headers = openapi3.Headers{}
	}
	header := func(desc string, required bool, schema *openapi3.Schema) *openapi3.HeaderRef {
		return &openapi3.HeaderRef{Value: &openapi3.Header{Parameter: openapi3.Parameter{
			Description: desc, Required: required, Schema: schema.NewRef()}}}
	}
	requestID := openapi3.NewStringSchema().WithPattern(requestIDPattern)
	requestID.Example = "3f2b6c1e9a0d4e5f8a7b6c5d4e3f2a1b"
	doc.Components.Headers[requestIDHeader] = header("the request's id, also in a problem's request_id and in the "+
		"server's log: the request's own X-Request-Id when it is 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' and "+
		"'-', else one the server makes (32 hex digits)", true, requestID)
	limit := openapi3.NewStringSchema()
	limit.Example = `"requests";r=57;t=1`
	doc.Components.Headers[rateLimitHeader] = header("for each rate limit bucket the request spent from, what is "+
		"left (draft-ietf-httpapi-ratelimit-headers-10, a Structured Field list): r requests may be sent now, and "+
		"the bucket is full again in t seconds; absent when the server runs without rate limits (README \"Limits\")",
		false, limit)
	policy := openapi3.NewStringSchema()
	policy.Example = `"requests";q=100;w=2`
	doc.Components.Headers[rateLimitPolicyHeader] = header("for each rate limit bucket the request spent from, its "+
		"quota (draft-ietf-httpapi-ratelimit-headers-10, a Structured Field list): q requests per w seconds, the "+
		"burst and the time an empty bucket takes to fill; absent when the server runs without rate limits "+
		"(README \"Limits\")", false, policy)
	challenge := openapi3.NewStringSchema()
	challenge.Example = `Bearer realm="solitaire", error="invalid_token"`
	doc.Components.Headers[wwwAuthenticateHeader] = header(`the bearer challenge (RFC 6750 §3): Bearer `+
		`realm="solitaire", with error="invalid_token" when the token sent is not one the server knows`, true, challenge)
	replayed := openapi3.NewStringSchema().WithEnum("true")
	doc.Components.Headers[replayedHeader] = header("true when this answer is a replay: the answer kept for an earlier "+
		"request with the same Idempotency-Key and the same method, path and body, sent again without running the "+
		"request (kept for 24 hours: successes, 400, 422 and 409 illegal_move)", false, replayed)
	ref := func(name string) *openapi3.HeaderRef {
		return &openapi3.HeaderRef{Ref: "#/components/headers/" + name, Value: doc.Components.Headers[name].Value}
	}
	add := func(r *openapi3.Response, status string, limited, idempotent bool) {
		if r.Headers == nil {
			r.Headers = openapi3.Headers{}
		}
		names := []string{requestIDHeader}
		if limited {
			names = append(names, rateLimitHeader, rateLimitPolicyHeader)
		}
		if status == "401" {
			names = append(names, wwwAuthenticateHeader)
		}
		if idempotent && (status[0] == '2' || status == "400" || status == "409" || status == "422") {
			names = append(names, replayedHeader)
		}
		for _, name := range names {
			r.Headers[name] = ref(name)
		}
	}
	// Component responses: limited or not, as every operation that refers
	// to them.
	shared := map[string]map[bool]bool{}
	for _, path := range doc.Paths.InMatchingOrder() {
		for _, op := range doc.Paths.Value(path).Operations() {
			limited := op.Responses.Value("429") != nil
			idempotent := false
			for _, p := range op.Parameters {
				idempotent = idempotent || p.Value != nil && p.Value.In == "header" && p.Value.Name == idempotencyKeyParam
			}
			for status, r := range op.Responses.Map() {
				if r.Ref != "" {
					if status == "401" {
						return fmt.Errorf("response headers: a 401 that is a component (%s)", r.Ref)
					}
					if shared[r.Ref] == nil {
						shared[r.Ref] = map[bool]bool{}
					}
					shared[r.Ref][limited] = true
					continue
				}
				add(r.Value, status, limited, idempotent)
			}
		}
	}
	refs := make([]string, 0, len(shared))
	for r := range shared {
		refs = append(refs, r)
	}
	sort.Strings(refs)
	for _, r := range refs {
		if len(shared[r]) != 1 {
			return fmt.Errorf("response headers: %s is referred to by rate-limited operations and by others", r)
		}
		name, ok := strings.CutPrefix(r, "#/components/responses/")
		c := doc.Components.Responses[name]
		if !ok || c == nil || c.Value == nil {
			return fmt.Errorf("response headers: %s is not a component", r)
		}
		add(c.Value, "", shared[r][true], false)
	}
	return nil
}
