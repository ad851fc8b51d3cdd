//lint:file-ignore SA1019 the clients of these tests set log levels, as hosts do

package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/golden"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/mcpserver"
)

var toolNames = []string{"superagents_cancel", "superagents_clear", "superagents_list", "superagents_output", "superagents_send", "superagents_task"}

// TestInitializeAndTools checks the handshake and that the five tools are
// offered with the manager's descriptions and the schemas of the same
// input structs its own agents get.
func TestInitializeAndTools(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newHarness(t, fakeModel)
			c := h.connect(transport, "probe", "0.1")
			init := c.cs.InitializeResult()
			if init.ProtocolVersion != "2025-11-25" {
				t.Errorf("protocol version %q", init.ProtocolVersion)
			}
			if init.ServerInfo.Name != "superagents" || init.ServerInfo.Version != "test" {
				t.Errorf("server info %+v", init.ServerInfo)
			}
			if init.Capabilities.Logging == nil || init.Capabilities.Tools == nil {
				t.Errorf("capabilities %+v", init.Capabilities)
			}
			for _, name := range toolNames {
				if !strings.Contains(init.Instructions, name) {
					t.Errorf("the instructions do not mention %s:\n%s", name, init.Instructions)
				}
			}

			ctx := context.Background()
			list, err := c.cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The specs the manager gives its own agents, to compare with.
			sess, err := h.store.CreateSession(ctx, sa.NewSession{Agent: "general"})
			if err != nil {
				t.Fatal(err)
			}
			own, err := h.tools.ToolsFor(ctx, sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			specs := map[string]sa.ToolSpec{}
			for _, tool := range own {
				specs[tool.Spec().Name] = tool.Spec()
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
				spec, ok := specs[tool.Name]
				if !ok {
					t.Errorf("tool %s is not one of the manager's", tool.Name)
					continue
				}
				want, got := jsonValue(t, spec.InputSchema), jsonValue(t, tool.InputSchema)
				if tool.Name == sa.TaskTool {
					// Over MCP, fork hands over the connection's record, not
					// the client's conversation, which the server never sees:
					// the task tool says so where the manager's says "this
					// conversation" (the golden file has the exact words).
					if strings.Contains(tool.Description, "digest of this conversation") || !strings.Contains(tool.Description, "connection's record") {
						t.Errorf("%s: description %q must say what fork hands over on MCP", tool.Name, tool.Description)
					}
					for _, field := range []string{"fork", "prompt"} {
						for _, schema := range []any{want, got} {
							delete(schema.(map[string]any)["properties"].(map[string]any)[field].(map[string]any), "description")
						}
					}
				} else if tool.Description == "" || tool.Description != spec.Description {
					t.Errorf("%s: description %q, want the manager's %q", tool.Name, tool.Description, spec.Description)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: input schema differs from the manager's (-manager +mcp):\n%s", tool.Name, diff)
				}
				if schema, _ := jsonValue(t, tool.InputSchema).(map[string]any); schema["type"] != "object" {
					t.Errorf("%s: input schema %v", tool.Name, schema)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, toolNames) {
				t.Errorf("tools %v, want %v", names, toolNames)
			}
			if transport == inMemory {
				var out strings.Builder
				enc := json.NewEncoder(&out)
				enc.SetEscapeHTML(false)
				enc.SetIndent("", "  ")
				if err := enc.Encode(map[string]any{"instructions": init.Instructions, "tools": list.Tools}); err != nil {
					t.Fatal(err)
				}
				golden.Check(t, "tools.golden", []byte(out.String()))
			}
		})
	}
}

// jsonValue decodes any JSON-able value into plain maps, slices and
// scalars, so that values of different Go types compare.
func jsonValue(t *testing.T, v any) any {
	t.Helper()
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	var out any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTaskLifecycle drives every tool over both transports, through the
// scenarios of the task tools (TASK-* in docs/requirements.md).
func TestTaskLifecycle(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newHarness(t, fakeModel)
			c := h.connect(transport, "claude-code", "2.1.0")
			var sum, forked, slow string

			steps := []struct {
				scenario string
				run      func(t *testing.T)
			}{
				{"empty list for no children", func(t *testing.T) {
					if text, data := c.ok("superagents_list", map[string]any{}); text != "No background tasks found" || len(data["tasks"].([]any)) != 0 {
						t.Fatalf("list = %q %v", text, data)
					}
				}},
				{"launch returns the task id at once", func(t *testing.T) {
					text, data := c.ok("superagents_task", map[string]any{"description": "add", "prompt": "What is 2+2?", "agent": "general"})
					sum, _ = data["id"].(string)
					if !strings.Contains(text, "Task "+sum+" launched in the background") || data["status"] == nil {
						t.Fatalf("launch = %q %v", text, data)
					}
				}},
				{"the client is notified when the task ends", func(t *testing.T) {
					n := c.notification()
					if !regexp.MustCompile(`^✓ Agent "add" finished in \d+s\.\nTask Progress: 1/1$`).MatchString(n["text"].(string)) {
						t.Fatalf("notification text %q", n["text"])
					}
					if n["task_id"] != sum || n["status"] != "completed" || n["description"] != "add" || n["level"] != "notice" {
						t.Fatalf("notification %v", n)
					}
					if !strings.Contains(n["hint"].(string), "superagents_output") {
						t.Fatalf("hint %q", n["hint"])
					}
				}},
				{"retrieve completed task results", func(t *testing.T) {
					text, data := c.ok("superagents_output", map[string]any{"task_id": sum[:8]})
					if !strings.Contains(text, "completed in") || !strings.HasSuffix(text, "Result:\n2+2 equals 4.") {
						t.Fatalf("output = %q", text)
					}
					if msg, _ := data["message"].(string); data["status"] != "completed" || msg == "" || !strings.HasSuffix(text, msg) || data["result"] != nil {
						t.Fatalf("output data %v: want the status, and the result once, in the message", data)
					}
					if tk, err := h.store.Task(context.Background(), sum); err != nil || tk.ResultRetrievedAt == nil {
						t.Fatalf("the result is not marked retrieved: %+v %v", tk, err)
					}
				}},
				{"refuse a resume with an unknown agent", func(t *testing.T) {
					if msg := c.fails("superagents_task", map[string]any{"resume": sum, "agent": "nobody", "prompt": "What is 3+3?"}); !strings.Contains(msg, `unknown agent "nobody"`) {
						t.Fatalf("resume with an unknown agent = %q", msg)
					}
				}},
				{"resume completed task with follow-up prompt", func(t *testing.T) {
					text, data := c.ok("superagents_task", map[string]any{"resume": sum, "prompt": "What is 3+3?"})
					if !strings.Contains(text, "resumed (resume #1)") || data["status"] != "resumed" {
						t.Fatalf("resume = %q %v", text, data)
					}
				}},
				{"wait for resume response", func(t *testing.T) {
					text, data := c.ok("superagents_output", map[string]any{"task_id": sum, "block": true, "timeout": 60})
					if !strings.Contains(text, "resume #1") || !strings.HasSuffix(text, "3+3 equals 6.") || data["timed_out"] != false {
						t.Fatalf("output = %q %v", text, data)
					}
					if n := c.notification(); n["task_id"] != sum || !strings.Contains(n["text"].(string), "Resume #1 completed") {
						t.Fatalf("resume notification %v", n)
					}
				}},
				{"launch forked background task", func(t *testing.T) {
					forked = c.launch(map[string]any{"description": "forked sum", "prompt": "What is 2+2?", "fork": true})
					c.ok("superagents_output", map[string]any{"task_id": forked, "block": true})
					c.notification()
				}},
				{"check running task status", func(t *testing.T) {
					slow = c.launch(map[string]any{"description": "slow one", "prompt": "please stall"})
					text, data := c.ok("superagents_output", map[string]any{"task_id": slow})
					if !strings.Contains(text, "is running") || data["status"] != "running" {
						t.Fatalf("output of a running task = %q %v", text, data)
					}
				}},
				{"fork and resume indicators in task list", func(t *testing.T) {
					text, data := c.ok("superagents_list", map[string]any{})
					for _, want := range []string{
						"Background tasks (3):",
						"- " + slow + " [running] \"slow one\"",
						"- " + forked + " (forked) [completed] \"forked sum\"",
						"- " + sum + " (resumed) [completed] \"add\"",
					} {
						if !strings.Contains(text, want) {
							t.Fatalf("list lacks %q:\n%s", want, text)
						}
					}
					if len(data["tasks"].([]any)) != 3 {
						t.Fatalf("list data %v", data)
					}
					// The status filter ignores case.
					if _, data := c.ok("superagents_list", map[string]any{"status": "Running"}); len(data["tasks"].([]any)) != 1 {
						t.Fatalf("list of Running tasks = %v", data)
					}
				}},
				{"cancel a running task", func(t *testing.T) {
					if text, data := c.ok("superagents_cancel", map[string]any{"task_id": slow}); !strings.Contains(text, "is cancelled") || data["status"] != "cancelled" {
						t.Fatalf("cancel = %q %v", text, data)
					}
					if n := c.notification(); n["task_id"] != slow || n["status"] != "cancelled" {
						t.Fatalf("cancel notification %v", n)
					}
					if msg := c.fails("superagents_cancel", map[string]any{"task_id": slow}); !strings.Contains(msg, "there is nothing to cancel") {
						t.Fatalf("second cancel: %q", msg)
					}
				}},
				{"reject resume of non-completed task", func(t *testing.T) {
					if msg := c.fails("superagents_task", map[string]any{"resume": slow, "prompt": "go on"}); !strings.Contains(msg, "only completed tasks can be resumed") {
						t.Fatalf("resume of a cancelled task: %q", msg)
					}
				}},
				{"clear", func(t *testing.T) {
					if text, data := c.ok("superagents_clear", map[string]any{}); !strings.Contains(text, "Cleared 3 task(s)") || data["cleared"] != 3.0 {
						t.Fatalf("clear = %q %v", text, data)
					}
					if text, _ := c.ok("superagents_list", map[string]any{}); text != "No background tasks found" {
						t.Fatalf("list after clear = %q", text)
					}
				}},
			}
			for _, step := range steps {
				if !t.Run(step.scenario, step.run) {
					return
				}
			}
		})
	}
}

// TestToolErrors checks that failures are tool errors with one clear
// sentence, not protocol errors.
func TestToolErrors(t *testing.T) {
	h := newHarness(t, fakeModel)
	c := h.connect(inMemory, "probe", "0.1")
	tests := []struct {
		scenario string
		tool     string
		args     map[string]any
		want     string
	}{
		{"reject fork with resume", "superagents_task", map[string]any{"prompt": "x", "fork": true, "resume": "abcd1234"},
			"resume and fork are mutually exclusive"},
		{"prompt is required by the schema", "superagents_task", map[string]any{"description": "d", "agent": "general"}, "prompt"},
		{"description is required", "superagents_task", map[string]any{"prompt": "x", "agent": "general"}, "description is required"},
		{"unknown agent", "superagents_task", map[string]any{"description": "d", "prompt": "x", "agent": "nobody"}, `unknown agent "nobody"`},
		{"unknown input field", "superagents_task", map[string]any{"description": "d", "prompt": "x", "agent": "general", "colour": "red"}, "colour"},
		{"negative timeout", "superagents_task", map[string]any{"description": "d", "prompt": "x", "agent": "general", "timeout": -1}, "timeout cannot be negative"},
		{"handle expired session on resume", "superagents_task", map[string]any{"resume": "zzzzzzzz", "prompt": "x"}, "zzzzzzzz"},
		{"output of an unknown task", "superagents_output", map[string]any{"task_id": "zzzzzzzz"}, "zzzzzzzz"},
		{"id prefix too short", "superagents_output", map[string]any{"task_id": "ab"}, "too short"},
		{"wrong type", "superagents_output", map[string]any{"task_id": 12}, "task_id"},
		{"cancel of an unknown task", "superagents_cancel", map[string]any{"task_id": "zzzzzzzz"}, "zzzzzzzz"},
		{"unknown status", "superagents_list", map[string]any{"status": "sleeping"}, `unknown status "sleeping"`},
	}
	for _, tt := range tests {
		t.Run(tt.scenario, func(t *testing.T) {
			msg := c.fails(tt.tool, tt.args)
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not say %q", msg, tt.want)
			}
			for _, prefix := range []string{"invalid input: ", "conflict: "} {
				if strings.Contains(msg, prefix) {
					t.Errorf("error %q carries the category prefix %q", msg, prefix)
				}
			}
		})
	}
	// An unknown tool is the protocol's business.
	if _, err := c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "superagents_nothing"}); err == nil {
		t.Error("calling an unknown tool succeeded")
	}
}

// TestClientsSeeOnlyTheirOwnTasks: each connection is its own parent
// session, named after its client, and hears of its own tasks only.
func TestClientsSeeOnlyTheirOwnTasks(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newHarness(t, fakeModel)
			alpha := h.connect(transport, "alpha", "1.0")
			beta := h.connect(transport, "beta", "2.0")

			a := alpha.launch(map[string]any{"description": "alpha's", "prompt": "What is 2+2?"})
			if n := alpha.notification(); n["task_id"] != a {
				t.Fatalf("alpha was told of %v", n)
			}
			b := beta.launch(map[string]any{"description": "beta's", "prompt": "What is 3+3?"})
			// Notifications go out in the order tasks end: had alpha's gone
			// to beta, beta would have heard of it before its own.
			if n := beta.notification(); n["task_id"] != b {
				t.Fatalf("beta was told of %v first", n)
			}

			for _, tt := range []struct {
				c            *conn
				mine, theirs string
				title        string
			}{{alpha, a, b, "MCP: alpha 1.0"}, {beta, b, a, "MCP: beta 2.0"}} {
				result, _ := tt.c.ok("superagents_list", map[string]any{})
				notices, text := splitNotices(result)
				if !strings.Contains(notices, tt.mine) || strings.Contains(notices, tt.theirs) {
					t.Errorf("notices of %s:\n%s", tt.title, notices)
				}
				if !strings.Contains(text, tt.mine) || strings.Contains(text, tt.theirs) || !strings.HasPrefix(text, "Background tasks (1):") {
					t.Errorf("list of %s:\n%s", tt.title, text)
				}
				task, err := h.store.Task(context.Background(), tt.mine)
				if err != nil {
					t.Fatal(err)
				}
				sess, err := h.store.Session(context.Background(), task.ParentSessionID)
				if err != nil || sess.Title != tt.title || sess.Agent != sa.MCPClientAgent {
					t.Errorf("parent session %+v %v, want title %q", sess, err, tt.title)
				}
			}
			// Clearing is per client too.
			alpha.ok("superagents_clear", map[string]any{})
			if text, _ := beta.ok("superagents_list", map[string]any{}); !strings.Contains(text, b) {
				t.Errorf("alpha's clear emptied beta's list:\n%s", text)
			}
			select {
			case n := <-alpha.logs:
				t.Errorf("alpha got another notification: %v", n)
			case n := <-beta.logs:
				t.Errorf("beta got another notification: %v", n)
			default:
			}
		})
	}
}

// TestBatches: tasks launched while others of the client still run share
// a batch, and each ending counts how many of them are done.
func TestBatches(t *testing.T) {
	h := newHarness(t, fakeModel)
	c := h.connect(inMemory, "probe", "0.1")
	slow := c.launch(map[string]any{"description": "slow", "prompt": "please stall"})
	c.launch(map[string]any{"description": "quick", "prompt": "What is 2+2?"})
	if n := c.notification(); !strings.HasSuffix(n["text"].(string), "Task Progress: 1/2") {
		t.Fatalf("first ending: %v", n)
	}
	c.ok("superagents_cancel", map[string]any{"task_id": slow})
	if n := c.notification(); !strings.HasSuffix(n["text"].(string), "Task Progress: 2/2") || n["task_id"] != slow {
		t.Fatalf("second ending: %v", n)
	}
	// Nothing runs any more: the next launch starts a batch of its own.
	c.launch(map[string]any{"description": "later", "prompt": "What is 3+3?"})
	if n := c.notification(); !strings.HasSuffix(n["text"].(string), "Task Progress: 1/1") {
		t.Fatalf("later ending: %v", n)
	}
}

// TestLogLevel: a client that sets a level hears only endings at or above
// it; a failed task is a warning.
func TestLogLevel(t *testing.T) {
	h := newHarness(t, fakeModel)
	c := h.connect(inMemory, "probe", "0.1")
	if err := c.cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	done := c.launch(map[string]any{"description": "fine", "prompt": "What is 2+2?"})
	c.ok("superagents_output", map[string]any{"task_id": done, "block": true})
	failed := c.launch(map[string]any{"description": "doomed", "prompt": "please fail"})
	// Endings are sent in order: the completed task's would come first.
	n := c.notification()
	if n["task_id"] != failed || n["status"] != "error" || n["level"] != "warning" || !strings.HasPrefix(n["text"].(string), `✗ Agent "doomed" failed`) {
		t.Fatalf("notification %v", n)
	}
}

// TestProgressWhileBlocking: a blocking superagents_output with a
// progress token reports the task's progress while it waits.
func TestProgressWhileBlocking(t *testing.T) {
	gate := make(chan struct{})
	var opened bool
	requests := 0 // the fake server calls its handler under its lock
	h := newHarness(t, func(llmtest.Request) llmtest.Reply {
		if requests++; requests == 1 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "ls", Input: `{}`}}}
		}
		// Answer once the client has heard of the tool call.
		select {
		case <-gate:
		case <-time.After(waitLimit):
		}
		return llmtest.Reply{Text: "Listed."}
	})
	c := h.connect(inMemory, "probe", "0.1")
	id := c.launch(map[string]any{"description": "lister", "prompt": "list the files"})

	type result struct {
		res *mcp.CallToolResult
		err error
	}
	answer := make(chan result, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "superagents_output", Arguments: map[string]any{"task_id": id, "block": true}}
		params.SetProgressToken("wait-1")
		res, err := c.cs.CallTool(context.Background(), params)
		answer <- result{res, err}
	}()
	var messages []string
	for !opened {
		select {
		case p := <-c.progress:
			if p.ProgressToken != "wait-1" {
				t.Fatalf("progress token %v", p.ProgressToken)
			}
			messages = append(messages, p.Message)
			if strings.Contains(p.Message, "1 tool call(s) (last: ls)") {
				close(gate)
				opened = true
			}
		case <-time.After(waitLimit):
			t.Fatalf("no progress reported the tool call; got %q", messages)
		}
	}
	r := <-answer
	if r.err != nil || r.res.IsError || !strings.HasSuffix(resultText(r.res), "Listed.") {
		t.Fatalf("output = %v %v", r.res, r.err)
	}
	if !strings.HasPrefix(messages[0], fmt.Sprintf("Task %s (\"lister\") is running", sa.ShortID(id))) {
		t.Errorf("progress messages %q", messages)
	}
}

// TestIdleHTTPSessions: over HTTP, the session of a client that says
// nothing is closed after the session timeout, but not while a task it
// launched still runs, though the client only listens for its ending;
// once that task has ended, the session is closed in turn.
func TestIdleHTTPSessions(t *testing.T) {
	// Long enough that even a loaded machine takes less between a
	// client's connecting and its first call.
	const timeout = 2 * time.Second
	h := newHarness(t, fakeModel)
	h.sessionTimeout = timeout
	waiting := h.connect(streamableHTTP, "waiting", "1.0")
	id := waiting.launch(map[string]any{"description": "stalls", "prompt": "please stall"})
	waitingGone := waiting.gone()
	quietGone := h.connect(streamableHTTP, "quiet", "1.0").gone()
	// Several timeouts pass with the task running: the only way to see
	// that something does not happen is to let that time go by.
	select {
	case <-waitingGone:
		t.Fatal("the session was closed while its task runs")
	case <-time.After(3 * timeout):
	}
	select {
	case <-quietGone:
	case <-time.After(waitLimit):
		t.Fatal("the session of a client without tasks was not closed once idle")
	}
	// Cancelled by someone else: no request of the client's.
	if _, err := h.mgr.Cancel(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if n := waiting.notification(); n["task_id"] != id || n["status"] != "cancelled" {
		t.Fatalf("notification = %v, want the cancelled task's", n)
	}
	select {
	case <-waitingGone:
	case <-time.After(waitLimit):
		t.Fatal("the session was not closed once its task had ended and it stayed idle")
	}
}

// TestServeEnds: Serve returns when its context ends, and a closed server
// serves no more.
func TestServeEnds(t *testing.T) {
	h := newHarness(t, fakeModel)
	ctx, cancel := context.WithCancel(context.Background())
	serverSide, clientSide := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- h.srv.Serve(ctx, serverSide) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "probe", Version: "0.1"}, nil).Connect(context.Background(), clientSide, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cancel()
	if err := <-served; err != context.Canceled {
		t.Fatalf("Serve returned %v after its context ended", err)
	}
	if err := h.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.srv.Serve(context.Background(), serverSide); err != mcpserver.ErrClosed {
		t.Fatalf("Serve after Close: %v", err)
	}
}

func TestNewNeedsItsParts(t *testing.T) {
	if _, err := mcpserver.New(mcpserver.Options{}); err == nil {
		t.Fatal("New without a manager succeeded")
	}
}
