package mcpserver_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/mcpserver"
	"github.com/superagents/superagents/internal/stacktest"
	"github.com/superagents/superagents/mcptasks"
)

// The launchers and the other clients of TestTasksBelongToTheirLauncher.
const (
	// Launchers: a Claude Code conversation over stdio (its transcript
	// names it); a client over stdio whose conversation is not known; a
	// client over HTTP with the API token "alpha".
	byConversation = "conversation"
	byConnection   = "connection"
	byToken        = "token"

	// Other clients that know the task's id.
	itself              = "the launching client"
	laterProcess        = "a later process of the conversation, before any call"
	laterProcessCalled  = "a later process of the conversation, after a call"
	otherConversation   = "another conversation of the workspace"
	otherConnection     = "another connection over stdio"
	otherWorkspace      = "a client of another workspace's server on the same store"
	sameToken           = "another client with the same token"
	otherToken          = "a client with another token"
	overHTTPWithNoToken = "a client over HTTP"
	overStdio           = "a client over stdio"
)

// TestTasksBelongToTheirLauncher: the Tasks extension's requests reach a
// task only as the principal that launched it, with the best identity
// each transport gives. A client that knows the id of a task waiting for
// its user's answer either gets, subscribes to, answers and cancels it,
// or finds it "not found" for all four and leaves it waiting. Over HTTP
// the principal is the API token; over stdio the workspace of the server,
// and the host conversation (or the connection) once a call told it: a
// later process of the conversation reaches the task before any call
// (Claude Code polls after --resume) and after one, another conversation
// or connection does not, nor a client of another workspace's server
// sharing the store.
func TestTasksBelongToTheirLauncher(t *testing.T) {
	tests := []struct {
		launcher, other string
		reach           bool
	}{
		{byConversation, itself, true},
		{byConversation, laterProcess, true},
		{byConversation, laterProcessCalled, true},
		{byConversation, otherConversation, false},
		{byConversation, otherWorkspace, false},
		{byConversation, overHTTPWithNoToken, false},
		{byConnection, itself, true},
		{byConnection, otherConnection, false},
		{byToken, itself, true},
		{byToken, sameToken, true},
		{byToken, otherToken, false},
		{byToken, overStdio, false},
	}
	for _, tt := range tests {
		t.Run(tt.launcher+": "+tt.other, func(t *testing.T) {
			w := newLauncherWorld(t)
			launcher := w.launcher(tt.launcher)
			args := map[string]any{"description": "marker", "prompt": "please run the marker", "agent": "general"}
			if tt.launcher == byConversation {
				w.convA.callTool("call_launch", "superagents_task", args)
			}
			id := launcher.c.deferred(w.h, args)
			if tt.launcher == byConversation {
				w.convA.result("call_launch", "launched")
			}
			_, key, _ := launcher.c.waitInput(id)

			var other *subject
			if tt.other == itself {
				other = launcher
			} else {
				other = w.other(tt.other, id)
			}
			if other.l != nil { // over HTTP a listen is acknowledged without task ids
				other.l.listen(t, "listen-1", id)
				ack, p, _ := other.l.next(t)
				notes, _ := p["notifications"].(map[string]any)
				if got := slices.Contains(anyStrings(notes["taskIds"]), id); ack["method"] != "notifications/subscriptions/acknowledged" || got != tt.reach {
					t.Errorf("subscriptions/listen: %v; task acknowledged %v, want %v", ack, got, tt.reach)
				}
			}

			task, err := other.c.getTask(id)
			if tt.reach && (err != nil || task.Status != mcptasks.StatusInputRequired) {
				t.Errorf("tasks/get = %+v, %v; want the task waiting for input", task, err)
			}
			if !tt.reach {
				wantNotFound(t, "tasks/get", err)
			}

			if tt.reach {
				// An answer to a key not asked is ignored: the task goes on
				// waiting, for the cancel below.
				err = other.c.updateTask(id, mcp.InputResponseMap{"never-asked": &mcp.ElicitResult{Action: "decline"}})
				if err != nil {
					t.Errorf("tasks/update: %v", err)
				}
			} else {
				err = other.c.updateTask(id, mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}})
				wantNotFound(t, "tasks/update", err)
			}
			if still, err := launcher.c.getTask(id); err != nil || still.Status != mcptasks.StatusInputRequired || still.InputRequests[key] == nil {
				t.Errorf("after tasks/update, the launcher sees %+v, %v; want the question still open", still, err)
			}

			err = other.c.cancelTask(id)
			if !tt.reach {
				wantNotFound(t, "tasks/cancel", err)
				if tk, err := w.h.store.Task(context.Background(), id); err != nil || !tk.Status.Active() {
					t.Errorf("after a refused tasks/cancel the task is %+v, %v; want it still running", tk.Status, err)
				}
				if err := launcher.c.cancelTask(id); err != nil {
					t.Fatalf("the launcher's tasks/cancel: %v", err)
				}
			} else if err != nil {
				t.Errorf("tasks/cancel: %v", err)
			}
			if done := launcher.c.waitTask(id); done.Status != mcptasks.StatusCancelled {
				t.Errorf("the task ended %s, want cancelled", done.Status)
			}
		})
	}
}

// wantNotFound checks that a tasks/* request was answered as for a task
// that does not exist.
func wantNotFound(t *testing.T, method string, err error) {
	t.Helper()
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || !strings.HasSuffix(rpc.Message, "Task not found") {
		t.Errorf("%s: %v, want the task not found", method, err)
	}
}

// launcherWorld is a server whose tasks ask their user, with the
// transcripts of two Claude Code conversations in its workspace.
type launcherWorld struct {
	t            *testing.T
	h            *harness
	convA, convB toolCaller
}

func newLauncherWorld(t *testing.T) *launcherWorld {
	home := t.TempDir()
	h := newAskHarnessWith(t, mcpserver.Options{Getenv: homeEnv(home)})
	claude := conversationHosts[0]
	w := &launcherWorld{t: t, h: h, convA: claude.open(t, home, h.ws, claude.sessions[0]), convB: claude.open(t, home, h.ws, claude.sessions[1])}
	w.convA.user("Run the marker in the background.")
	w.convB.user("What runs in the background?")
	return w
}

// subject is a client of the Tasks extension; over stdio, l listens for
// its tasks' notifications.
type subject struct {
	c *conn
	l *taskListener
}

// viaStdio connects a client over stdio (in memory) to h.
func viaStdio(h *harness, name string) *subject {
	l := &taskListener{}
	h.clientTransport = func(tr mcp.Transport) mcp.Transport { l.Transport = tr; return l }
	return &subject{c: h.connectAt(inMemory, name, "1.0", statelessRevision, tasksClient()), l: l}
}

// viaHTTP connects a client over HTTP to h, presenting token (none when
// "").
func viaHTTP(h *harness, token string) *subject {
	h.token = token
	return &subject{c: h.connectAt(streamableHTTP, "claude-code", "1.0", statelessRevision, tasksClient())}
}

func (w *launcherWorld) launcher(kind string) *subject {
	switch kind {
	case byConversation:
		return viaStdio(w.h, "claude-code")
	case byConnection:
		return viaStdio(w.h, "tasks-client")
	case byToken:
		return viaHTTP(w.h, "alpha")
	}
	w.t.Fatalf("unknown launcher %q", kind)
	return nil
}

// other connects the client kind names, which knows task id.
func (w *launcherWorld) other(kind, id string) *subject {
	t := w.t
	switch kind {
	case laterProcess, overStdio:
		return viaStdio(w.h, "claude-code")
	case laterProcessCalled, otherConversation:
		// The call tells the connection's conversation: the launcher's
		// lists the task, the other conversation does not.
		conv := w.convA
		if kind == otherConversation {
			conv = w.convB
		}
		conv.callTool("call_list", "superagents_list", map[string]any{})
		s := viaStdio(w.h, "claude-code")
		text, _ := s.c.ok("superagents_list", map[string]any{})
		conv.result("call_list", "listed")
		if strings.Contains(text, id) != (kind == laterProcessCalled) {
			t.Fatalf("%s lists %q", kind, text)
		}
		if _, err := w.h.store.HostLink(context.Background(), "mcp:claude-code", conversationHosts[0].sessions[1]); kind == otherConversation && err != nil {
			t.Fatalf("the other conversation was not told: %v", err)
		}
		return s
	case otherConnection:
		return viaStdio(w.h, "tasks-client")
	case otherWorkspace:
		return viaStdio(anotherWorkspace(t, w.h), "claude-code")
	case sameToken:
		return viaHTTP(w.h, "alpha")
	case otherToken:
		return viaHTTP(w.h, "beta")
	case overHTTPWithNoToken:
		return viaHTTP(w.h, "")
	}
	t.Fatalf("unknown client %q", kind)
	return nil
}

// anotherWorkspace is the server of another workspace on h's store, as a
// background server of another workspace shares the data directory.
func anotherWorkspace(t *testing.T, h *harness) *harness {
	t.Helper()
	ws := t.TempDir()
	stack := stacktest.Open(t, h.dir, ws, stacktest.Config(t, ws, h.model.BaseURL()))
	srv, err := mcpserver.New(mcpserver.Options{Runtime: stack.Runtime, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	other := &harness{t: t, ws: ws, dir: h.dir, stack: stack, store: stack.Store, srv: srv}
	t.Cleanup(other.close)
	return other
}

// TestLaunchRecordsItsLauncher: a task launched over MCP records the
// principal it was launched as, a digest that keeps neither the token
// nor the path: the workspace's over stdio, one per API token over HTTP.
func TestLaunchRecordsItsLauncher(t *testing.T) {
	h := newHarness(t, fakeModel)
	stdioTask := viaStdio(h, "tasks-client").c.deferred(h, map[string]any{"description": "over stdio", "prompt": "What is 2+2?", "agent": "general"})
	alpha := viaHTTP(h, "alpha").c.deferred(h, map[string]any{"description": "with alpha", "prompt": "What is 2+2?", "agent": "general"})
	beta := viaHTTP(h, "beta").c.deferred(h, map[string]any{"description": "with beta", "prompt": "What is 2+2?", "agent": "general"})
	launchers := map[string]string{}
	for _, id := range []string{stdioTask, alpha, beta} {
		tk, err := h.store.Task(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		launchers[id] = tk.Launcher
	}
	if l := launchers[stdioTask]; !strings.HasPrefix(l, "workspace:") {
		t.Errorf("a task launched over stdio records launcher %q, want the workspace's", l)
	}
	if a, b := launchers[alpha], launchers[beta]; !strings.HasPrefix(a, "token:") || !strings.HasPrefix(b, "token:") || a == b {
		t.Errorf("tasks launched with two tokens record launchers %q and %q, want one per token", a, b)
	}
	for _, l := range launchers {
		if strings.Contains(l, "alpha") || strings.Contains(l, "beta") || strings.Contains(l, h.ws) {
			t.Errorf("launcher %q keeps the token or the path it names", l)
		}
	}
	for _, id := range []string{stdioTask, alpha, beta} {
		if tk := h.stack.WaitTask(t, id); tk.Status != sa.TaskCompleted {
			t.Errorf("task %s ended %s", id, tk.Status)
		}
	}
}
