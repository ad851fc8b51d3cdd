package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/superagents/superagents/internal/config"
)

// HTTPClient returns the client for a provider: the default transport with
// a limit on how long each attempt waits for the response headers (the
// body of a streaming response is not limited by it: the idle watchdog
// covers that), and error bodies made readable by the SDKs.
func HTTPClient(requestTimeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = requestTimeout
	return &http.Client{Transport: errorBodies{t}}
}

// WithErrorBodies returns a copy of c whose error bodies are made readable
// by the SDKs (see HTTPClient).
func WithErrorBodies(c *http.Client) *http.Client {
	copied := *c
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	copied.Transport = errorBodies{base}
	return &copied
}

// errorBodies rewrites the body of an error response into the shape both
// SDKs read, {"error": {"type": ..., "message": ...}}, when a compatible
// server answers otherwise: {"error": "text"} (Ollama, LM Studio),
// {"detail": ...} (servers built on FastAPI), or plain text. Without this
// the SDKs lose the server's message.
type errorBodies struct{ base http.RoundTripper }

func (t errorBodies) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode < 400 {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(ErrorBody(body)))
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return resp, nil
}

// ErrorBody returns an error body in the standard shape (see errorBodies).
func ErrorBody(body []byte) []byte {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Detail  json.RawMessage `json:"detail"`
		Message string          `json:"message"`
	}
	message := ""
	if json.Unmarshal(body, &v) == nil {
		var text string
		switch {
		case len(v.Error) > 0 && v.Error[0] == '{':
			return body // already standard
		case json.Unmarshal(v.Error, &text) == nil:
			message = text
		case json.Unmarshal(v.Detail, &text) == nil:
			message = text
		case len(v.Detail) > 0:
			message = string(v.Detail)
		default:
			message = v.Message
		}
	} else if text := strings.TrimSpace(string(body)); !strings.HasPrefix(text, "<") { // not an HTML error page
		message = text
	}
	if message == "" {
		return body
	}
	if r := []rune(message); len(r) > 500 {
		message = string(r[:500]) + "..."
	}
	out, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": "", "message": message}})
	return out
}

// Idle cancels a stream's context when no event arrives for a while.
type Idle struct {
	timer *time.Timer
	after time.Duration
}

// errIdle is the cancel cause of a stream that went silent.
var errIdle = errors.New("stream idle")

// WatchIdle returns a context that is cancelled when, once the first
// Touch has started the watch, Touch is not called again for after (0
// disables the watchdog), and a function that releases it. The watch
// starts with the response, so that waiting for headers (bounded by the
// request timeout) and the SDKs' waits between retries do not count.
func WatchIdle(ctx context.Context, after time.Duration) (context.Context, *Idle, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &Idle{after: after}
	if after > 0 {
		w.timer = time.AfterFunc(after, func() { cancel(errIdle) })
		w.timer.Stop()
	}
	return ctx, w, func() {
		if w.timer != nil {
			w.timer.Stop()
		}
		cancel(nil)
	}
}

// Touch records that the stream is alive (and starts the watch).
func (w *Idle) Touch() {
	if w.timer != nil {
		w.timer.Reset(w.after)
	}
}

// Call describes one provider call, to turn its failures into messages a
// person can act on, without secrets.
type Call struct {
	// Provider is the name shown at the start of every message ("anthropic",
	// "ollama", ...).
	Provider string
	// Secrets are strings that must never appear in a message (the API key).
	Secrets []string
	// RequestTimeout and IdleTimeout are the limits, named in messages.
	RequestTimeout, IdleTimeout time.Duration
}

// APIError formats an error the API itself returned.
func (c Call) APIError(status int, kind, message string) error {
	var b strings.Builder
	if status > 0 {
		b.WriteString(strings.TrimSpace(fmt.Sprintf("%d %s", status, http.StatusText(status))))
	}
	for _, s := range []string{kind, message} {
		if s = strings.TrimSpace(s); s != "" {
			if b.Len() > 0 {
				b.WriteString(": ")
			}
			b.WriteString(s)
		}
	}
	if b.Len() == 0 {
		b.WriteString("the API returned an error without a message")
	}
	return c.Errorf(nil, "%s", b.String())
}

// Errorf returns an error "provider: message", with every secret replaced,
// that wraps err (which may be nil).
func (c Call) Errorf(err error, format string, args ...any) error {
	msg := c.Provider + ": " + fmt.Sprintf(format, args...)
	for _, s := range c.Secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	return &Error{msg: msg, err: err}
}

// Failed explains why a call failed with err, before or during its stream.
// streamCtx is the context of the stream (see WatchIdle), ctx the caller's.
// started says whether any output had been received: a failure after that
// is never retried and the message says so.
func (c Call) Failed(ctx, streamCtx context.Context, err error, started bool) error {
	switch {
	case ctx.Err() != nil:
		return c.Errorf(ctx.Err(), "%v", ctx.Err())
	case streamCtx != nil && errors.Is(context.Cause(streamCtx), errIdle):
		return c.Errorf(ErrIdle, "no data from the model for %v (limits.stream_idle_timeout)", c.IdleTimeout)
	case isTimeout(err):
		return c.Errorf(ErrTimeout, "no response within %v (limits.request_timeout): %v", c.RequestTimeout, err)
	case started && isCut(err):
		return c.Errorf(ErrCut, "the response was cut off after it had begun (not retried): %v", err)
	case isCut(err):
		return c.Errorf(ErrCut, "the connection was closed before the response: %v", err)
	}
	return c.Errorf(err, "%v", err)
}

// Incomplete is the error of a stream that ended cleanly but without its
// final event.
func (c Call) Incomplete() error {
	return c.Errorf(ErrCut, "the response ended before it was complete (not retried)")
}

// Errors a failed call wraps, for errors.Is.
var (
	// ErrIdle: the stream went silent for longer than the idle limit.
	ErrIdle = errors.New("stream idle timeout")
	// ErrTimeout: the response did not start within the request timeout.
	ErrTimeout = errors.New("request timeout")
	// ErrCut: the connection closed before the response was complete.
	ErrCut = errors.New("response cut off")
)

// Error is a provider error whose message has been checked for secrets.
type Error struct {
	msg string
	err error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isCut(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) ||
		errors.Is(err, net.ErrClosed) || strings.Contains(fmt.Sprint(err), "connection reset")
}

// Retry runs attempt until it succeeds, up to 1+retries times. A failed
// attempt is tried again only when it produced no output (started is
// false) and the connection was cut (ErrCut): once output has reached the
// caller, repeating the request would repeat the output, so the error is
// returned instead. HTTP-level failures (429, 5xx, refused connections) are
// retried by the SDKs themselves, which honour Retry-After.
func Retry(ctx context.Context, retries int, attempt func() (started bool, err error)) error {
	for n := 0; ; n++ {
		started, err := attempt()
		if err == nil || started || n >= retries || !errors.Is(err, ErrCut) {
			return err
		}
		delay := time.Duration(500*(1<<min(n, 4))) * time.Millisecond
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return err
		case <-timer.C:
		}
	}
}

// Endpoint is what a network provider needs to reach its API.
type Endpoint struct {
	Name       string
	APIKey     string
	BaseURL    string
	Limits     config.Limits
	HTTPClient *http.Client
}

// Resolve fills in the provider's default name and base URL and the HTTP
// client, checks the limits, and returns the Call that explains failures.
func (e Endpoint) Resolve(name, baseURL string) (Endpoint, Call, error) {
	if e.Name == "" {
		e.Name = name
	}
	if e.BaseURL == "" {
		e.BaseURL = baseURL
	}
	if e.Limits.MaxRetries < 0 {
		return e, Call{}, fmt.Errorf("%s: negative max retries", e.Name)
	}
	if e.HTTPClient == nil {
		e.HTTPClient = HTTPClient(e.Limits.RequestTimeout.Duration)
	} else {
		e.HTTPClient = WithErrorBodies(e.HTTPClient)
	}
	return e, Call{
		Provider:       e.Name,
		Secrets:        []string{e.APIKey},
		RequestTimeout: e.Limits.RequestTimeout.Duration,
		IdleTimeout:    e.Limits.StreamIdleTimeout.Duration,
	}, nil
}
