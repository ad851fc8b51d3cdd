package tasks_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/events"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/stacktest"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/internal/tasktools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness is the whole engine for real: a SQLite store, a workspace with
// the built-in tools, the engine, the event bus and the task manager, with
// the Anthropic SDK talking to a fake server each test scripts.
type harness struct {
	t       testing.TB
	dir     string // data directory
	ws      string
	stack   *stacktest.Stack
	store   *sqlite.Store
	eng     *engine.Engine
	bus     *events.Bus
	mgr     *tasks.Manager
	tools   *tasktools.Tools
	srv     *llmtest.Server
	cfg     config.Config
	limits  config.Tasks
	closeMu sync.Mutex
	closed  bool
}

type option func(*harness)

func withLimits(f func(*config.Tasks)) option { return func(h *harness) { f(&h.limits) } }

func withFork(f func(*config.Config)) option { return func(h *harness) { f(&h.cfg) } }

// withServerURL points the agents' model at another fake server.
func withServerURL(url string) option {
	return func(h *harness) { h.cfg = stacktest.Config(h.t, h.ws, url) }
}

// withModel runs every agent on another model (e.g. "offline").
func withModel(model string) option { return func(h *harness) { h.cfg.Model = model } }

func newHarness(t testing.TB, handle func(req llmtest.Request) llmtest.Reply, opts ...option) *harness {
	t.Helper()
	h := &harness{t: t, dir: t.TempDir(), ws: t.TempDir(), srv: llmtest.NewAnthropic(t)}
	h.srv.Handle(handle)
	h.cfg = stacktest.Config(t, h.ws, h.srv.BaseURL())
	h.limits = h.cfg.Tasks
	for _, o := range opts {
		o(h)
	}
	h.cfg.Tasks = h.limits
	h.open()
	t.Cleanup(h.close)
	return h
}

// open starts (or, after close, restarts) everything on the same data.
func (h *harness) open() {
	t := h.t
	t.Helper()
	h.stack = stacktest.Open(t, h.dir, h.ws, h.cfg)
	st, eng, bus, mgr := h.stack.Store, h.stack.Engine, h.stack.Bus, h.stack.Tasks
	h.store, h.eng, h.bus, h.mgr, h.tools = st, eng, bus, mgr, h.stack.Tools
	h.closeMu.Lock()
	h.closed = false
	h.closeMu.Unlock()
}

func (h *harness) close() {
	h.closeMu.Lock()
	defer h.closeMu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	if err := h.stack.Close(); err != nil {
		h.t.Errorf("close: %v", err)
	}
}

// parent makes a top-level session with a short conversation.
func (h *harness) parent(msgs ...sa.Message) sa.Session {
	h.t.Helper()
	s, err := h.store.CreateSession(context.Background(), sa.NewSession{Agent: "general", Messages: msgs})
	if err != nil {
		h.t.Fatal(err)
	}
	return s
}

func (h *harness) launch(parent string, req tasks.LaunchRequest) sa.Task {
	h.t.Helper()
	req.ParentSessionID = parent
	if req.Description == "" {
		req.Description = "a task"
	}
	if req.Agent == "" {
		req.Agent = "general"
	}
	if req.Prompt == "" {
		req.Prompt = "do the work"
	}
	t, err := h.mgr.Launch(context.Background(), req)
	if err != nil {
		h.t.Fatalf("Launch: %v", err)
	}
	return t
}

// wait blocks until the task is no longer active and returns it.
func (h *harness) wait(id string) sa.Task {
	h.t.Helper()
	// A wait that stops early for a question of the task goes on.
	for deadline := time.Now().Add(60 * time.Second); ; {
		out, err := h.mgr.Output(context.Background(), id, true, time.Until(deadline))
		if err != nil {
			h.t.Fatal(err)
		}
		if out.TimedOut || (out.Task.Status.Active() && time.Now().After(deadline)) {
			h.t.Fatalf("task %s did not end within 60s: %+v", id, out.Task)
		}
		if !out.Task.Status.Active() {
			return out.Task
		}
	}
}

// notifications returns the notification messages of a session.
func (h *harness) notifications(session string) []sa.Message {
	h.t.Helper()
	hist, err := h.store.History(context.Background(), session)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []sa.Message
	for _, m := range hist {
		if m.Kind == sa.KindNotification {
			out = append(out, m)
		}
	}
	return out
}

// requestFacts reads what a test needs from an Anthropic request body.
type requestFacts struct {
	System   string   // all system blocks joined
	Texts    []string // every text block of every message, in order
	LastUser string   // the text of the last user message
	LastTool string   // the output of the newest tool_result, if the last message holds one
	LastName string   // the name of the tool that result answers
	Tools    []string // the tool names offered
}

func facts(t testing.TB, req llmtest.Request) requestFacts {
	var body struct {
		System []struct {
			Text string `json:"text"`
		} `json:"system"`
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				ToolUseID string          `json:"tool_use_id"`
				Content   json.RawMessage `json:"content"`
			} `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := req.Decode(&body); err != nil {
		t.Errorf("decode request: %v", err)
		return requestFacts{}
	}
	var f requestFacts
	var sys []string
	for _, s := range body.System {
		sys = append(sys, s.Text)
	}
	f.System = strings.Join(sys, "\n")
	names := map[string]string{}
	for i, m := range body.Messages {
		for _, c := range m.Content {
			switch c.Type {
			case "text":
				f.Texts = append(f.Texts, c.Text)
				if m.Role == "user" {
					f.LastUser = c.Text
				}
			case "tool_use":
				names[c.ID] = c.Name
			case "tool_result":
				if i == len(body.Messages)-1 {
					var s string
					if json.Unmarshal(c.Content, &s) != nil {
						var parts []struct{ Text string }
						_ = json.Unmarshal(c.Content, &parts)
						if len(parts) > 0 {
							s = parts[0].Text
						}
					}
					f.LastTool, f.LastName = s, names[c.ToolUseID]
				}
			}
		}
	}
	for _, tool := range body.Tools {
		f.Tools = append(f.Tools, tool.Name)
	}
	return f
}

// isChild tells a forked or plain task's request from the parent's: the
// parent's sessions here always start with "parent:".
func (f requestFacts) isChild() bool {
	return len(f.Texts) == 0 || !strings.HasPrefix(f.Texts[0], "parent:")
}

func user(text string) sa.Message {
	return sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(text)}}
}

func assistant(text string) sa.Message {
	return sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{sa.TextPart(text)}}
}

func toolCall(name string, input any) llmtest.ToolCall {
	raw, _ := json.Marshal(input)
	return llmtest.ToolCall{Name: name, Input: string(raw)}
}
