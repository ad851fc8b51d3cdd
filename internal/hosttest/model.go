package hosttest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/superagents/superagents/internal/llm/llmtest"
)

// Action is what a scripted model does with one request: say Text, or
// call Tool with Input (marshalled to JSON), or both.
type Action struct {
	Text  string
	Tool  string
	Input any
}

// Script decides a model's reply from the conversation a host sent it.
type Script func(Conv) Action

// HostModel is the scripted model a host talks to, on loopback, in the
// host's own wire format. Every request is recorded, so that a test can
// read what the host sent its model.
type HostModel struct {
	Wire Wire
	srv  *llmtest.Server
}

// NewHostModel starts a scripted model server speaking the wire.
func NewHostModel(t testing.TB, w Wire, script Script) *HostModel {
	t.Helper()
	var srv *llmtest.Server
	switch w {
	case Messages:
		srv = llmtest.NewAnthropic(t)
	case Responses:
		srv = llmtest.NewResponses(t)
	case ChatCompletions:
		srv = llmtest.NewOpenAI(t)
	default:
		t.Fatalf("hosttest: unknown wire %q", w)
	}
	srv.Handle(func(req llmtest.Request) llmtest.Reply {
		return replyOf(w, script(ParseConv(w, req)))
	})
	return &HostModel{Wire: w, srv: srv}
}

// replyOf is a script's action as a reply in the wire.
func replyOf(w Wire, a Action) llmtest.Reply {
	r := llmtest.Reply{Text: a.Text}
	if a.Tool != "" {
		in, err := json.Marshal(a.Input)
		if err != nil {
			panic(err) // the scripts' inputs are maps of plain values
		}
		call := llmtest.ToolCall{Name: a.Tool, Input: string(in)}
		if ns, name, ok := strings.Cut(a.Tool, NamespaceSep); ok && w == Responses {
			call.Namespace, call.Name = ns, name
		}
		r.ToolCalls = []llmtest.ToolCall{call}
	}
	if r.Text == "" && len(r.ToolCalls) == 0 {
		r.Text = "OK."
	}
	return r
}

// BaseURL is the URL a host is given: the root for Anthropic, root +
// "/v1" for OpenAI's APIs.
func (m *HostModel) BaseURL() string {
	if m.Wire == Messages {
		return m.srv.URL
	}
	return m.srv.URL + "/v1"
}

// Convs returns every request the host sent its model, oldest first.
func (m *HostModel) Convs() []Conv {
	var out []Conv
	for _, r := range m.srv.Requests() {
		out = append(out, ParseConv(m.Wire, r))
	}
	return out
}

// Find returns the first request, from the index from on, for which ok
// holds, and its index; -1 when none does.
func (m *HostModel) Find(from int, ok func(Conv) bool) (Conv, int) {
	convs := m.Convs()
	for i := from; i < len(convs); i++ {
		if ok(convs[i]) {
			return convs[i], i
		}
	}
	return Conv{}, -1
}

// Dump is the conversations the host sent its model, trimmed, for a
// failure message: the items of each conversation's newest request (which
// holds the earlier ones), one a line.
func (m *HostModel) Dump() string {
	var b strings.Builder
	convs := m.Convs()
	for i, c := range convs {
		if i+1 < len(convs) && len(convs[i+1].Items) > len(c.Items) {
			continue // the next request goes on with this conversation
		}
		b.WriteString("request " + itoa(i) + " (" + c.Req.Path + ", " + itoa(len(c.Tools)) + " tools):\n")
		for _, it := range c.Items {
			name := ""
			if it.Name != "" {
				name = " " + it.Name
			}
			b.WriteString("  " + it.Kind + name + ": " + Trim(it.Text, 600) + "\n")
		}
	}
	return b.String()
}

// Trim shortens s to about n bytes, keeping its start and end, and shows
// line breaks as \n.
func Trim(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) <= n {
		return s
	}
	return s[:n*2/3] + " … " + s[len(s)-n/3:]
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// SubModel is the model superagents' own sub-agents talk to: a fake
// Anthropic Messages API behind a gate. Its script answers with
// "SAW:<fact>" for each of the facts its request holds ("SAW:nothing" when
// none), so that a test learns what the sub-agent was given, unless the
// test gives it a script of its own (Script). While held, requests wait at
// the gate: a task stays running until Release.
type SubModel struct {
	URL string
	// Key is the API key the server requires.
	Key string
	srv *llmtest.Server

	mu      sync.Mutex
	gate    chan struct{}
	waiting int
	facts   []string
	script  Script
}

// NewSubModel starts a sub-agent model that looks for the facts.
func NewSubModel(t testing.TB, facts ...string) *SubModel {
	t.Helper()
	m := &SubModel{Key: "sub-agent-key", srv: llmtest.NewAnthropic(t), facts: facts}
	m.srv.APIKey = m.Key
	m.srv.Handle(func(req llmtest.Request) llmtest.Reply {
		m.mu.Lock()
		script := m.script
		m.mu.Unlock()
		if script != nil {
			if a := script(ParseConv(Messages, req)); a.Text != "" || a.Tool != "" {
				return replyOf(Messages, a)
			}
		}
		body := string(req.Body)
		var saw []string
		for _, f := range m.facts {
			if strings.Contains(body, f) {
				saw = append(saw, "SAW:"+f)
			}
		}
		if len(saw) == 0 {
			saw = []string{"SAW:nothing"}
		}
		return llmtest.Reply{Text: strings.Join(saw, " ")}
	})
	target, _ := url.Parse(m.srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !m.pass(r.Context()) {
			http.Error(w, "the test ended", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	t.Cleanup(m.Release)
	m.URL = front.URL
	return m
}

// Hold makes the next requests wait until Release.
func (m *SubModel) Hold() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gate == nil {
		m.gate = make(chan struct{})
	}
}

// Release lets the waiting requests, and all later ones, through.
func (m *SubModel) Release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.gate != nil {
		close(m.gate)
		m.gate = nil
	}
}

// Waiting reports how many requests have waited at the gate.
func (m *SubModel) Waiting() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.waiting
}

// pass waits at the gate, if one is up; false when the client left first.
func (m *SubModel) pass(ctx context.Context) bool {
	m.mu.Lock()
	gate := m.gate
	m.mu.Unlock()
	if gate == nil {
		return true
	}
	m.mu.Lock()
	m.waiting++
	m.mu.Unlock()
	select {
	case <-gate:
		return true
	case <-ctx.Done():
		return false
	}
}

// Script makes the sub-agents' model answer with s from now on: each
// request read as a conversation (the sub-agents speak Anthropic's
// Messages API), which s answers with text or a tool call, so that a
// test scripts a sub-agent's steps (bash, superagents_ask) as it scripts
// a host's model. A request s answers with a zero Action gets the
// facts' answer ("SAW:...").
func (m *SubModel) Script(s Script) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.script = s
}

// Convs returns the sub-agents' requests, read as conversations, oldest
// first (held ones only once let through).
func (m *SubModel) Convs() []Conv {
	var out []Conv
	for _, r := range m.srv.Requests() {
		out = append(out, ParseConv(Messages, r))
	}
	return out
}

// Requests returns the request bodies the sub-agents sent, oldest first
// (held ones only once let through).
func (m *SubModel) Requests() []string {
	var out []string
	for _, r := range m.srv.Requests() {
		out = append(out, string(r.Body))
	}
	return out
}
