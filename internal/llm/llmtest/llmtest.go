// Package llmtest runs fake model APIs on loopback for tests: the Anthropic
// Messages API, the OpenAI Chat Completions API and the OpenAI Responses
// API (responses.go), streaming (SSE) and not,
// in their real wire formats, so that the official SDKs can talk to them.
//
// Each test scripts its server with a queue of replies, or a function, and
// can inspect every request body the server received:
//
//	srv := llmtest.NewAnthropic(t)
//	srv.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read", Input: `{"path":"a.txt"}`}}})
//	srv.Push(llmtest.Reply{Text: "The file says hello."})
//	... point the client at srv.BaseURL() ...
//	reqs := srv.Requests()
//
// Replies can also fail in the ways real servers do: an HTTP error with
// Retry-After, a stream cut in the middle, a stalled stream, an error event.
package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// ToolCall is a tool call in a reply.
type ToolCall struct {
	// ID is the call id; empty gets "call_N" (OpenAI) or "toolu_N"
	// (Anthropic), numbered across the server's life.
	ID   string
	Name string
	// Input is the JSON object of arguments; empty means {}.
	Input string
	// Namespace is, in the Responses API, the namespace of a tool offered
	// in one (a "namespace" tool, as Codex 0.169.0 offers an MCP server's
	// tools), sent as the call's "namespace".
	Namespace string
}

// Usage is the token count a reply reports. A zero Usage is estimated from
// the sizes of the request and the reply.
type Usage struct {
	InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens int
}

// Fault is a way for a reply to fail part-way.
type Fault int

// Faults. The response starts normally (message start, role chunk...); the
// fault happens once FaultAfter content deltas (text, reasoning or tool
// argument pieces) have been written, before the next delta or the final
// events. FaultAfter 0 faults before any output.
const (
	NoFault Fault = iota
	// Cut drops the connection abruptly, as a network failure does.
	Cut
	// Stall stops sending and holds the connection open until the client
	// leaves.
	Stall
	// EndEarly ends the body cleanly but without the final events.
	EndEarly
	// ErrorEvent sends the API's in-stream error event (Anthropic:
	// overloaded_error) and ends the stream.
	ErrorEvent
)

// Reply is one scripted response.
type Reply struct {
	Text string
	// Reasoning is the model's visible reasoning: an Anthropic thinking
	// block (with Signature) or an OpenAI-compatible reasoning_content.
	Reasoning string
	Signature string
	ToolCalls []ToolCall
	Usage     Usage
	// StopReason is the wire value; empty derives it from the content
	// (Anthropic end_turn/tool_use, OpenAI stop/tool_calls).
	StopReason string
	// Deltas splits the text into this many pieces; 0 sends one per word.
	Deltas int
	// SharedIndex gives every OpenAI tool call delta index 0, as Ollama
	// does for parallel calls.
	SharedIndex bool

	// Status, when not 0 or 200, answers with that HTTP status and the
	// API's error body made of ErrorType and ErrorMessage.
	Status       int
	ErrorType    string
	ErrorMessage string
	// RetryAfter is sent as the Retry-After header.
	RetryAfter string
	// HeaderDelay holds the response headers back (or until the client
	// leaves).
	HeaderDelay time.Duration

	Fault      Fault
	FaultAfter int
}

// Request is a request the server received.
type Request struct {
	Method string
	Path   string
	// Received is when the server read the request.
	Received time.Time
	Header   http.Header
	Body     []byte
	// Stream is the body's "stream" flag.
	Stream bool

	seq int // 1 for the server's first request, and so on
}

// Decode decodes the JSON body into v.
func (r Request) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// JSON returns the body as a generic JSON object.
func (r Request) JSON() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// Server is a fake model API.
type Server struct {
	// URL is the server's root URL.
	URL string
	// APIKey, when set, is required: a request without it is refused with
	// 401, as the real APIs do.
	APIKey string
	// CacheMinTokens is the shortest prefix the prompt cache keeps (the
	// real APIs keep none under 1,024 tokens); 0 caches any prefix.
	CacheMinTokens int
	// WriteDelay holds back the answer of an Anthropic request that
	// writes to the prompt cache, as the prefill of a long prompt does:
	// what it writes is readable only once its answer begins. A request
	// takes the value in force when it writes (under mu).
	WriteDelay time.Duration
	// Clock is the cache's time (entries expire); nil is time.Now.
	Clock func() time.Time

	api  api
	t    testing.TB
	quit chan struct{}
	left chan struct{}

	mu       sync.Mutex
	queue    []Reply
	handler  func(Request) Reply
	requests []Request
	calls    int
	cache    promptCache
	writers  map[int]time.Duration // requests whose cache writes are not yet published: their WriteDelay, read when they wrote
	seq      int
}

// api is the wire format a server speaks.
type api interface {
	path() string
	authorized(h http.Header, key string) bool
	errorBody(status int, kind, message string) any
	response(s *Server, req Request, r Reply) any
	events(s *Server, req Request, r Reply) []event
	errorEvent() event
	// invalid returns the API's refusal of a body it cannot take, or "".
	invalid(body []byte) string
}

// event is one server-sent event; an empty name writes only a data line.
type event struct {
	name string
	data any
	// content marks a delta of output; final marks the events that end a
	// response. Faults happen before one of them.
	content, final bool
}

func newServer(t testing.TB, a api) *Server {
	t.Helper()
	s := &Server{api: a, t: t, quit: make(chan struct{}), left: make(chan struct{}, 64), writers: map[int]time.Duration{}}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = hs.URL
	// Cleanups run last-in first-out: release stalled handlers, then close.
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(s.quit) })
	return s
}

// Push queues replies, answered in order, one per request.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Handle sets the function that answers requests when the queue is empty.
func (s *Server) Handle(f func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = f
}

// Requests returns the requests received so far, oldest first (retries
// included).
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// WaitDisconnect waits until a stalled or delayed response sees its client
// close the connection.
func (s *Server) WaitDisconnect(ctx context.Context) error {
	select {
	case <-s.left:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("llmtest: the client did not close the connection: %w", ctx.Err())
	}
}

func (s *Server) record(req *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	req.seq = s.seq
	s.requests = append(s.requests, *req)
}

// next records req and returns its reply.
func (s *Server) next(req *Request) (Reply, bool) {
	s.record(req)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		return r, true
	}
	if s.handler != nil {
		return s.handler(*req), true
	}
	return Reply{}, false
}

// id returns a fresh id with the prefix.
func (s *Server) id(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return prefix + strconv.Itoa(s.calls)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != s.api.path() {
		writeJSON(w, http.StatusNotFound, s.api.errorBody(http.StatusNotFound, "not_found_error", "no route for "+r.Method+" "+r.URL.Path))
		return
	}
	var flags struct {
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &flags); err != nil {
		writeJSON(w, http.StatusBadRequest, s.api.errorBody(http.StatusBadRequest, "invalid_request_error", "the body is not JSON: "+err.Error()))
		return
	}
	req := Request{Received: time.Now(), Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Stream: flags.Stream}
	if s.APIKey != "" && !s.api.authorized(r.Header, s.APIKey) {
		s.record(&req) // the queue is not consumed
		writeJSON(w, http.StatusUnauthorized, s.api.errorBody(http.StatusUnauthorized, "authentication_error", "invalid API key"))
		return
	}
	if msg := s.api.invalid(body); msg != "" {
		s.record(&req) // the queue is not consumed
		writeJSON(w, http.StatusBadRequest, s.api.errorBody(http.StatusBadRequest, "invalid_request_error", msg))
		return
	}
	reply, ok := s.next(&req)
	if !ok {
		s.t.Errorf("llmtest: no reply queued for request %d to %s", len(s.Requests()), r.URL.Path)
		writeJSON(w, http.StatusInternalServerError, s.api.errorBody(http.StatusInternalServerError, "api_error", "llmtest: no reply queued"))
		return
	}
	if reply.HeaderDelay > 0 && !s.wait(r.Context(), reply.HeaderDelay) {
		return
	}
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	w.Header().Set("Request-Id", s.id("req_"))
	if reply.Status != 0 && reply.Status != http.StatusOK {
		writeJSON(w, reply.Status, s.api.errorBody(reply.Status, reply.ErrorType, reply.ErrorMessage))
		return
	}
	if !req.Stream {
		body := s.api.response(s, req, reply)
		if s.started(r.Context(), req) {
			writeJSON(w, http.StatusOK, body)
		}
		return
	}
	events := s.api.events(s, req, reply)
	if s.started(r.Context(), req) {
		s.stream(w, r, events, reply)
	}
}

// wait sleeps for d; it reports false if the client left or the server is
// closing first.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		s.clientLeft()
	case <-s.quit:
	}
	return false
}

// clientLeft records that a client closed its connection while the server
// was holding it.
func (s *Server) clientLeft() {
	select {
	case s.left <- struct{}{}:
	default: // nobody is waiting for that many
	}
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, events []event, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher := http.NewResponseController(w)
	_ = flusher.Flush()
	written := 0
	for _, e := range events {
		if reply.Fault != NoFault && written == reply.FaultAfter && (e.content || e.final) {
			s.fault(w, r, reply.Fault)
			return
		}
		if e.content {
			written++
		}
		writeEvent(w, e)
		if err := flusher.Flush(); err != nil {
			return
		}
	}
}

func (s *Server) fault(w http.ResponseWriter, r *http.Request, f Fault) {
	switch f {
	case Cut:
		// Abort without the final chunk: the client reads an unexpected EOF.
		panic(http.ErrAbortHandler)
	case Stall:
		select {
		case <-r.Context().Done():
			s.clientLeft()
		case <-s.quit:
		}
	case ErrorEvent:
		writeEvent(w, s.api.errorEvent())
		_ = http.NewResponseController(w).Flush()
	case EndEarly:
	}
}

func writeEvent(w io.Writer, e event) {
	data, err := json.Marshal(e.data)
	if raw, ok := e.data.(string); ok {
		data, err = []byte(raw), nil
	}
	if err != nil {
		panic(err) // the events are built by this package
	}
	if e.name != "" {
		fmt.Fprintf(w, "event: %s\n", e.name)
	}
	fmt.Fprintf(w, "data: %s\n\n", data)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// split cuts text into n pieces (one per word when n is 0), never inside
// a UTF-8 sequence.
func split(text string, n int) []string {
	if text == "" {
		return nil
	}
	if n <= 0 {
		var out []string
		for text != "" {
			i := strings.IndexByte(text, ' ')
			if i < 0 {
				return append(out, text)
			}
			out = append(out, text[:i+1])
			text = text[i+1:]
		}
		return out
	}
	runes := []rune(text)
	if n > len(runes) {
		n = len(runes)
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, string(runes[i*len(runes)/n:(i+1)*len(runes)/n]))
	}
	return out
}

// halves cuts s in two at a rune boundary, so that tool arguments arrive in
// more than one delta.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	i := len(s) / 2
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return []string{s[:i], s[i:]}
}

// input returns a tool call's arguments, {} when empty.
func (c ToolCall) input() string {
	if strings.TrimSpace(c.Input) == "" {
		return "{}"
	}
	return c.Input
}

// usage returns the reply's usage. When the reply gives none, the output
// is estimated from the reply's size and the input side comes from the
// server's prompt cache (see cache.go), which this call updates: call it
// once per request.
func (r Reply) usage(s *Server, req Request, cached func(Request) Usage) Usage {
	if r.Usage != (Usage{}) {
		return r.Usage
	}
	out := len(r.Text) + len(r.Reasoning)
	for _, c := range r.ToolCalls {
		out += len(c.Name) + len(c.Input)
	}
	u := cached(req)
	u.OutputTokens = out/4 + 1
	return u
}

// model returns the request's model, echoed in responses.
func model(req Request) string {
	var m struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(req.Body, &m)
	return m.Model
}

// rawJSON embeds a JSON text in an event as it is.
func rawJSON(s string) json.RawMessage {
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return json.RawMessage(b)
}

// compact returns JSON without insignificant spaces.
func compact(s string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return s
	}
	return b.String()
}
