package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// readJSON reads the request body (readBody) and decodes it strictly into
// v (decodeStrict). Errors: readBody's and decodeStrict's.
func (s *server) readJSON(c *gin.Context, v any) error {
	body, err := s.readBody(c)
	if err != nil {
		return err
	}
	return decodeStrict(body, v)
}

// invalidBody is the 400 invalid_body problem of a body whose field param
// is missing or wrong, detail saying why.
func invalidBody(param, detail string) *requestError {
	return &requestError{status: http.StatusBadRequest, code: CodeInvalidBody, param: param, detail: detail}
}

// readBody reads the whole request body, at most MaxBodyBytes (413
// beyond). A Content-Type, if sent, must be application/json (415).
func (s *server) readBody(c *gin.Context) ([]byte, error) {
	if ct := c.GetHeader("Content-Type"); ct != "" && ct != mimeJSON { // the usual value needs no parsing
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != mimeJSON {
			return nil, &requestError{status: http.StatusUnsupportedMediaType, code: CodeUnsupportedMedia,
				param: "Content-Type", detail: "send the body as application/json"}
		}
	}
	b, err := io.ReadAll(c.Request.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, err
	}
	if err != nil {
		return nil, badBody("the request body could not be read")
	}
	return b, nil
}

// strictOptions are decodeStrict's: made once, not per request.
var strictOptions = jsonv2.JoinOptions(jsonv2.RejectUnknownMembers(true),
	jsonv2.MatchCaseInsensitiveNames(false), jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false))

// decodeStrict decodes body, which must be exactly one JSON object, into
// dst (a pointer to a struct) with the Go team's encoding/json/v2 (the
// github.com/go-json-experiment/json mirror: this Go has it only behind
// GOEXPERIMENT=jsonv2). Member names match case-sensitively; a duplicate
// name (RFC 8259 §4 leaves their meaning open), an unknown or
// differently-cased name, invalid UTF-8, a wrong type and trailing data
// are 400 invalid_body problems that say what is wrong, in the client's
// terms. Every decoded string must be text either database keeps (no NUL,
// validText), so no request reaches the store with one.
func decodeStrict(body []byte, dst any) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return badBody("the request body is empty; send a JSON object")
	}
	if trimmed[0] != '{' {
		return badBody("the request body must be a JSON object")
	}
	err := jsonv2.Unmarshal(body, dst, strictOptions)
	if err != nil {
		return describeJSONError(err)
	}
	if !mayHoldBadText(body) {
		return nil
	}
	if field, ok := badText(reflect.ValueOf(dst)); !ok {
		e := badBody(fmt.Sprintf("field %q must be text without NUL characters", field))
		e.(*requestError).param = field
		return e
	}
	return nil
}

// nulEscape is the one way a JSON text can put a NUL into a string: a
// raw control character inside a string is not JSON (RFC 8259 §7), and
// the decoder refuses it.
var nulEscape = []byte(`\u0000`)

// mayHoldBadText reports whether a body the decoder accepted may have
// put a string that is not validText into its value: only if it holds the
// escape \u0000, a raw NUL byte or bytes that are not UTF-8 (the decoder
// refuses the last two as well; they are checked here so as not to depend
// on it). A body that passes skips badText's reflective walk (most bodies;
// a move's saves about half a microsecond). A false alarm (an escaped
// backslash before "u0000") only costs the walk. This holds while every
// string of a request type comes from a JSON string's own text: a type
// whose UnmarshalJSON or UnmarshalText builds a string by decoding
// something else (base64, hex, %-escapes) needs the walk every time.
func mayHoldBadText(body []byte) bool {
	return bytes.Contains(body, nulEscape) || bytes.IndexByte(body, 0) >= 0 || !utf8.Valid(body)
}

// badText finds a string in v that is not validText and returns its
// field path (JSON names joined by dots, array indexes as numbers). The
// path's segments are collected only for the string found, innermost
// first, and joined at the end: a body that passes costs no string
// building.
func badText(v reflect.Value) (string, bool) {
	segs, ok := badTextSegments(v)
	if ok {
		return "", true
	}
	path := ""
	for i := len(segs) - 1; i >= 0; i-- {
		path = join(path, segs[i])
	}
	return path, false
}

// badTextSegments is badText's walk: the segments of the bad string's
// path, innermost first.
func badTextSegments(v reflect.Value) ([]string, bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, true
		}
		return badTextSegments(v.Elem())
	case reflect.String:
		return nil, validText(v.String())
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if segs, ok := badTextSegments(v.Index(i)); !ok {
				return append(segs, strconv.Itoa(i)), false
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			k := fmt.Sprint(it.Key().Interface())
			if !validText(k) {
				return []string{k}, false
			}
			if segs, ok := badTextSegments(it.Value()); !ok {
				return append(segs, k), false
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",") // Tag.Get does not allocate
			if name == "-" {                                  // not decoded from the body
				continue
			}
			if segs, ok := badTextSegments(v.Field(i)); !ok {
				if name == "" {
					name = f.Name
				}
				return append(segs, name), false
			}
		}
	}
	return nil, true
}

// join is a field path: parent.name, or name at the top.
func join(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// describeJSONError turns a decoding error into a 400 problem whose detail
// names the field (param) and what is wrong with it.
func describeJSONError(err error) error {
	var (
		syntax   *jsontext.SyntacticError
		semantic *jsonv2.SemanticError
	)
	switch {
	case errors.As(err, &syntax):
		field := pointerPath(syntax.JSONPointer)
		switch {
		case errors.Is(err, jsontext.ErrDuplicateName):
			return withParam(badBody(fmt.Sprintf("field %q appears twice; send each field once", field)), field)
		case syntax.Err != nil && strings.Contains(syntax.Err.Error(), "invalid UTF-8"): // the package exports no error value for it
			return withParam(badBody(fmt.Sprintf("field %q is not valid UTF-8", field)), field)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return badBody("malformed JSON: the body ends too early")
		}
		if strings.Contains(syntax.Error(), "after top-level value") {
			return badBody("unexpected data after the JSON object")
		}
		return badBody(fmt.Sprintf("malformed JSON at byte %d", syntax.ByteOffset))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badBody("malformed JSON: the body ends too early")
	case errors.As(err, &semantic):
		field := pointerPath(semantic.JSONPointer)
		if errors.Is(err, jsonv2.ErrUnknownName) {
			detail := fmt.Sprintf("unknown field %q", field)
			if known := knownName(semantic.GoType, semantic.JSONPointer.LastToken()); known != "" {
				detail += fmt.Sprintf("; names are case-sensitive: did you mean %q?", known)
			}
			return withParam(badBody(detail), field)
		}
		if field == "" {
			return badBody("the request body is not a JSON object of the expected shape")
		}
		if bad, ok := errors.AsType[*badSeed](err); ok { // seed.go says what a seed must be
			return withParam(badBody(fmt.Sprintf("field %q %s", field, bad.detail)), field)
		}
		what := "a JSON " + semantic.JSONKind.String()
		if semantic.JSONKind == 0 {
			what = "this value"
		}
		if semantic.GoType != nil {
			return withParam(badBody(fmt.Sprintf("field %q must be %s, not %s", field, jsonKind(semantic.GoType), what)), field)
		}
		return withParam(badBody(fmt.Sprintf("field %q has a value that is not allowed here", field)), field)
	}
	return badBody("the request body is not valid JSON for this request")
}

// withParam sets a requestError's param.
func withParam(err error, param string) error {
	err.(*requestError).param = param
	return err
}

// pointerPath is a JSON Pointer (RFC 6901) as a dotted field path.
func pointerPath(p jsontext.Pointer) string {
	var parts []string
	for tok := range p.Tokens() {
		parts = append(parts, tok)
	}
	return strings.Join(parts, ".")
}

// knownName is the JSON name of a field of struct type t that equals name
// but for case, "" if none.
func knownName(t reflect.Type, name string) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct || name == "" {
		return ""
	}
	for i := range t.NumField() {
		n, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if n != "" && n != "-" && n != name && strings.EqualFold(n, name) {
			return n
		}
	}
	return ""
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}
