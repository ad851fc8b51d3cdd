package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasktools"
)

// errorBody is every error response: a sentence for a person, the HTTP
// status again for programs that only see the body, and, where it
// helps, the request field at fault or the ids an ambiguous prefix
// matches.
type errorBody struct {
	Error      string   `json:"error"`
	Status     int      `json:"status"`
	Field      string   `json:"field,omitempty"`
	Candidates []string `json:"candidates,omitempty"`
}

// fieldError is a bad request field: which one and why. It wraps err
// when the field's value was refused by something else (an id prefix
// that is too short or matches nothing), which then decides the status.
type fieldError struct {
	field string
	msg   string
	err   error
}

func (e *fieldError) Error() string {
	if e.err != nil {
		return e.field + ": " + e.err.Error()
	}
	return e.field + ": " + e.msg
}

// Is makes a field error of its own an ErrInvalid for callers that test
// for it; a wrapped error answers for itself.
func (e *fieldError) Is(target error) bool { return e.err == nil && target == sa.ErrInvalid }

func (e *fieldError) Unwrap() error { return e.err }

func badField(field, format string, args ...any) error {
	return &fieldError{field: field, msg: fmt.Sprintf(format, args...)}
}

// inField names the request field whose value err refuses; errors of
// the server's own (5xx) and nil are returned as they are.
func inField(field string, err error) error {
	if err == nil || statusOf(err) >= 500 {
		return err
	}
	return &fieldError{field: field, err: err}
}

// statusError is an error with its HTTP status decided already.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string { return e.msg }

func errStatus(status int, format string, args ...any) error {
	return &statusError{status: status, msg: fmt.Sprintf(format, args...)}
}

// errTurnRunning: a session already runs a turn.
var errTurnRunning = runtime.ErrTurnRunning

// statusOf maps an error to its HTTP status: the caller's mistakes are
// 4xx, with the domain's errors in their natural place.
func statusOf(err error) int {
	var se *statusError
	var maxBytes *http.MaxBytesError
	switch {
	case errors.As(err, &se):
		return se.status
	case errors.As(err, &maxBytes):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errTurnRunning), errors.Is(err, sa.ErrConflict):
		return http.StatusConflict
	case errors.Is(err, sa.ErrLimit):
		return http.StatusTooManyRequests
	case errors.Is(err, sa.ErrExpired):
		return http.StatusGone
	case errors.Is(err, sa.ErrInvalid), errors.Is(err, sa.ErrUnknownAgent), isModelError(err):
		return http.StatusBadRequest
	case errors.Is(err, sa.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, sa.ErrClosed):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// isModelError reports whether err is about a model string: malformed,
// of an unknown provider, or of a provider without its key.
func isModelError(err error) bool {
	return errors.Is(err, config.ErrInvalidModel) || errors.Is(err, config.ErrUnknownProvider) || errors.Is(err, llm.ErrNoAPIKey)
}

// fail answers a request with the JSON error err calls for.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	body := errorBody{Error: tasktools.Message(err), Status: status}
	var fe *fieldError
	var tf *sa.FieldError
	var re *runtime.RequestError
	switch {
	case errors.As(err, &fe):
		body.Field = fe.field
	case errors.As(err, &tf):
		body.Field = tf.Field
	case errors.As(err, &re):
		body.Field = re.Field
	}
	switch {
	case errors.Is(err, sa.ErrUnknownAgent):
		body.Field = "agent"
	case isModelError(err):
		body.Field = "model"
	}
	var amb *sa.AmbiguousIDError
	if errors.As(err, &amb) {
		body.Candidates = amb.Candidates
	}
	if status == http.StatusRequestEntityTooLarge {
		body.Error = fmt.Sprintf("the request body is larger than %d bytes", s.maxBody)
	}
	if status >= 500 {
		s.log.ErrorContext(r.Context(), "request failed", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("error", err))
	}
	writeJSON(w, status, body)
}

// writeError answers with a JSON error of that status.
func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, errorBody{Error: fmt.Sprintf(format, args...), Status: status})
}

// writeJSON answers with v as JSON. Characters like < stay as they are:
// the answer is served as JSON (nosniff), never as HTML.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		_ = enc.Encode(errorBody{Error: "encode the response: " + err.Error(), Status: status})
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
