package api

import (
	"strings"
	"testing"
)

// TestDecodeStrictNamesTheBadText checks that a string with a NUL
// anywhere in a body is refused with the path of its field: JSON names
// and array indexes joined by dots, map keys as they are, through
// pointers; a field not decoded from JSON ("-") does not count.
func TestDecodeStrictNamesTheBadText(t *testing.T) {
	type pile struct {
		Cards []string `json:"cards"`
	}
	type body struct {
		Name    string            `json:"name"`
		Plain   string            // no tag: its Go name
		Piles   []pile            `json:"piles,omitempty"`
		Tags    map[string]string `json:"tags"`
		Ptr     *pile             `json:"ptr"`
		Skipped string            `json:"-"`
	}
	for _, c := range []struct{ body, param string }{
		{`{"name":"a\u0000"}`, "name"},
		{`{"Plain":"\u0000"}`, "Plain"},
		{`{"piles":[{"cards":["AS"]},{"cards":["KH","x\u0000"]}]}`, "piles.1.cards.1"},
		{`{"tags":{"k":"v\u0000"}}`, "tags.k"},
		{`{"tags":{"k\u0000":"v"}}`, "tags.k\x00"},
		{`{"tags":{"":"v\u0000"}}`, "tags."}, // an empty key is a segment too
		{`{"ptr":{"cards":["\u0000"]}}`, "ptr.cards.0"},
	} {
		var b body
		err := decodeStrict([]byte(c.body), &b)
		re, ok := err.(*requestError)
		if !ok || re.status != 400 || re.param != c.param || !strings.Contains(re.detail, "without NUL") {
			t.Errorf("%s: got %#v, want a 400 naming %q", c.body, err, c.param)
		}
	}
	// An escaped backslash before "u0000" is text, not a NUL: the walk
	// runs (mayHoldBadText cannot tell) and finds nothing to refuse.
	var esc body
	if err := decodeStrict([]byte(`{"name":"a\\u0000"}`), &esc); err != nil || esc.Name != `a\u0000` {
		t.Errorf("escaped backslash: %v, name %q", err, esc.Name)
	}
	// A lone surrogate escape would decode to text that is not UTF-8:
	// the decoder refuses it, so the walk's skip may rely on that.
	var lone body
	if err := decodeStrict([]byte(`{"name":"\ud800"}`), &lone); err == nil {
		t.Errorf("a lone surrogate escape was taken: name %q", lone.Name)
	}
	b := body{Skipped: "\x00"} // set by the server, not the client
	if err := decodeStrict([]byte(`{"name":"ok","piles":[{"cards":["AS"]}],"tags":{"k":"v"},"ptr":{"cards":[]}}`), &b); err != nil {
		t.Errorf("good body: %v", err)
	}
}

// TestMayHoldBadText checks the test that spares good bodies badText's
// walk: it must say yes to every body whose decoded strings could hold a
// NUL or invalid UTF-8.
func TestMayHoldBadText(t *testing.T) {
	for _, c := range []struct {
		body string
		may  bool
	}{
		{`{"type":"draw"}`, false},
		{`{"type":"move","from":"tableau/1","to":"foundation"}`, false},
		{`{"name":"\u00e9\u20ac"}`, false}, // other escapes are fine
		{`{"name":"a\u0000"}`, true},
		{`{"name":"a\\u0000"}`, true},  // a false alarm: only costs the walk
		{"{\"name\":\"\xff\"}", true},  // not UTF-8
		{"{\"name\":\"a\x00\"}", true}, // a raw NUL (not JSON either)
	} {
		if got := mayHoldBadText([]byte(c.body)); got != c.may {
			t.Errorf("mayHoldBadText(%s) = %v, want %v", c.body, got, c.may)
		}
	}
}
