// Package pgurl handles PostgreSQL connection URLs (postgres://user:pass@
// host:port/database?params, libpq's URI form) for the tools that create
// throwaway databases: the test helper persistence/pgtest and the
// benchmark cmd/solitaire-load. Standard library only.
package pgurl

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
)

// Redact is u with its password, if any, replaced by "xxxxx"
// (url.URL.Redacted), for messages and logs; "(unparsable URL)" for u
// that does not parse.
func Redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}

// WithDatabase is u with its database (the path) replaced by name.
// Errors: u is not a postgres:// or postgresql:// URL.
func WithDatabase(u, name string) (string, error) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "postgres" && p.Scheme != "postgresql") {
		return "", fmt.Errorf("%s is not a postgres:// URL", Redact(u))
	}
	p.Path, p.RawPath = "/"+name, ""
	return p.String(), nil
}

// RandomName is prefix followed by 2n random lower-case hex digits
// (crypto/rand): a database name no other run picks.
func RandomName(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return prefix + hex.EncodeToString(b)
}
