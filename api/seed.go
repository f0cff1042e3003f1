package api

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// MaxJSONSafeSeed is the largest seed a request may send as a JSON number:
// 2^53 − 1, the largest integer every JSON reader holds exactly (a
// JavaScript number is an IEEE 754 double, RFC 8259 §6). Larger seeds must
// be sent as decimal strings.
const MaxJSONSafeSeed = 1<<53 - 1

// Seed is a deal seed (RULES R6.1), 0..2^64−1. It is written as a decimal
// string ("9925980916699881289"), so that no client rounds it, and read from
// a decimal string of 1 to 20 digits or from a JSON integer up to
// MaxJSONSafeSeed. Anything else is a *badSeed, which the request decoder
// answers 400 invalid_body naming the field.
type Seed uint64

// badSeed is the error of a value that is no seed; the request decoder
// (describeJSONError) answers it 400 invalid_body with its detail.
type badSeed struct{ detail string }

func (e *badSeed) Error() string { return "api: seed " + e.detail }

// MarshalJSON writes the seed as a JSON string of decimal digits.
func (s Seed) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, s.String()), nil
}

// UnmarshalJSON reads a decimal string of 1 to 20 digits (at most
// 18446744073709551615) or a JSON integer from 0 to MaxJSONSafeSeed.
func (s *Seed) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		n, err := parseSeed(str)
		if err != nil {
			return &badSeed{"must be a decimal seed from 0 to 18446744073709551615 (1 to 20 digits)"}
		}
		*s = Seed(n)
		return nil
	}
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return &badSeed{"must be a decimal string (or a JSON number up to 2^53-1): neither a decimal string nor a number"}
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil || n > MaxJSONSafeSeed {
		return &badSeed{"as a JSON number must be a whole number from 0 to 2^53-1 (9007199254740991), the largest " +
			"a JSON number carries exactly; send the seed as a decimal string"}
	}
	*s = Seed(n)
	return nil
}

// parseSeed reads 1 to 20 decimal digits, no sign, at most 2^64−1.
func parseSeed(s string) (uint64, error) {
	if len(s) == 0 || len(s) > 20 {
		return 0, strconv.ErrSyntax
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, strconv.ErrSyntax
		}
	}
	return strconv.ParseUint(s, 10, 64)
}

// seedPtr is the seed of a response, nil for none.
func seedPtr(seed uint64) *Seed {
	s := Seed(seed)
	return &s
}

// String is the seed in decimal.
func (s Seed) String() string { return strconv.FormatUint(uint64(s), 10) }
