package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
)

// SuiteKey is the API key the suite gives providers; it must never appear
// in an error.
const SuiteKey = "sk-suite-0123456789abcdef"

// Suite is the behaviour every network provider shares, run against the
// fake server of the API it speaks.
type Suite struct {
	// Name is the provider name its errors start with.
	Name string
	// NewServer starts the fake API (NewAnthropic or NewOpenAI).
	NewServer func(testing.TB) *Server
	// NewProvider returns the provider under test.
	NewProvider func(t *testing.T, baseURL, apiKey string, limits config.Limits) superagents.Provider
}

// SuiteLimits are the limits the suite starts from: generous timeouts, two
// retries.
func SuiteLimits() config.Limits {
	return config.Limits{
		RequestTimeout:    config.Duration{Duration: 10 * time.Second},
		StreamIdleTimeout: config.Duration{Duration: 10 * time.Second},
		MaxRetries:        2,
	}
}

// Run runs every case as a subtest.
func (s Suite) Run(t *testing.T) {
	t.Run("text", s.text)
	t.Run("parallel tool calls", s.toolCalls)
	t.Run("failures", s.failures)
	t.Run("retry after", s.retryAfter)
	t.Run("key never in errors", s.keyNeverInErrors)
	t.Run("cancel closes the connection", s.cancel)
	t.Run("stopping the iteration closes the connection", s.breakLoop)
	t.Run("invalid requests", s.invalid)
	t.Run("connection refused", s.refused)
	t.Run("error bodies of compatible servers", s.oddErrorBodies)
}

func (s Suite) provider(t *testing.T, srv *Server, l config.Limits) superagents.Provider {
	return s.NewProvider(t, srv.BaseURL(), SuiteKey, l)
}

func (s Suite) text(t *testing.T) {
	srv := s.NewServer(t)
	srv.APIKey = SuiteKey
	srv.Push(Reply{Text: "2+2 equals 4, as everyone knows.", Usage: Usage{InputTokens: 12, OutputTokens: 9}})
	got, err := Collect(t.Context(), s.provider(t, srv, SuiteLimits()), UserRequest("model-x", "What is 2+2?"))
	if err != nil {
		t.Fatal(err)
	}
	if got.Text() != "2+2 equals 4, as everyone knows." {
		t.Errorf("text = %q", got.Text())
	}
	if n := got.Count(superagents.EventTextDelta); n < 3 {
		t.Errorf("%d text deltas: the answer should stream in pieces", n)
	}
	if u := got.Usage(); u.InputTokens != 12 || u.OutputTokens != 9 {
		t.Errorf("usage = %+v", u)
	}
	if got.Stop() != superagents.StopEndTurn {
		t.Errorf("stop = %q, last event %+v", got.Stop(), got[len(got)-1])
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !reqs[0].Stream {
		t.Fatalf("%d requests; want one streaming request", len(reqs))
	}
	if m := reqs[0].JSON()["model"]; m != "model-x" {
		t.Errorf("model sent = %v", m)
	}
}

func (s Suite) toolCalls(t *testing.T) {
	srv := s.NewServer(t)
	srv.Push(Reply{
		Text: "Reading both.",
		ToolCalls: []ToolCall{
			{ID: "call_a", Name: "read", Input: `{"path": "a.txt"}`},
			{ID: "call_b", Name: "read", Input: `{"path": "b.txt"}`},
			{ID: "call_c", Name: "list"},
		},
	})
	got, err := Collect(t.Context(), s.provider(t, srv, SuiteLimits()), UserRequest("m", "read a and b"))
	if err != nil {
		t.Fatal(err)
	}
	want := []superagents.Part{
		{Type: superagents.PartToolCall, CallID: "call_a", Name: "read", Input: json.RawMessage(`{"path":"a.txt"}`)},
		{Type: superagents.PartToolCall, CallID: "call_b", Name: "read", Input: json.RawMessage(`{"path":"b.txt"}`)},
		{Type: superagents.PartToolCall, CallID: "call_c", Name: "list", Input: json.RawMessage(`{}`)},
	}
	if diff := cmp.Diff(want, got.ToolCalls()); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if got.Text() != "Reading both." || got.Stop() != superagents.StopToolUse {
		t.Errorf("text %q, stop %q", got.Text(), got.Stop())
	}
}

func (s Suite) failures(t *testing.T) {
	name := s.Name + ": "
	tests := []struct {
		name     string
		replies  []Reply
		limits   func(*config.Limits)
		wantErr  []string // substrings; none means success
		requests int
		wantText string
	}{
		{
			name:     "500 is retried",
			replies:  []Reply{{Status: 500}, {Text: "recovered"}},
			requests: 2, wantText: "recovered",
		},
		{
			name:     "503 after the retries are spent",
			replies:  []Reply{{Status: 503, ErrorMessage: "Service overloaded, try later"}},
			limits:   func(l *config.Limits) { l.MaxRetries = 0 },
			wantErr:  []string{name + "503 Service Unavailable", "Service overloaded, try later"},
			requests: 1,
		},
		{
			name:     "the API's message reaches the user",
			replies:  []Reply{{Status: 400, ErrorMessage: "messages.0.content: Input should be a valid list"}},
			wantErr:  []string{name + "400 Bad Request", "messages.0.content: Input should be a valid list"},
			requests: 1,
		},
		{
			name:     "429 with its message",
			replies:  []Reply{{Status: 429, RetryAfter: "0", ErrorMessage: "Rate limit reached for requests"}},
			limits:   func(l *config.Limits) { l.MaxRetries = 0 },
			wantErr:  []string{name + "429 Too Many Requests", "Rate limit reached for requests"},
			requests: 1,
		},
		{
			name:     "a cut before any output is retried",
			replies:  []Reply{{Text: "lost", Fault: Cut}, {Text: "second try"}},
			requests: 2, wantText: "second try",
		},
		{
			name:     "a cut after output began is not retried",
			replies:  []Reply{{Text: "one two three four", Fault: Cut, FaultAfter: 2}, {Text: "must not be used"}},
			wantErr:  []string{name + "the response was cut off after it had begun (not retried)"},
			requests: 1, wantText: "one two ",
		},
		{
			name:     "a stream that ends without its final event",
			replies:  []Reply{{Text: "half", Fault: EndEarly, FaultAfter: 1}},
			wantErr:  []string{name + "the response ended before it was complete"},
			requests: 1, wantText: "half",
		},
		{
			name:     "an error event inside the stream",
			replies:  []Reply{{Text: "partial answer", Fault: ErrorEvent, FaultAfter: 1}},
			wantErr:  []string{name, "Overloaded"},
			requests: 1, wantText: "partial ",
		},
		{
			name:     "a stalled stream hits the idle timeout",
			replies:  []Reply{{Text: "one two three", Fault: Stall, FaultAfter: 1}},
			limits:   func(l *config.Limits) { l.StreamIdleTimeout.Duration = 500 * time.Millisecond },
			wantErr:  []string{name + "no data from the model for 500ms (limits.stream_idle_timeout)"},
			requests: 1, wantText: "one ",
		},
		{
			name:     "a slow start is not an idle stream",
			replies:  []Reply{{Text: "late but fine", HeaderDelay: 1500 * time.Millisecond}},
			limits:   func(l *config.Limits) { l.StreamIdleTimeout.Duration = 500 * time.Millisecond },
			requests: 1, wantText: "late but fine",
		},
		{
			name:     "headers that never come hit the request timeout",
			replies:  []Reply{{Text: "late", HeaderDelay: time.Minute}},
			limits:   func(l *config.Limits) { l.RequestTimeout.Duration = 100 * time.Millisecond; l.MaxRetries = 0 },
			wantErr:  []string{name + "no response within 100ms (limits.request_timeout)"},
			requests: 1,
		},
		{
			name:     "invalid tool arguments from the model",
			replies:  []Reply{{ToolCalls: []ToolCall{{ID: "call_1", Name: "read", Input: `{"path": `}}}},
			wantErr:  []string{name + `the model sent invalid JSON arguments for tool "read" (call call_1)`},
			requests: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := s.NewServer(t)
			srv.Push(tt.replies...)
			l := SuiteLimits()
			if tt.limits != nil {
				tt.limits(&l)
			}
			got, err := Collect(t.Context(), s.provider(t, srv, l), UserRequest("m", "hi"))
			if len(tt.wantErr) == 0 && err != nil {
				t.Fatalf("error: %v", err)
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error = %v, want it to contain %q", err, w)
				}
			}
			if err != nil && strings.Contains(err.Error(), SuiteKey) {
				t.Errorf("the error shows the API key: %v", err)
			}
			if n := len(srv.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			if got.Text() != tt.wantText {
				t.Errorf("text = %q, want %q", got.Text(), tt.wantText)
			}
			if err == nil && got.Stop() == "" {
				t.Errorf("the stream did not end with a stop event")
			}
		})
	}
}

// retryAfter checks the wait between the attempts the server saw. It only
// asserts a lower bound: a slow machine makes the gap longer, never
// shorter. Without the header the SDKs wait at most 0.5s before the first
// retry, so a gap of 1s or more shows the header was honoured.
func (s Suite) retryAfter(t *testing.T) {
	srv := s.NewServer(t)
	srv.Push(Reply{Status: 429, RetryAfter: "1", ErrorMessage: "slow down"}, Reply{Text: "ok"})
	got, err := Collect(t.Context(), s.provider(t, srv, SuiteLimits()), UserRequest("m", "hi"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if got.Text() != "ok" || len(reqs) != 2 {
		t.Fatalf("text %q after %d requests", got.Text(), len(reqs))
	}
	if gap := reqs[1].Received.Sub(reqs[0].Received); gap < time.Second {
		t.Errorf("the retry came %v after the 429, before its Retry-After of 1s", gap)
	}
}

func (s Suite) keyNeverInErrors(t *testing.T) {
	srv := s.NewServer(t)
	srv.APIKey = "the-right-key"
	l := SuiteLimits()
	l.MaxRetries = 0
	_, err := Collect(t.Context(), s.provider(t, srv, l), UserRequest("m", "hi"))
	if err == nil || !strings.Contains(err.Error(), "401 Unauthorized") || !strings.Contains(err.Error(), "invalid API key") {
		t.Fatalf("error = %v, want the 401 and its message", err)
	}
	// A server that echoes the key it was sent must not leak it through us.
	srv.APIKey = ""
	srv.Push(Reply{Status: 400, ErrorMessage: "bad key " + SuiteKey})
	_, err = Collect(t.Context(), s.provider(t, srv, l), UserRequest("m", "hi"))
	if err == nil || strings.Contains(err.Error(), SuiteKey) || !strings.Contains(err.Error(), "bad key [redacted]") {
		t.Fatalf("error = %v", err)
	}
}

func (s Suite) cancel(t *testing.T) {
	srv := s.NewServer(t)
	srv.Push(Reply{Text: "one two three", Fault: Stall, FaultAfter: 1})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var err error
	var text string
	for e, e2 := range s.provider(t, srv, SuiteLimits()).Stream(ctx, UserRequest("m", "hi")) {
		if e2 != nil {
			err = e2
			break
		}
		text += e.Text
		cancel() // after the first delta, while the server holds the stream
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if text != "one " {
		t.Errorf("text = %q", text)
	}
	waitDisconnect(t, srv)
}

func (s Suite) breakLoop(t *testing.T) {
	srv := s.NewServer(t)
	srv.Push(Reply{Text: "one two three", Fault: Stall, FaultAfter: 1})
	for range s.provider(t, srv, SuiteLimits()).Stream(t.Context(), UserRequest("m", "hi")) {
		break
	}
	waitDisconnect(t, srv)
}

func waitDisconnect(t *testing.T, srv *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := srv.WaitDisconnect(ctx); err != nil {
		t.Fatal(err)
	}
}

func (s Suite) invalid(t *testing.T) {
	srv := s.NewServer(t)
	p := s.provider(t, srv, SuiteLimits())
	withTool := UserRequest("m", "x")
	withTool.Tools = []superagents.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`[1]`)}}
	tests := []struct {
		name string
		req  superagents.ModelRequest
		want string
	}{
		{"no messages", superagents.ModelRequest{Model: "m"}, "no message for the model"},
		{"only a fork record", superagents.ModelRequest{Model: "m", Messages: []superagents.Message{{Role: superagents.RoleUser, Kind: superagents.KindFork, Parts: []superagents.Part{superagents.TextPart("x")}}}}, "no message for the model"},
		{"no model", superagents.ModelRequest{Messages: UserRequest("", "x").Messages}, "no model name"},
		{"bad schema", withTool, `tool "t": input schema is not a JSON object`},
		{"tool without a name", superagents.ModelRequest{Model: "m", Messages: UserRequest("", "x").Messages, Tools: []superagents.ToolSpec{{}}}, "a tool has no name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Collect(t.Context(), p, tt.req)
			if !errors.Is(err, superagents.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want ErrInvalid with %q", err, tt.want)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
}

func (s Suite) refused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	lim := SuiteLimits()
	lim.MaxRetries = 0
	p := s.NewProvider(t, "http://127.0.0.1:"+strconv.Itoa(port)+"/v1", SuiteKey, lim)
	_, err = Collect(t.Context(), p, UserRequest("m", "hi"))
	if err == nil || !strings.HasPrefix(err.Error(), s.Name+": ") || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("error = %v, want a connection refused error from %s", err, s.Name)
	}
}

// oddErrorBodies: compatible servers and proxies answer errors in their
// own shapes; the status and their message must still reach the user.
func (s Suite) oddErrorBodies(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"error":"model \"qwen9\" not found, try pulling it first"}`, `404 Not Found: model "qwen9" not found, try pulling it first`},
		{`{"detail":"Not Found"}`, "404 Not Found: Not Found"},
		{`{"detail":[{"loc":["body","model"],"msg":"field required"}]}`, `404 Not Found: [{"loc":["body","model"],"msg":"field required"}]`},
		{"upstream connect error", "404 Not Found: upstream connect error"},
		{"<html><body>nginx</body></html>", "404 Not Found"},
	}
	for _, tt := range tests {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, tt.body)
		}))
		l := SuiteLimits()
		l.MaxRetries = 0
		_, err := Collect(t.Context(), s.NewProvider(t, srv.URL+"/v1", SuiteKey, l), UserRequest("m", "hi"))
		srv.Close()
		if err == nil || !strings.HasPrefix(err.Error(), s.Name+": "+tt.want) || strings.Contains(err.Error(), "nginx") {
			t.Errorf("body %s: error = %v, want %q", tt.body, err, tt.want)
		}
	}
}
