package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/events"
	"github.com/superagents/superagents/internal/httpapi"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/stacktest"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/internal/tasktools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testToken = "test-token-0123456789abcdef"

// harness runs the real thing on loopback: a SQLite store in a temporary
// directory, the engine with its built-in tools, the event bus, the task
// manager and the HTTP server on a real listener; the model is the
// Anthropic SDK talking to a fake server scripted by script below.
type harness struct {
	t     testing.TB
	dir   string
	ws    string
	model *llmtest.Server
	cfg   config.Config

	stack  *stacktest.Stack
	store  *sqlite.Store
	eng    *engine.Engine
	bus    *events.Bus
	mgr    *tasks.Manager
	url    string
	host   string // host:port of the listener
	client *http.Client

	stop     context.CancelFunc
	served   chan error
	serveErr error
	shutDown bool

	opts     httpapi.Options // extra options for the server
	storeOps []sqlite.Option
	closed   bool
}

type option func(*harness)

func withServer(f func(*httpapi.Options)) option { return func(h *harness) { f(&h.opts) } }
func withLimits(f func(*config.Tasks)) option    { return func(h *harness) { f(&h.cfg.Tasks) } }
func withStore(o ...sqlite.Option) option {
	return func(h *harness) { h.storeOps = append(h.storeOps, o...) }
}

func newHarness(t testing.TB, opts ...option) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), ws: t.TempDir(), model: llmtest.NewAnthropic(t)}
	h.model.Handle(script)
	h.cfg = stacktest.Config(t, h.ws, h.model.BaseURL())
	for _, o := range opts {
		o(h)
	}
	h.start()
	t.Cleanup(h.close)
	return h
}

// start opens the store and everything on it and serves on a new port.
func (h *harness) start() {
	t := h.t
	t.Helper()
	ctx := context.Background()
	stack := stacktest.Open(t, h.dir, h.ws, h.cfg, h.storeOps...)
	st, eng, bus, mgr := stack.Store, stack.Engine, stack.Bus, stack.Tasks
	opts := h.opts
	opts.Runtime, opts.Version = stack.Runtime, "test"
	if opts.Token == "" {
		opts.Token = testToken
	}
	srv, err := httpapi.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveCtx, stop := context.WithCancel(ctx)
	h.served = make(chan error, 1)
	go func() { h.served <- srv.Serve(serveCtx, ln) }()
	h.stack, h.store, h.eng, h.bus, h.mgr, h.stop = stack, st, eng, bus, mgr, stop
	h.host = ln.Addr().String()
	h.url = "http://" + h.host
	h.client = &http.Client{Transport: &http.Transport{}}
	h.closed, h.shutDown = false, false
}

// shutdown stops the server gracefully and returns what Serve returned.
func (h *harness) shutdown() error {
	if !h.shutDown {
		h.shutDown = true
		h.stop()
		h.serveErr = <-h.served
	}
	return h.serveErr
}

// close stops the server, then the manager (running tasks end as
// interrupted), the bus, the engine and the store.
func (h *harness) close() {
	if h.closed {
		return
	}
	h.closed = true
	if err := h.shutdown(); err != nil {
		h.t.Errorf("serve: %v", err)
	}
	h.client.CloseIdleConnections()
	if err := h.stack.Close(); err != nil {
		h.t.Errorf("close: %v", err)
	}
}

// restart closes everything and starts again on the same data.
func (h *harness) restart() {
	h.close()
	h.start()
}

// response is an API answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

// decode decodes the body into v.
func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// object decodes the body as a JSON object.
func (r response) object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.decode(t, &m)
	return m
}

// request sends a request with the token; body is JSON-encoded unless it
// is a string (sent as is) or nil.
func (h *harness) request(method, path string, body any, headers ...string) response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		} else if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	res, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: data}
}

// ok sends a request that must answer with status want, and decodes it.
func (h *harness) ok(want int, method, path string, body any, into any) response {
	h.t.Helper()
	r := h.request(method, path, body)
	if r.status != want {
		h.t.Fatalf("%s %s = %d %s; want %d", method, path, r.status, r.body, want)
	}
	if into != nil {
		r.decode(h.t, into)
	}
	return r
}

// session creates a root session through the API.
func (h *harness) session() sa.Session {
	h.t.Helper()
	var s sa.Session
	h.ok(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"agent": "general", "title": "test"}, &s)
	return s
}

// launch launches a task through the API.
func (h *harness) launch(session, description, prompt string) sa.Task {
	h.t.Helper()
	var task sa.Task
	h.ok(http.StatusCreated, "POST", "/v1/tasks", map[string]any{"session_id": session, "agent": "general",
		"description": description, "prompt": prompt}, &task)
	return task
}

// waitTask waits until a task has ended.
func (h *harness) waitTask(id string) sa.Task {
	h.t.Helper()
	return h.stack.WaitTask(h.t, id)
}

// toolStarted waits until a running task has started a tool call (a
// gated task is then in its gate), and returns it.
func (h *harness) toolStarted(id string) sa.Task {
	h.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var task sa.Task
		h.ok(http.StatusOK, "GET", "/v1/tasks/"+id, nil, &task)
		switch {
		case task.Progress.ToolCalls > 0:
			return task
		case !task.Status.Active():
			h.t.Fatalf("task %s ended %s before calling a tool", id, task.Status)
		case time.Now().After(deadline):
			h.t.Fatalf("task %s called no tool within a minute", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// cursor follows the change log from its newest change in the store
// (the bus may not have read the latest yet).
func (h *harness) cursor() *events.Cursor {
	h.t.Helper()
	last, err := h.store.LastChangeID(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return h.bus.From(last)
}

// turnEnded waits until the server's turn in a session has ended, and
// returns its state.
func (h *harness) turnEnded(session string) runtime.TurnState {
	h.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var got struct{ Turn runtime.TurnState }
		h.ok(http.StatusOK, "GET", "/v1/sessions/"+session, nil, &got)
		if got.Turn.Status != "running" {
			return got.Turn
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the turn of session %s still runs after a minute", session)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitFor follows the change log until cond holds for a change, or fails
// after a minute.
func (h *harness) waitFor(what string, cursor *events.Cursor, cond func(sa.Change) bool) sa.Change {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ch, err := cursor.NextMatching(ctx, cond)
	if err != nil {
		h.t.Fatalf("waiting for %s: %v", what, err)
	}
	return ch
}

// gate is a file a scripted tool call waits for: tasks that run into one
// stay running until the test opens it.
type gate string

func (h *harness) gate(name string) gate { return gate(filepath.Join(h.ws, name)) }

func (g gate) open(t testing.TB) {
	t.Helper()
	if err := os.WriteFile(string(g), []byte("open"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Prompts the scripted model understands (the last user message):
//
//	quick: X      answers "answer: X"
//	gate: PATH    runs bash that waits until PATH exists, then answers "passed PATH"
//	launch: N     calls superagents_task N times (quick children), then answers "launched N"
//	launch: N gate PATH   the same with children that wait for the gate
//	launch: P1 | P2 ...   calls superagents_task once per prompt
//	fail          answers with an HTTP 400 from the API
//	ask: Q        asks its user Q (superagents_ask), then answers "passed " and what the tool said
//	ask: Q | C1, C2   the same with choices
//
// A notification (a task ended) is answered "noted"; a message sent to a
// running task, "steered: " and its text.
func script(req llmtest.Request) llmtest.Reply {
	turn := lastTurn(req)
	switch {
	case turn.toolOutput != "":
		if strings.HasPrefix(turn.user, "launch:") {
			return llmtest.Reply{Text: "launched " + strings.TrimSpace(strings.TrimPrefix(turn.user, "launch:"))}
		}
		return llmtest.Reply{Text: "passed " + strings.TrimSpace(turn.toolOutput)}
	case strings.HasPrefix(turn.user, "quick:"):
		return llmtest.Reply{Text: "answer: " + strings.TrimSpace(strings.TrimPrefix(turn.user, "quick:"))}
	case strings.HasPrefix(turn.user, "gate:"):
		path := strings.TrimSpace(strings.TrimPrefix(turn.user, "gate:"))
		cmd := fmt.Sprintf("while [ ! -e %q ]; do sleep 0.05; done; echo %q", path, filepath.Base(path))
		return llmtest.Reply{Text: "Waiting for the gate.", ToolCalls: []llmtest.ToolCall{stacktest.ToolCall("bash", map[string]any{"command": cmd})}}
	case strings.HasPrefix(turn.user, "launch:"):
		var calls []llmtest.ToolCall
		for i, prompt := range childPrompts(strings.TrimPrefix(turn.user, "launch:")) {
			calls = append(calls, stacktest.ToolCall(sa.TaskTool, map[string]any{"description": fmt.Sprintf("child %d", i+1),
				"prompt": prompt, "agent": "general"}))
		}
		return llmtest.Reply{ToolCalls: calls}
	case strings.HasPrefix(turn.user, "[Message from "):
		_, text, _ := strings.Cut(turn.user, "\n\n")
		return llmtest.Reply{Text: "steered: " + text}
	case strings.HasPrefix(turn.user, "ask:"):
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{stacktest.ToolCall(tasktools.AskToolName, askInput(turn.user))}}
	case turn.user == "fail":
		return llmtest.Reply{Status: http.StatusBadRequest, ErrorType: "invalid_request_error", ErrorMessage: "scripted failure"}
	case strings.Contains(strings.ToLower(turn.user), "background task"):
		return llmtest.Reply{Text: "noted"}
	}
	return llmtest.Reply{Text: "ok"}
}

// askInput reads "ask: QUESTION | CHOICE, CHOICE" as superagents_ask's
// input.
func askInput(prompt string) map[string]any {
	question, choices, ok := strings.Cut(strings.TrimPrefix(prompt, "ask:"), "|")
	in := map[string]any{"question": strings.TrimSpace(question)}
	if ok {
		var list []string
		for c := range strings.SplitSeq(choices, ",") {
			list = append(list, strings.TrimSpace(c))
		}
		in["choices"] = list
	}
	return in
}

// childPrompts reads what follows "launch:": "N" quick children, "N gate
// PATH" children waiting for the gate, or prompts "P1 | P2 | ...", one
// child each.
func childPrompts(spec string) []string {
	if strings.Contains(spec, "|") {
		var prompts []string
		for p := range strings.SplitSeq(spec, "|") {
			prompts = append(prompts, strings.TrimSpace(p))
		}
		return prompts
	}
	var n int
	var gatePath string
	fmt.Sscanf(spec, "%d gate %s", &n, &gatePath)
	prompts := make([]string, n)
	for i := range prompts {
		prompts[i] = fmt.Sprintf("quick: child %d", i+1)
		if gatePath != "" {
			prompts[i] = "gate: " + gatePath
		}
	}
	return prompts
}

// turnFacts is what the script reads from an Anthropic request.
type turnFacts struct {
	user       string // the text of the last user message with text
	toolOutput string // the last tool result, when the request ends with one
}

func lastTurn(req llmtest.Request) turnFacts {
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type    string          `json:"type"`
				Text    string          `json:"text"`
				Content json.RawMessage `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	var f turnFacts
	if err := req.Decode(&body); err != nil {
		return f
	}
	for i, m := range body.Messages {
		for _, c := range m.Content {
			switch {
			case c.Type == "text" && m.Role == "user":
				f.user, f.toolOutput = c.Text, ""
			case c.Type == "tool_result" && i == len(body.Messages)-1:
				var s string
				if json.Unmarshal(c.Content, &s) != nil {
					var parts []struct{ Text string }
					_ = json.Unmarshal(c.Content, &parts)
					for _, p := range parts {
						s += p.Text
					}
				}
				f.toolOutput = s + " "
			}
		}
	}
	return f
}

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	id    string
	name  string
	data  string
	hasID bool
}

// stream is an open event stream.
type stream struct {
	res    *http.Response
	events chan sseEvent
	done   chan error
	once   sync.Once
}

// events opens GET /v1/events, resuming after lastID when it is set.
func (h *harness) events(lastID string) *stream {
	h.t.Helper()
	req, err := http.NewRequest("GET", h.url+"/v1/events", nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		h.t.Fatalf("GET /v1/events = %d %s", res.StatusCode, data)
	}
	s := &stream{res: res, events: make(chan sseEvent, 4096), done: make(chan error, 1)}
	go s.read()
	h.t.Cleanup(s.close)
	return s
}

// read parses the stream as the SSE specification says.
func (s *stream) read() {
	defer close(s.events)
	buf := make([]byte, 0, 64<<10)
	var ev sseEvent
	var data []string
	r := newLineReader(s.res.Body, buf)
	for {
		line, err := r.line()
		if err != nil {
			s.done <- err
			return
		}
		if line == "" {
			if len(data) > 0 {
				ev.data = strings.Join(data, "\n")
				s.events <- ev
			}
			ev, data = sseEvent{}, nil
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.id, ev.hasID = value, true
		case "event":
			ev.name = value
		case "data":
			data = append(data, value)
		}
	}
}

// next returns the next event, or fails after a minute.
func (s *stream) next(t testing.TB) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatalf("event stream ended: %v", <-s.done)
		}
		return ev
	case <-time.After(time.Minute):
		t.Fatal("no event within a minute")
	}
	return sseEvent{}
}

func (s *stream) close() {
	s.once.Do(func() {
		s.res.Body.Close()
		for range s.events { // let the reader finish
		}
	})
}

// ended reports whether the server ended the stream (it waits for it).
func (s *stream) ended(t testing.TB) error {
	t.Helper()
	for {
		select {
		case _, ok := <-s.events:
			if !ok {
				return <-s.done
			}
		case <-time.After(time.Minute):
			t.Fatal("the event stream did not end within a minute")
			return nil
		}
	}
}

// lineReader splits a body into lines ending in \n, \r\n or \r.
type lineReader struct {
	r   io.Reader
	buf []byte
}

func newLineReader(r io.Reader, buf []byte) *lineReader { return &lineReader{r: r, buf: buf} }

func (l *lineReader) line() (string, error) {
	for {
		if i := bytes.IndexAny(l.buf, "\r\n"); i >= 0 {
			line := string(l.buf[:i])
			n := i + 1
			if l.buf[i] == '\r' && n < len(l.buf) && l.buf[n] == '\n' {
				n++
			}
			l.buf = l.buf[n:]
			return line, nil
		}
		chunk := make([]byte, 32<<10)
		n, err := l.r.Read(chunk)
		l.buf = append(l.buf, chunk[:n]...)
		if err != nil {
			if errors.Is(err, io.EOF) && n > 0 {
				continue
			}
			return "", err
		}
	}
}
