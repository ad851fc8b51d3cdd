package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/stacktest"
)

type history struct {
	SessionID string       `json:"session_id"`
	Messages  []sa.Message `json:"messages"`
}

func (h history) texts() []string {
	var out []string
	for _, m := range h.Messages {
		if t := m.Text(); t != "" {
			out = append(out, t)
		}
	}
	return out
}

type sessionState struct {
	sa.Session
	Turn runtime.TurnState `json:"turn"`
}

func TestSessionEndpoints(t *testing.T) {
	h := newHarness(t)

	var created sessionState
	r := h.ok(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"title": "chat"}, &created)
	if created.Agent != "general" || created.Title != "chat" || created.Turn.Status != "idle" || r.header.Get("Location") != "/v1/sessions/"+created.ID {
		t.Fatalf("created = %+v (Location %q)", created, r.header.Get("Location"))
	}
	id := created.ID

	t.Run("message with wait", func(t *testing.T) {
		var got struct {
			Message  sa.Message        `json:"message"`
			Turn     runtime.TurnState `json:"turn"`
			Messages []sa.Message      `json:"messages"`
		}
		h.ok(http.StatusOK, "POST", "/v1/sessions/"+id[:6]+"/messages?wait=true", map[string]any{"text": "quick: 2+2"}, &got)
		if got.Message.ID == 0 || got.Message.Text() != "quick: 2+2" || got.Turn.Status != "completed" || got.Turn.Answer != "answer: 2+2" {
			t.Fatalf("wait reply = %+v", got)
		}
		if len(got.Messages) != 1 || got.Messages[0].Role != sa.RoleAssistant {
			t.Fatalf("the turn's messages = %+v", got.Messages)
		}
	})

	t.Run("message without wait", func(t *testing.T) {
		cursor := h.cursor()
		var got struct {
			Message sa.Message        `json:"message"`
			Turn    runtime.TurnState `json:"turn"`
		}
		h.ok(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", map[string]any{"text": "quick: 3+3"}, &got)
		if got.Message.ID == 0 || got.Turn.Status != "running" {
			t.Fatalf("202 reply = %+v", got)
		}
		// The answer arrives as a change, as event stream clients see it.
		ch := h.waitFor("the answer", cursor, func(c sa.Change) bool {
			m, err := c.Message()
			return c.Kind == sa.ChangeSessionMessage && c.SessionID == id && err == nil && m.Role == sa.RoleAssistant
		})
		if m, _ := ch.Message(); m.Text() != "answer: 3+3" {
			t.Fatalf("answer = %q", m.Text())
		}
		if turn := h.turnEnded(id); turn.Status != "completed" || turn.Answer != "answer: 3+3" {
			t.Fatalf("turn = %+v", turn)
		}
	})

	t.Run("failed turn", func(t *testing.T) {
		var got struct{ Turn runtime.TurnState }
		h.ok(http.StatusOK, "POST", "/v1/sessions/"+id+"/messages?wait=true", map[string]any{"text": "fail"}, &got)
		if got.Turn.Status != "failed" || got.Turn.Error == "" {
			t.Fatalf("turn = %+v, want failed with the reason", got.Turn)
		}
		var state sessionState
		h.ok(http.StatusOK, "GET", "/v1/sessions/"+id, nil, &state)
		if state.Turn.Status != "failed" {
			t.Fatalf("GET session turn = %+v", state.Turn)
		}
	})

	t.Run("history", func(t *testing.T) {
		var got history
		h.ok(http.StatusOK, "GET", "/v1/sessions/"+id+"/history", nil, &got)
		want := []string{"quick: 2+2", "answer: 2+2", "quick: 3+3", "answer: 3+3", "fail"}
		if !slices.Equal(got.texts(), want) {
			t.Fatalf("history = %q, want %q", got.texts(), want)
		}
	})

	var child sessionState
	t.Run("fork", func(t *testing.T) {
		h.ok(http.StatusCreated, "POST", "/v1/sessions/"+id+"/fork", map[string]any{"title": "branch"}, &child)
		if child.ParentID != id || child.Title != "branch" {
			t.Fatalf("fork = %+v", child)
		}
		h.ok(http.StatusOK, "POST", "/v1/sessions/"+child.ID+"/messages?wait=true", map[string]any{"text": "quick: child"}, nil)
		var got history
		h.ok(http.StatusOK, "GET", "/v1/sessions/"+child.ID+"/history", nil, &got)
		want := []string{"quick: 2+2", "answer: 2+2", "quick: 3+3", "answer: 3+3", "fail", "Forked from " + sa.ShortID(id), "quick: child", "answer: child"}
		if !slices.Equal(got.texts(), want) {
			t.Fatalf("child history = %q, want %q", got.texts(), want)
		}
		var parent history
		h.ok(http.StatusOK, "GET", "/v1/sessions/"+id+"/history", nil, &parent)
		if len(parent.texts()) != 5 {
			t.Fatalf("the fork changed its parent: %q", parent.texts())
		}
	})

	t.Run("clear", func(t *testing.T) {
		var got struct{ Message sa.Message }
		h.ok(http.StatusOK, "POST", "/v1/sessions/"+child.ID+"/clear", nil, &got)
		if got.Message.Kind != sa.KindClear {
			t.Fatalf("clear stored %+v", got.Message)
		}
		h.ok(http.StatusOK, "POST", "/v1/sessions/"+child.ID+"/messages?wait=true", map[string]any{"text": "quick: fresh"}, nil)
		var hist history
		h.ok(http.StatusOK, "GET", "/v1/sessions/"+child.ID+"/history", nil, &hist)
		if want := []string{"quick: fresh", "answer: fresh"}; !slices.Equal(hist.texts(), want) {
			t.Fatalf("history after clear = %q, want %q", hist.texts(), want)
		}
	})

	t.Run("list", func(t *testing.T) {
		var all struct {
			Sessions []sa.SessionSummary `json:"sessions"`
			Limit    int                 `json:"limit"`
		}
		h.ok(http.StatusOK, "GET", "/v1/sessions", nil, &all)
		if len(all.Sessions) != 2 || all.Sessions[0].ID != child.ID || all.Limit != 50 {
			t.Fatalf("sessions = %+v", all)
		}
		var page struct{ Sessions []sa.SessionSummary }
		h.ok(http.StatusOK, "GET", "/v1/sessions?limit=1&offset=1", nil, &page)
		if len(page.Sessions) != 1 || page.Sessions[0].ID != id {
			t.Fatalf("second page = %+v", page.Sessions)
		}
		h.ok(http.StatusOK, "GET", "/v1/sessions?parent="+id[:6], nil, &page)
		if len(page.Sessions) != 1 || page.Sessions[0].ID != child.ID {
			t.Fatalf("children of %s = %+v", id, page.Sessions)
		}
	})
}

// An agent that launches tasks in a turn run by the server is woken when
// they have all ended, to answer their notifications, as run --wait does.
func TestAgentIsWokenWhenItsTasksEnd(t *testing.T) {
	h := newHarness(t)
	parent := h.session()
	gate := h.gate("children")
	var turn struct{ Turn runtime.TurnState }
	h.ok(http.StatusOK, "POST", "/v1/sessions/"+parent.ID+"/messages?wait=true", map[string]any{"text": "launch: 2 gate " + string(gate)}, &turn)
	if !strings.HasPrefix(turn.Turn.Answer, "launched 2") {
		t.Fatalf("turn = %+v", turn.Turn)
	}
	// The children end after the turn did: the agent is woken, and its
	// answer ("noted") comes after both notifications.
	cursor := h.cursor()
	gate.open(t)
	notes := 0
	h.waitFor("the woken agent's answer", cursor, func(c sa.Change) bool {
		m, err := c.Message()
		if c.Kind != sa.ChangeSessionMessage || c.SessionID != parent.ID || err != nil {
			return false
		}
		if m.Kind == sa.KindNotification {
			notes++
		}
		return m.Role == sa.RoleAssistant && m.Text() == "noted" && notes == 2
	})

	// A task launched through the API does not wake its parent's agent:
	// no agent asked for it.
	other := h.session()
	task := h.launch(other.ID, "from the API", "quick: api")
	h.waitTask(task.ID)
	var state sessionState
	h.ok(http.StatusOK, "GET", "/v1/sessions/"+other.ID, nil, &state)
	var hist history
	h.ok(http.StatusOK, "GET", "/v1/sessions/"+other.ID+"/history", nil, &hist)
	if state.Turn.Status != "idle" || len(hist.Messages) != 1 || hist.Messages[0].Kind != sa.KindNotification {
		t.Fatalf("the parent of an API task: turn %+v, history %q; want idle, with only the notification", state.Turn, hist.texts())
	}
}

// A task's session is the task's: while the task runs (and after), it
// takes no message and cannot be cleared, so the task goes on with its
// conversation whole; forking it copies the conversation and is allowed.
func TestTaskSessionBelongsToTheTask(t *testing.T) {
	h := newHarness(t)
	parent := h.session()
	gate := h.gate("task-session")
	task := h.launch(parent.ID, "waits", "gate: "+string(gate))
	tests := []struct {
		name, path string
		body       any
		want       int
	}{
		{"clear", "/clear", nil, http.StatusConflict},
		{"message", "/messages", map[string]any{"text": "hi"}, http.StatusConflict},
		{"fork", "/fork", map[string]any{"title": "a copy"}, http.StatusCreated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.request("POST", "/v1/sessions/"+task.ID+tt.path, tt.body)
			if r.status != tt.want {
				t.Fatalf("POST %s on the session of a running task = %d %s, want %d", tt.path, r.status, r.body, tt.want)
			}
		})
	}
	gate.open(t)
	done := h.waitTask(task.ID)
	if done.Status != sa.TaskCompleted || !strings.HasPrefix(done.Result, "passed") {
		t.Fatalf("the task ended %s (%q, error %q), want completed through the gate", done.Status, done.Result, done.Error)
	}
	var hist history
	h.ok(http.StatusOK, "GET", "/v1/tasks/"+task.ID+"/messages", nil, &hist)
	for _, m := range hist.Messages {
		if m.Kind == sa.KindClear {
			t.Fatalf("the task's session was cleared: %+v", hist.Messages)
		}
	}
}

// TestSessionWritesFollowTheLease: a turn another process runs in a
// session (its lease in the store) keeps the API's messages and clears
// out, as busy; a task's session is refused whatever holds it.
func TestSessionWritesFollowTheLease(t *testing.T) {
	h := newHarness(t)
	sess := h.session()
	// A second process on the same data directory holds the session.
	other := stacktest.Open(t, h.dir, h.ws, h.cfg)
	t.Cleanup(func() { other.Close() })
	turn, err := other.Runtime.Sessions().Begin(context.Background(), sess.ID, runtime.HolderChat)
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string]any{"/messages": map[string]any{"text": "quick: 1+1"}, "/clear": nil}
	for _, path := range []string{"/messages", "/clear"} {
		r := h.request("POST", "/v1/sessions/"+sess.ID+path, bodies[path])
		if r.status != http.StatusConflict || !strings.Contains(string(r.body), "busy") || !strings.Contains(string(r.body), "chat") {
			t.Errorf("POST %s while another process's chat holds the session = %d %s", path, r.status, r.body)
		}
	}
	turn.End()
	h.ok(http.StatusOK, "POST", "/v1/sessions/"+sess.ID+"/messages?wait=true", map[string]any{"text": "quick: 1+1"}, nil)

	task := h.launch(sess.ID, "waiter", "gate: "+string(h.gate("open")))
	for _, path := range []string{"/messages", "/clear"} {
		r := h.request("POST", "/v1/sessions/"+task.ID+path, bodies[path])
		if r.status != http.StatusConflict || !strings.Contains(string(r.body), "resume") {
			t.Errorf("POST %s on a task's session = %d %s", path, r.status, r.body)
		}
	}
	h.gate("open").open(t)
	h.waitTask(task.ID)
}

// TestDeleteSessionAndClearTasks: DELETE removes a session (not a running
// task's); the tasks/clear call cancels and unlists a session's tasks.
func TestDeleteSessionAndClearTasks(t *testing.T) {
	h := newHarness(t)
	sess := h.session()
	task := h.launch(sess.ID, "waiter", "gate: "+string(h.gate("never")))
	h.toolStarted(task.ID)

	if r := h.request("DELETE", "/v1/sessions/"+task.ID, nil); r.status != http.StatusConflict || !strings.Contains(string(r.body), "cancel the task first") {
		t.Fatalf("DELETE a running task's session = %d %s", r.status, r.body)
	}
	var cleared map[string]int
	h.ok(http.StatusOK, "POST", "/v1/sessions/"+sess.ID+"/tasks/clear", nil, &cleared)
	if cleared["cancelled"] != 1 || cleared["cleared"] != 1 {
		t.Fatalf("tasks/clear = %v", cleared)
	}
	if got := h.waitTask(task.ID); got.Status != sa.TaskCancelled {
		t.Fatalf("the cleared task is %s", got.Status)
	}
	var list struct {
		Tasks []sa.Task `json:"tasks"`
	}
	h.ok(http.StatusOK, "GET", "/v1/tasks?include_cleared=false&session="+sess.ID, nil, &list)
	if len(list.Tasks) != 0 {
		t.Fatalf("tasks still listed after clear: %+v", list.Tasks)
	}

	var deleted map[string]string
	h.ok(http.StatusOK, "DELETE", "/v1/sessions/"+sess.ID[:8], nil, &deleted)
	if deleted["deleted"] != sess.ID {
		t.Fatalf("DELETE = %v", deleted)
	}
	if r := h.request("GET", "/v1/sessions/"+sess.ID, nil); r.status != http.StatusNotFound {
		t.Fatalf("GET a deleted session = %d", r.status)
	}
	if r := h.request("DELETE", "/v1/sessions/"+sess.ID, nil); r.status != http.StatusNotFound {
		t.Fatalf("DELETE twice = %d", r.status)
	}
}
