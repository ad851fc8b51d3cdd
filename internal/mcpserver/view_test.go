package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/tasktools"
)

// TestStructuredContentCarriesTheText: Claude Code and Codex show their
// model a result's structured content and drop its text, so the
// structured content of every answer says all that the text says — the
// message with its hints, the notices of the tasks that ended, the unread
// mark — and a task as a short entry (no prompt; the result once, in the
// message).
func TestStructuredContentCarriesTheText(t *testing.T) {
	// The task answers only once its launch was answered: the launch's
	// answer carries no notice of its own ending.
	launched := make(chan struct{})
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		select {
		case <-launched:
		case <-time.After(30 * time.Second):
		}
		return fakeModel(req)
	})
	c := h.connect(inMemory, "shape", "1.0")
	text, launch := c.ok("superagents_task", map[string]any{"description": "add", "prompt": "What is 2+2?", "agent": "general"})
	close(launched)
	id, _ := launch["id"].(string)
	if id == "" || launch["message"] != text || !strings.Contains(text, "you will be notified") || launch["prompt"] != nil {
		t.Fatalf("launch = %q %v: want the message (with its hint) and a short entry", text, launch)
	}
	c.notification()

	// The next answer, whatever the tool, starts with the notice, in its
	// text and in its structured content; the one after has none.
	text, list := c.ok("superagents_list", map[string]any{})
	notices, _ := list["notices"].([]any)
	if len(notices) != 1 || !strings.Contains(text, notices[0].(string)) || !strings.Contains(notices[0].(string), `Agent "add" finished`) ||
		!strings.Contains(notices[0].(string), "superagents_output") {
		t.Fatalf("list after the ending = %q\nnotices %v: want the notice with its hint in both", text, list["notices"])
	}
	entries := list["tasks"].([]any)
	entry := entries[0].(map[string]any)
	if entry["id"] != id || entry["unread"] != true || !strings.Contains(text, "result unread") {
		t.Fatalf("list entry %v (text %q): want the task, marked unread in both", entry, text)
	}
	for key := range entry {
		if !slices.Contains([]string{"id", "description", "agent", "status", "indicators", "duration_ms", "tool_calls", "resume_count", "unread", "branch"}, key) {
			t.Errorf("list entry has %q: an entry is the task in a few fields", key)
		}
	}
	if _, again := c.ok("superagents_list", map[string]any{}); again["notices"] != nil {
		t.Errorf("the notice came twice: %v", again["notices"])
	}

	text, output := c.ok("superagents_output", map[string]any{"task_id": id})
	if output["message"] != text || !strings.HasSuffix(text, "2+2 equals 4.") || output["result"] != nil || output["timed_out"] != false {
		t.Fatalf("output = %q %v: want the result once, in the message", text, output)
	}
	if _, list := c.ok("superagents_list", map[string]any{}); list["tasks"].([]any)[0].(map[string]any)["unread"] != nil {
		t.Errorf("read task still unread: %v", list)
	}
	text, cleared := c.ok("superagents_clear", map[string]any{})
	if cleared["message"] != text || cleared["cleared"] != float64(1) {
		t.Errorf("clear = %q %v", text, cleared)
	}
}

// TestEveryToolDeclaresItsOutput: each tool has an output schema, and
// what it answers fits it (the SDK checks each answer against it).
func TestEveryToolDeclaresItsOutput(t *testing.T) {
	h := newHarness(t, fakeModel)
	c := h.connect(inMemory, "schema", "1.0")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	res, err := c.cs.ListTools(ctx, &mcp.ListToolsParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		schema, _ := json.Marshal(tool.OutputSchema)
		if tool.OutputSchema == nil || !strings.Contains(string(schema), `"notices"`) {
			t.Errorf("%s declares the output %s: want an object schema with the notices", tool.Name, schema)
		}
	}
}

// TestListAnswerSize records the size of a ten-task list's structured
// content: a short entry per task, against the whole task view it was.
func TestListAnswerSize(t *testing.T) {
	h := newHarness(t, fakeModel)
	c := h.connect(inMemory, "size", "1.0")
	prompt := "Read the files under internal/ and report, for each, what it does in two sentences, with the names of its exported functions."
	for range 10 {
		c.launch(map[string]any{"description": "survey the code", "prompt": prompt})
		c.notification()
	}
	c.ok("superagents_list", map[string]any{}) // takes the notices
	text, list := c.ok("superagents_list", map[string]any{})
	after, _ := json.Marshal(list)
	var views []tasktools.View
	for _, e := range list["tasks"].([]any) {
		stored, err := h.store.Task(context.Background(), e.(map[string]any)["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		views = append(views, tasktools.NewView(stored, time.Now()))
	}
	if len(views) != 10 {
		t.Fatalf("%d tasks listed, want 10", len(views))
	}
	before, _ := json.Marshal(map[string]any{"tasks": views})
	t.Logf("ten-task list: structured content %d bytes (whole views: %d), text %d bytes", len(after), len(before), len(text))
	if len(after) >= len(before)/2 {
		t.Errorf("structured list of ten tasks is %d bytes, the whole views %d: want it short", len(after), len(before))
	}
}

// TestClearedTaskIsGone: after superagents_clear, the output, cancel and
// resume of a cleared task say it was cleared; nothing of it is given.
func TestClearedTaskIsGone(t *testing.T) {
	h := newHarness(t, fakeModel)
	c := h.connect(inMemory, "clearer", "1.0")
	done := c.launch(map[string]any{"description": "sum", "prompt": "What is 2+2?"})
	c.notification()
	running := c.launch(map[string]any{"description": "stalls", "prompt": "please stall"})
	if _, data := c.ok("superagents_clear", map[string]any{}); data["cleared"] != float64(2) || data["cancelled"] != float64(1) {
		t.Fatalf("clear = %v", data)
	}
	for _, id := range []string{done, running} {
		for tool, args := range map[string]map[string]any{
			"superagents_output": {"task_id": id},
			"superagents_cancel": {"task_id": id},
			"superagents_task":   {"resume": id, "prompt": "What is 3+3?"},
		} {
			msg := c.fails(tool, args)
			if !strings.Contains(msg, "was cleared") || strings.Contains(msg, "2+2 equals 4.") {
				t.Errorf("%s of cleared task %s = %q: want it said to be cleared, and nothing of it", tool, id, msg)
			}
		}
	}
}

// TestNoSilentOfflineModel: with no key set and no model chosen, the
// offline model would answer every task as if it were a sub-agent: a
// launch is refused instead, naming the keys and how to give one to the
// server from each host. The offline model chosen on purpose is fine.
func TestNoSilentOfflineModel(t *testing.T) {
	for _, tc := range []struct {
		name      string
		defaulted bool
	}{
		{"no model chosen", true},
		{"offline chosen on purpose", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, fakeModel)
			h.eng.Config.Model, h.eng.Config.Defaulted = "offline", tc.defaulted
			c := h.connect(inMemory, "keyless", "1.0")
			args := map[string]any{"description": "sum", "prompt": "What is 2+2?", "agent": "general"}
			if !tc.defaulted {
				c.ok("superagents_task", args)
				return
			}
			msg := c.fails("superagents_task", args)
			for _, want := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", ".mcp.json", "env_vars", "opencode.json", "--model offline"} {
				if !strings.Contains(msg, want) {
					t.Errorf("refusal %q does not name %q", msg, want)
				}
			}
			fork := map[string]any{"description": "sum", "prompt": "What is 2+2?", "agent": "general", "fork": true}
			if msg := c.fails("superagents_task", fork); !strings.Contains(msg, "ANTHROPIC_API_KEY") {
				t.Errorf("forked launch = %q, want the same refusal", msg)
			}
			if _, list := c.ok("superagents_list", map[string]any{}); len(list["tasks"].([]any)) != 0 {
				t.Errorf("a refused launch left tasks: %v", list["tasks"])
			}
		})
	}
}
