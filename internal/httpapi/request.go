package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// Paging of listings.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// decodeBody reads a JSON object into v. Unknown fields are refused, so a
// misspelt field is reported instead of ignored. An empty body is an
// empty object when optional is set.
func decodeBody(r *http.Request, v any, optional bool) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
			return errStatus(http.StatusUnsupportedMediaType, "the body must be JSON (Content-Type: application/json), not %q", ct)
		}
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if errors.Is(err, io.EOF) {
		if optional {
			return nil
		}
		return errStatus(http.StatusBadRequest, "the request needs a JSON body")
	}
	if err != nil {
		return bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errStatus(http.StatusBadRequest, "the body holds more than one JSON value")
	}
	return nil
}

// bodyError explains a JSON decoding error, naming the field at fault.
func bodyError(err error) error {
	var maxBytes *http.MaxBytesError
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &maxBytes):
		return err
	case errors.As(err, &syntax):
		return errStatus(http.StatusBadRequest, "the body is not valid JSON (at byte %d): %v", syntax.Offset, syntax)
	case errors.As(err, &typeErr) && typeErr.Field != "":
		want, ok := fieldKinds[typeErr.Field]
		if !ok {
			want = jsonKind(typeErr.Type.Kind().String())
		}
		return badField(typeErr.Field, "must be %s, not %s", want, jsonValue(typeErr.Value))
	case errors.As(err, &typeErr):
		return errStatus(http.StatusBadRequest, "the body must be a JSON object, not %s", typeErr.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errStatus(http.StatusBadRequest, "the body is not valid JSON: it ends too soon")
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name, _ := strconv.Unquote(field)
		return badField(name, "is not a field of this request")
	}
	return errStatus(http.StatusBadRequest, "the body is not valid JSON: %v", err)
}

// fieldKinds says what a field takes where its Go type alone says too
// little.
var fieldKinds = map[string]string{
	"timeout":    "a whole number of seconds",
	"max_cost":   "a number of dollars",
	"max_tokens": "a whole number of tokens",
}

// jsonValue names what a client sent, from an UnmarshalTypeError's Value
// ("string", "number 1.5", ...).
func jsonValue(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	switch v {
	case "string", "number":
		return "a " + v
	case "bool":
		return "a boolean"
	case "array", "object":
		return "an " + v
	}
	return v
}

// jsonKind names a Go kind as the JSON type a client should send.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "int", "int64":
		return "a whole number"
	case "float64":
		return "a number"
	}
	return "a " + kind
}

// queryInt reads an integer query parameter in [low, high], or def when
// it is absent.
func queryInt(r *http.Request, name string, def, low, high int) (int, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, badField(name, "must be a whole number, not %q", raw)
	}
	if n < low || n > high {
		return 0, badField(name, "must be between %d and %d, not %d", low, high, n)
	}
	return n, nil
}

// queryBool reads a boolean query parameter (absent: false).
func queryBool(r *http.Request, name string) (bool, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return false, badField(name, "must be true or false, not %q", raw)
	}
	return b, nil
}

// page reads limit and offset.
func page(r *http.Request) (limit, offset int, err error) {
	if limit, err = queryInt(r, "limit", DefaultLimit, 1, MaxLimit); err != nil {
		return 0, 0, err
	}
	if offset, err = queryInt(r, "offset", 0, 0, 1<<31-1); err != nil {
		return 0, 0, err
	}
	return limit, offset, nil
}

// required reports an empty string field.
func required(field, value, why string) error {
	if strings.TrimSpace(value) == "" {
		return badField(field, "is required: %s", why)
	}
	return nil
}
