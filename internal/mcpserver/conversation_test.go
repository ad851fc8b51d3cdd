package mcpserver_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/mcpserver"
	"github.com/superagents/superagents/transcripts"
)

// toolCaller is a host writer that can record a pending call of any of
// our tools, as the host writes it just before it sends the call.
type toolCaller interface {
	hostWriter
	callTool(id, tool string, args map[string]any)
}

func (w *claudeWriter) callTool(id, tool string, args map[string]any) {
	w.assistant("msg_01Call"+id, map[string]any{"type": "tool_use", "id": id, "name": "mcp__superagents__" + tool, "input": args}, "tool_use")
}

func (w *codexWriter) callTool(id, tool string, args map[string]any) {
	raw, err := json.Marshal(args)
	if err != nil {
		w.t.Fatal(err)
	}
	w.line("response_item", map[string]any{"type": "function_call", "name": "mcp__superagents__" + tool, "arguments": string(raw), "call_id": id})
	w.tokenCount()
}

// Two conversations of each host in one workspace, as the host names
// them in its transcripts.
var conversationHosts = []struct {
	name, client string
	open         func(t testing.TB, home, ws, session string) toolCaller
	sessions     [2]string
}{
	{"claude-code", "claude-code", func(t testing.TB, home, ws, session string) toolCaller {
		path := filepath.Join(home, ".claude", "projects", transcripts.ClaudeProjectDir(ws), session+".jsonl")
		return &claudeWriter{t: t, path: path, ws: ws, session: session}
	}, [2]string{claudeSessionID, "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b"}},
	{"codex", "codex-mcp-client", func(t testing.TB, home, ws, session string) toolCaller {
		w := openCodex(t, home, ws).(*codexWriter)
		if session != codexSessionID { // a rollout of its own
			w.path = strings.ReplaceAll(w.path, codexSessionID, session)
			w.line("session_meta", map[string]any{"id": session, "timestamp": "2026-11-25T10:00:00.000Z", "cwd": ws,
				"originator": "codex_cli_rs", "cli_version": "0.58.0", "source": "cli", "model_provider": "openai"})
		}
		return w
	}, [2]string{codexSessionID, "019ab3c4-5d6e-7f80-91a2-000000000002"}},
}

// TestTasksBelongToTheHostConversation: a task launched from a host
// conversation keeps running when the host's process disconnects; the
// conversation's next process lists it, gets the notice of its ending
// (once: a later process does not get it again), reads and resumes it;
// another conversation of the same host is told the task is not its own,
// and where it can be read.
func TestTasksBelongToTheHostConversation(t *testing.T) {
	for _, host := range conversationHosts {
		t.Run(host.name, func(t *testing.T) {
			ctx := context.Background()
			gate := make(chan struct{})
			home := t.TempDir()
			h := newHarnessWith(t, func(req llmtest.Request) llmtest.Reply {
				if strings.Contains(string(req.Body), "wait for the gate") && !strings.Contains(string(req.Body), "Gate passed") {
					select {
					case <-gate:
					case <-time.After(waitLimit):
					}
					return llmtest.Reply{Text: "Gate passed."}
				}
				return fakeModel(req)
			}, mcpserver.Options{Getenv: homeEnv(home)})
			w := host.open(t, home, h.ws, host.sessions[0])
			other := host.open(t, home, h.ws, host.sessions[1])

			// The first process launches a task, then exits while it runs.
			w.user("Launch the slow check in the background.")
			launch := map[string]any{"description": "slow check", "prompt": "Please wait for the gate.", "agent": "general"}
			w.callTool("call_1", "superagents_task", launch)
			first := h.connect(inMemory, host.client, "1.0.0")
			_, data := first.ok("superagents_task", launch)
			id := data["id"].(string)
			first.cs.Close()
			close(gate)
			if done := h.stack.WaitTask(t, id); done.Status != sa.TaskCompleted {
				t.Fatalf("the task ended %s after its host process left, want completed", done.Status)
			}
			w.result("call_1", "launched")

			// The next process of the conversation sees it, and is told it
			// ended.
			w.callTool("call_2", "superagents_list", map[string]any{})
			next := h.connect(inMemory, host.client, "1.0.1")
			text, list := next.ok("superagents_list", map[string]any{})
			notices, _ := list["notices"].([]any)
			if !strings.Contains(text, id) || len(notices) != 1 || !strings.Contains(notices[0].(string), `Agent "slow check" finished`) {
				t.Fatalf("the next process's list = %q\nnotices %v: want the task and the notice of its ending", text, list["notices"])
			}
			w.result("call_2", text)
			w.callTool("call_3", "superagents_output", map[string]any{"task_id": id})
			if text, _ := next.ok("superagents_output", map[string]any{"task_id": id}); !strings.HasSuffix(text, "Gate passed.") {
				t.Errorf("the next process's output = %q", text)
			}
			w.result("call_3", "read")
			resume := map[string]any{"resume": id, "prompt": "What is 2+2?"}
			w.callTool("call_4", "superagents_task", resume)
			if text, _ := next.ok("superagents_task", resume); !strings.Contains(text, "resume #1") {
				t.Errorf("the next process's resume = %q", text)
			}
			h.stack.WaitTask(t, id)
			next.cs.Close()

			// A third process gets the resume's notice, not the first
			// ending's again.
			w.callTool("call_5", "superagents_list", map[string]any{})
			third := h.connect(inMemory, host.client, "1.0.2")
			_, list = third.ok("superagents_list", map[string]any{})
			notices, _ = list["notices"].([]any)
			if len(notices) != 1 || !strings.Contains(notices[0].(string), "Resume #1") {
				t.Errorf("the third process's notices = %v: want the resume's only", list["notices"])
			}

			// Another conversation of the same host does not see it.
			other.user("What did the other conversation launch?")
			other.callTool("call_9", "superagents_output", map[string]any{"task_id": id})
			stranger := h.connect(inMemory, host.client, "1.0.0")
			msg := stranger.fails("superagents_output", map[string]any{"task_id": id})
			if !strings.HasPrefix(msg, "no task with id "+id+" in this conversation") || !strings.Contains(msg, "superagents task output "+id) {
				t.Errorf("another conversation's output = %q: want not found here, and where to read it", msg)
			}
			if _, list := stranger.ok("superagents_list", map[string]any{}); len(list["tasks"].([]any)) != 0 {
				t.Errorf("another conversation lists %v", list["tasks"])
			}

			link, err := h.store.HostLink(ctx, "mcp:"+host.name, host.sessions[0])
			if err != nil {
				t.Fatalf("the conversation's session has no link: %v", err)
			}
			if tk, err := h.store.Task(ctx, id); err != nil || tk.ParentSessionID != link.SessionID {
				t.Errorf("task %+v (%v): want it under the conversation's session %s", tk, err, link.SessionID)
			}
		})
	}
}

// TestUnknownConversationKeepsTheConnectionsTasks: a host whose
// transcript holds no such call (here: none at all) keeps today's rule,
// one session per connection, and a fork says it carries no host
// conversation.
func TestUnknownConversationKeepsTheConnectionsTasks(t *testing.T) {
	h := newHarnessWith(t, fakeModel, mcpserver.Options{Getenv: homeEnv(t.TempDir())})
	a := h.connect(inMemory, "claude-code", "1.0.0")
	id := a.launch(map[string]any{"description": "sum", "prompt": "What is 2+2?"})
	a.notification()
	b := h.connect(inMemory, "claude-code", "1.0.0")
	if _, list := b.ok("superagents_list", map[string]any{}); len(list["tasks"].([]any)) != 0 {
		t.Errorf("another connection lists %v", list["tasks"])
	}
	if text, _ := a.ok("superagents_output", map[string]any{"task_id": id}); !strings.HasSuffix(text, "2+2 equals 4.") {
		t.Errorf("the launching connection's output = %q", text)
	}
}

// TestNoticeOncePerConversation: two processes of one conversation
// connected at once get each notice once between them: the one that asks
// first.
func TestNoticeOncePerConversation(t *testing.T) {
	home := t.TempDir()
	// The task ends only once both processes have looked: a task that
	// ended before the second's first list would be its notice to take.
	gate := make(chan struct{})
	h := newHarnessWith(t, func(req llmtest.Request) llmtest.Reply {
		select {
		case <-gate:
		case <-time.After(waitLimit):
		}
		return fakeModel(req)
	}, mcpserver.Options{Getenv: homeEnv(home)})
	host := conversationHosts[0]
	w := host.open(t, home, h.ws, host.sessions[0])
	w.user("Sum it in the background.")
	launch := map[string]any{"description": "sum", "prompt": "What is 2+2?", "agent": "general"}
	w.callTool("call_1", "superagents_task", launch)
	a := h.connect(inMemory, host.client, "1.0.0")
	_, data := a.ok("superagents_task", launch)
	w.result("call_1", "launched")
	w.callTool("call_2", "superagents_list", map[string]any{})
	b := h.connect(inMemory, host.client, "1.0.1")
	if _, list := b.ok("superagents_list", map[string]any{}); len(list["tasks"].([]any)) != 1 {
		t.Fatalf("the second process lists %v, want the conversation's task", list["tasks"])
	}
	close(gate)
	h.stack.WaitTask(t, data["id"].(string))
	if _, list := a.ok("superagents_list", map[string]any{}); list["notices"] == nil {
		t.Fatalf("the first process to ask got no notice: %v", list)
	}
	if _, list := b.ok("superagents_list", map[string]any{}); list["notices"] != nil {
		t.Errorf("the other process of the conversation got the notice again: %v", list["notices"])
	}
}
