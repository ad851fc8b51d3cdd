package mcpserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/mcpserver"
	"github.com/superagents/superagents/internal/stacktest"
	"github.com/superagents/superagents/internal/tasktools"
	"github.com/superagents/superagents/internal/tools"
	"github.com/superagents/superagents/mcptasks"
)

// askModel scripts a sub-agent that runs a command outside the allow list
// ("please run the marker"), or asks its user ("please ask the user"),
// and reports what came of it.
func askModel(req llmtest.Request) llmtest.Reply {
	body := string(req.Body)
	switch {
	case strings.Contains(body, "ask-marker-42"):
		return llmtest.Reply{Text: "The command printed ask-marker-42."}
	case strings.Contains(body, "declined to run it"):
		return llmtest.Reply{Text: "The user refused the command."}
	case strings.Contains(body, "nobody can be asked"):
		return llmtest.Reply{Text: "Refused: nobody could be asked."}
	case strings.Contains(body, "The user answered: blue"):
		return llmtest.Reply{Text: "The user picked blue."}
	case strings.Contains(body, "please run the marker"):
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command": "echo ask-marker-$((6*7))"}`}}}
	case strings.Contains(body, "please ask the user"):
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: tasktools.AskToolName, Input: `{"question": "Which colour?", "choices": ["red", "blue"]}`}}}
	}
	return llmtest.Reply{Text: "Done."}
}

// newAskHarness is a harness whose agents may run only ls, and ask their
// user about any other command.
func newAskHarness(t *testing.T) *harness {
	t.Helper()
	return newAskHarnessWith(t, mcpserver.Options{})
}

// newAskHarnessWith is newAskHarness with server options (Host, Getenv);
// their Runtime and Version are the harness's.
func newAskHarnessWith(t *testing.T, opts mcpserver.Options) *harness {
	t.Helper()
	h := &harness{t: t, ws: t.TempDir(), dir: t.TempDir(), model: llmtest.NewAnthropic(t)}
	h.model.Handle(askModel)
	cfg := stacktest.Config(t, h.ws, h.model.BaseURL())
	cfg.Permissions.Bash = tools.BashRules{Allow: []string{"ls"}, Unlisted: tools.UnlistedAsk}
	h.stack = stacktest.Open(t, h.dir, h.ws, cfg)
	h.store, h.eng, h.bus, h.mgr = h.stack.Store, h.stack.Engine, h.stack.Bus, h.stack.Tasks
	var err error
	opts.Runtime, opts.Version = h.stack.Runtime, "test"
	if h.srv, err = mcpserver.New(opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.close)
	return h
}

func (c *conn) updateTask(id string, responses mcp.InputResponseMap) error {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err := mcp.CallCustomMethod[*mcptasks.UpdateParams, *mcptasks.Ack](ctx, c.cs, mcptasks.MethodUpdate, &mcptasks.UpdateParams{TaskID: id, InputResponses: responses})
	return err
}

// waitInput polls a task until it asks for input, and returns the key and
// the elicitation of its one request.
func (c *conn) waitInput(id string) (*mcptasks.Task, string, *mcp.ElicitParams) {
	c.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		task, err := c.getTask(id)
		if err != nil {
			c.t.Fatalf("tasks/get %s: %v", id, err)
		}
		if task.Status == mcptasks.StatusInputRequired {
			if len(task.InputRequests) != 1 {
				c.t.Fatalf("input_required task with requests %v, want one", task.InputRequests)
			}
			for k, r := range task.InputRequests {
				e, ok := r.(*mcp.ElicitParams)
				if !ok {
					c.t.Fatalf("input request %s is a %T, want an elicitation", k, r)
				}
				return task, k, e
			}
		}
		if task.Status.Terminal() || time.Now().After(deadline) {
			c.t.Fatalf("task %s = %+v, want it to ask for input", id, task)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTaskAsksItsUser: a task launched by a client that declared the
// Tasks extension asks about a command its allow list leaves open
// (input_required, with the elicitation); accepted, the command runs and
// the task completes with its output; declined, the model reads the
// refusal. Its agent's own question (superagents_ask) goes the same way.
// An answer to an unknown key is ignored; an answer to an ended task is
// refused.
func TestTaskAsksItsUser(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newAskHarness(t)
			c := h.connectAt(transport, "tasks-client", "1.0", statelessRevision, tasksClient())

			id := c.deferred(h, map[string]any{"description": "marker", "prompt": "please run the marker", "agent": "general"})
			task, key, e := c.waitInput(id)
			if !strings.Contains(task.StatusMessage, "echo ask-marker-$((6*7))") || !strings.Contains(e.Message, "allow it?") {
				t.Errorf("status message %q, elicitation %q: want the command asked about", task.StatusMessage, e.Message)
			}
			if e.Mode != "form" || e.RequestedSchema == nil {
				t.Errorf("elicitation %+v: want a form with a schema", e)
			}
			// An unknown key is ignored: the task still waits.
			if err := c.updateTask(id, mcp.InputResponseMap{"never-asked": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}}); err != nil {
				t.Fatalf("tasks/update of an unknown key: %v", err)
			}
			if again, err := c.getTask(id); err != nil || again.Status != mcptasks.StatusInputRequired {
				t.Fatalf("after an answer to an unknown key: %+v, %v; want still input_required", again, err)
			}
			// Over HTTP another client with the same token (a later
			// process of the host) answers; over stdio the task is its
			// connection's own (TestTasksBelongToTheirLauncher has the
			// other cases).
			answerer := c
			if transport == streamableHTTP {
				answerer = h.connectAt(transport, "tasks-client later", "1.0", statelessRevision, tasksClient())
			}
			if err := answerer.updateTask(id, mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}}); err != nil {
				t.Fatalf("tasks/update: %v", err)
			}
			done := c.waitTask(id)
			if done.Status != mcptasks.StatusCompleted || !strings.Contains(resultText(done.Result), "The command printed ask-marker-42.") {
				t.Fatalf("accepted task ended %+v (%q)", done, resultText(done.Result))
			}
			// It has ended: an answer now is refused.
			err := c.updateTask(id, mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "decline"}})
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpc.Message, "ended") {
				t.Errorf("tasks/update of an ended task: %v, want invalid params saying it ended", err)
			}

			declined := c.deferred(h, map[string]any{"description": "marker declined", "prompt": "please run the marker", "agent": "general"})
			_, key, _ = c.waitInput(declined)
			if err := c.updateTask(declined, mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "decline"}}); err != nil {
				t.Fatalf("tasks/update: %v", err)
			}
			if done := c.waitTask(declined); done.Status != mcptasks.StatusCompleted || !strings.Contains(resultText(done.Result), "The user refused the command.") {
				t.Fatalf("declined task ended %+v (%q)", done, resultText(done.Result))
			}

			asked := c.deferred(h, map[string]any{"description": "question", "prompt": "please ask the user", "agent": "general"})
			_, key, e = c.waitInput(asked)
			if e.Message != "Which colour?" {
				t.Errorf("question asked %q", e.Message)
			}
			if err := c.updateTask(asked, mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "blue"}}}); err != nil {
				t.Fatalf("tasks/update: %v", err)
			}
			if done := c.waitTask(asked); done.Status != mcptasks.StatusCompleted || !strings.Contains(resultText(done.Result), "The user picked blue.") {
				t.Fatalf("asking task ended %+v (%q)", done, resultText(done.Result))
			}

			// A task waiting for its answer stops at once when cancelled.
			waiting := c.deferred(h, map[string]any{"description": "marker cancelled", "prompt": "please run the marker", "agent": "general"})
			c.waitInput(waiting)
			if err := c.cancelTask(waiting); err != nil {
				t.Fatal(err)
			}
			if done := c.waitTask(waiting); done.Status != mcptasks.StatusCancelled {
				t.Fatalf("cancelled waiting task = %+v", done)
			}
		})
	}
}

// TestTaskAsksAHostWithoutTheExtension: a client that did not declare
// the extension (Codex, OpenCode, claude -p) reads its task's question in
// its next tool answer, text and structured content, sees it in
// superagents_list, and answers it with superagents_send; the task goes
// on with the answer.
func TestTaskAsksAHostWithoutTheExtension(t *testing.T) {
	h := newAskHarness(t)
	c := h.connectAt(inMemory, "plain-client", "1.0", sessionsRevision, nil)
	id := c.launch(map[string]any{"description": "question", "prompt": "please ask the user", "agent": "general"})
	// A blocking wait on the task returns for its question, the task
	// still running, instead of waiting out its timeout; its answer
	// brings the question's notice.
	text, out := c.ok("superagents_output", map[string]any{"task_id": id, "block": true, "timeout": 600})
	if out["timed_out"] != false || out["status"] != "running" || !strings.Contains(text, "waiting for an answer to its question: Which colour?") {
		t.Fatalf("a blocking superagents_output of an asking task: %q %v", text, out)
	}
	notices, _ := out["notices"].([]any)
	if len(notices) != 1 || !strings.Contains(notices[0].(string), "Which colour?") || !strings.Contains(notices[0].(string), "superagents_send") ||
		!strings.Contains(notices[0].(string), `one of "red", "blue"`) || !strings.Contains(text, notices[0].(string)) {
		t.Fatalf("the tool answer's notices %v: want the question, its choices and how to answer it, in the text too", out["notices"])
	}
	text, list := c.ok("superagents_list", map[string]any{})
	if !strings.Contains(text, `waiting for an answer: "Which colour?"`) || list["notices"] != nil {
		t.Fatalf("superagents_list %q %v: want the question on the task's line, and the notice given once", text, list["notices"])
	}
	tasks, _ := list["tasks"].([]any)
	if len(tasks) != 1 || tasks[0].(map[string]any)["question"] != "Which colour?" {
		t.Fatalf("structured tasks %v: want the question", tasks)
	}
	// Waiting on it again, its question still open, returns at once.
	if text, out := c.ok("superagents_output", map[string]any{"task_id": id, "block": true, "timeout": 600}); out["timed_out"] != false ||
		!strings.Contains(text, "a question waits for your answer") {
		t.Fatalf("a second blocking superagents_output of the asking task: %q %v", text, out)
	}
	if msg := c.fails("superagents_send", map[string]any{"task_id": id, "message": "green"}); !strings.Contains(msg, `"red", "blue"`) {
		t.Fatalf("an answer that is not a choice: %q, want the choices", msg)
	}
	text, data := c.ok("superagents_send", map[string]any{"task_id": id, "message": "Blue"})
	if data["answered"] != true || !strings.Contains(text, "blue") {
		t.Fatalf("superagents_send %q %v: want the question answered with the choice", text, data)
	}
	if text, _ := c.ok("superagents_output", map[string]any{"task_id": id, "block": true, "timeout": 60}); !strings.Contains(text, "The user picked blue.") {
		t.Fatalf("output %q: want the task to have read the answer", text)
	}
	if tk, err := h.store.Task(context.Background(), id); err != nil || tk.MayAsk {
		t.Fatalf("task %+v, %v: want it launched without the extension", tk, err)
	}
}
