package mcpserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/mcptasks"
)

// TestStatelessRevision: a client of the 2026-07-28 revision, which has
// no sessions, gets the tools as one of an older revision does, over
// stdio (here in memory) and over HTTP, where each request stands alone:
// there its tasks belong to the API token it presents, so a later request,
// or another client with the same token, finds them, and the notice of a
// task's ending is given once.
func TestStatelessRevision(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newHarness(t, fakeModel)
			c := h.connectAt(transport, "new", "1.0", statelessRevision, nil)
			if v := c.cs.InitializeResult(); v != nil && v.ProtocolVersion != "" && v.ProtocolVersion < statelessRevision {
				t.Fatalf("negotiated %s, want %s", v.ProtocolVersion, statelessRevision)
			}
			id := c.launch(map[string]any{"description": "sum", "prompt": "What is 2+2?"})
			h.stack.WaitTask(t, id)
			text, list := c.ok("superagents_list", map[string]any{})
			if !strings.Contains(text, id) || !strings.Contains(text, `Agent "sum" finished`) {
				t.Fatalf("list = %q: want the task and the notice of its ending", text)
			}
			if notices, _ := list["notices"].([]any); len(notices) != 1 {
				t.Errorf("notices = %v, want one", list["notices"])
			}
			if text, _ := c.ok("superagents_list", map[string]any{}); strings.Contains(text, "finished") {
				t.Errorf("the notice came twice: %q", text)
			}
			other := h.connectAt(transport, "other", "1.0", statelessRevision, nil)
			_, list = other.ok("superagents_list", map[string]any{})
			tasks, _ := list["tasks"].([]any)
			if transport == streamableHTTP && len(tasks) != 1 {
				t.Errorf("another client with the same token lists %v, want the task", list["tasks"])
			}
			if transport == inMemory && len(tasks) != 0 {
				t.Errorf("another connection lists %v, want nothing", list["tasks"])
			}
		})
	}
}

// tasksClient declares the Tasks extension.
func tasksClient() *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(mcptasks.ExtensionID, map[string]any{})
	return caps
}

// getTask polls a task.
func (c *conn) getTask(id string) (*mcptasks.Task, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	return mcp.CallCustomMethod[*mcptasks.TaskParams, *mcptasks.Task](ctx, c.cs, mcptasks.MethodGet, &mcptasks.TaskParams{TaskID: id})
}

func (c *conn) cancelTask(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err := mcp.CallCustomMethod[*mcptasks.TaskParams, *mcptasks.Ack](ctx, c.cs, mcptasks.MethodCancel, &mcptasks.TaskParams{TaskID: id})
	return err
}

// waitTask polls a task until it has ended.
func (c *conn) waitTask(id string) *mcptasks.Task {
	c.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		task, err := c.getTask(id)
		if err != nil {
			c.t.Fatalf("tasks/get %s: %v", id, err)
		}
		if task.Status.Terminal() || time.Now().After(deadline) {
			return task
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// deferred launches a task that the answer defers to: it returns the
// task's id, found in the store by its description, which each call makes
// unique (the SDK's client does not keep a task answer's fields).
func (c *conn) deferred(h *harness, args map[string]any) string {
	c.t.Helper()
	id, _ := c.deferredWithNote(h, args)
	return id
}

// deferredWithNote is deferred, with the note for the host's model that
// came with the task.
func (c *conn) deferredWithNote(h *harness, args map[string]any) (id, note string) {
	c.t.Helper()
	res := c.call("superagents_task", args)
	if meta, ok := res.Meta[mcptasks.AgentTaskMetaKey].(map[string]any); ok {
		note, _ = meta["modelImmediateResponse"].(string)
	}
	if res.IsError || len(res.Content) != 0 {
		c.t.Fatalf("superagents_task answered %q, want a task", resultText(res))
	}
	list, err := h.store.ListTasks(context.Background(), sa.TaskFilter{IncludeCleared: true})
	if err != nil {
		c.t.Fatal(err)
	}
	var ids []string
	for _, t := range list {
		if t.Description == args["description"] {
			ids = append(ids, t.ID)
		}
	}
	if len(ids) != 1 {
		c.t.Fatalf("tasks described %q: %v, want one", args["description"], ids)
	}
	return ids[0], note
}

// TestTasksExtension: a client that declares the Tasks extension gets a
// task for superagents_task, and polls it: working while the sub-agent
// runs, then completed with superagents_output's answer (text and
// structured content); tasks/cancel stops a task, and may be sent twice;
// an unknown task, another connection's, or one not launched over MCP is
// not found.
func TestTasksExtension(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newHarness(t, fakeModel)
			c := h.connectAt(transport, "claude-code-like", "1.0", statelessRevision, tasksClient())
			id := c.deferred(h, map[string]any{"description": "sum", "prompt": "What is 2+2?", "agent": "general"})
			done := c.waitTask(id)
			if done.Status != mcptasks.StatusCompleted || done.Result == nil || done.Result.IsError {
				t.Fatalf("task %s ended %+v, want completed with a result", id, done)
			}
			if text := resultText(done.Result); !strings.HasSuffix(text, "2+2 equals 4.") {
				t.Errorf("result text %q", text)
			}
			if sc, _ := done.Result.StructuredContent.(map[string]any); sc["id"] != id || sc["status"] != "completed" {
				t.Errorf("result structured content %v", done.Result.StructuredContent)
			}

			// The task answer replaces the tool's result: the notices due
			// come in its note for the model.
			stalled, note := c.deferredWithNote(h, map[string]any{"description": "stalls", "prompt": "please stall", "agent": "general"})
			if !strings.Contains(note, `Agent "sum" finished`) || !strings.Contains(note, "launched in the background") {
				t.Errorf("note for the model %q: want the notice of the ended task and the launch's message", note)
			}
			if task, err := c.getTask(stalled); err != nil || task.Status != mcptasks.StatusWorking || task.PollIntervalMs == 0 {
				t.Fatalf("running task = %+v, %v; want working, with a poll interval", task, err)
			}
			for range 2 { // Claude Code sends it twice
				if err := c.cancelTask(stalled); err != nil {
					t.Fatalf("tasks/cancel: %v", err)
				}
			}
			if task := c.waitTask(stalled); task.Status != mcptasks.StatusCancelled {
				t.Errorf("cancelled task = %+v", task)
			}
			if tk, err := h.store.Task(context.Background(), stalled); err != nil || tk.Status != sa.TaskCancelled {
				t.Errorf("stored task %+v, %v; want cancelled", tk, err)
			}

			_, err := c.getTask("zzzzzzzzzzzzzzzz")
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("tasks/get of an unknown task: %v, want invalid params", err)
			}

			// A forked launch is deferred too.
			forked := c.deferred(h, map[string]any{"description": "forked sum", "prompt": "What is 2+2?", "agent": "general", "fork": true})
			if task := c.waitTask(forked); task.Status != mcptasks.StatusCompleted {
				t.Errorf("forked task = %+v", task)
			}

			// Another client polls the task as its launcher, or not at
			// all (TestTasksBelongToTheirLauncher has every case): over
			// HTTP one with the same token (a host's later process), over
			// stdio not another connection, when the task is its
			// launching connection's own (no conversation is known here).
			other := h.connectAt(transport, "later process", "1.0", statelessRevision, tasksClient())
			task, err := other.getTask(id)
			switch {
			case transport == streamableHTTP && (err != nil || task.Status != mcptasks.StatusCompleted):
				t.Errorf("tasks/get from a later client with the same token = %+v, %v; want the task", task, err)
			case transport == inMemory && err == nil:
				t.Errorf("tasks/get from another connection = %+v; want not found", task)
			}
			// A task that was not launched over MCP is not found.
			ctx := context.Background()
			own, err := h.store.CreateSession(ctx, sa.NewSession{Agent: "general"})
			if err != nil {
				t.Fatal(err)
			}
			notMCP, err := h.mgr.Launch(ctx, tasks.LaunchRequest{ParentSessionID: own.ID, Description: "chat's", Prompt: "What is 2+2?", Agent: "general"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.getTask(notMCP.ID); !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("tasks/get of a task not launched over MCP: %v, want not found", err)
			}
		})
	}
}

// TestTasksNeedTheExtension: without the extension declared, a client
// gets superagents_task's answer at once, and tasks/get is refused.
func TestTasksNeedTheExtension(t *testing.T) {
	h := newHarness(t, fakeModel)
	c := h.connectAt(inMemory, "plain", "1.0", statelessRevision, nil)
	id := c.launch(map[string]any{"description": "sum", "prompt": "What is 2+2?"})
	_, err := c.getTask(id)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != mcptasks.CodeMissingRequiredClientCapability {
		t.Errorf("tasks/get without the extension: %v, want %d", err, mcptasks.CodeMissingRequiredClientCapability)
	}
}
