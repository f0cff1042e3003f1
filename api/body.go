package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"

	"github.com/gin-gonic/gin"
)

// readBody reads the whole request body, at most MaxBodyBytes (413
// beyond). A Content-Type, if sent, must be application/json (415).
func (s *server) readBody(c *gin.Context) ([]byte, error) {
	if ct := c.GetHeader("Content-Type"); ct != "" {
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

// decodeStrict decodes body, which must be exactly one JSON object, into
// dst (a pointer to a struct): unknown fields, wrong types and trailing
// data are 400 problems that say what is wrong, in the client's terms.
func decodeStrict(body []byte, dst any) error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return badBody("the request body is empty; send a JSON object")
	}
	if trimmed[0] != '{' {
		return badBody("the request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return describeJSONError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badBody("unexpected data after the JSON object")
	}
	return nil
}

func describeJSONError(err error) error {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syntax):
		return badBody(fmt.Sprintf("malformed JSON at byte %d", syntax.Offset))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badBody("malformed JSON: the body ends too early")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return badBody(fmt.Sprintf("a JSON %s is not allowed here", typ.Value))
		}
		e := badBody(fmt.Sprintf("field %q must be %s, not a JSON %s", field, jsonKind(typ.Type), typ.Value))
		e.(*requestError).param = field
		return e
	}
	// encoding/json has no typed error for an unknown field.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		e := badBody("unknown field " + name)
		e.(*requestError).param = strings.Trim(name, `"`)
		return e
	}
	return badBody("the request body is not valid JSON for this request")
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
