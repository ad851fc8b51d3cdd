package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/mcptasks"
)

// taskListener wraps a client's transport: it sends subscriptions/listen
// for task ids, which the SDK's client cannot ask for, and takes what the
// server sends on those subscriptions (and notifications/tasks, which the
// SDK's client does not know) before the SDK's client sees it.
type taskListener struct {
	mcp.Transport
	conn *listenerConn
}

func (l *taskListener) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := l.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	l.conn = &listenerConn{Connection: c, got: make(chan map[string]any, 64)}
	return l.conn, nil
}

type listenerConn struct {
	mcp.Connection
	got chan map[string]any
}

// listenPrefix starts the ids of the listens the tests send, which the
// SDK's client never uses (its ids are numbers).
const listenPrefix = "listen-"

func (c *listenerConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil || !onListen(msg) {
			return msg, err
		}
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		c.got <- m
	}
}

func onListen(msg jsonrpc.Message) bool {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.Method == mcptasks.NotificationStatus {
			return true
		}
		var p struct {
			Meta map[string]any `json:"_meta"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			id, _ := p.Meta[mcp.MetaKeySubscriptionID].(string)
			return strings.HasPrefix(id, listenPrefix)
		}
	case *jsonrpc.Response:
		id, _ := m.ID.Raw().(string)
		return strings.HasPrefix(id, listenPrefix)
	}
	return false
}

// listen subscribes to the tasks' notifications, declaring the extension.
func (l *taskListener) listen(t *testing.T, id string, taskIDs ...string) {
	t.Helper()
	params, err := json.Marshal(map[string]any{
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    statelessRevision,
			mcp.MetaKeyClientInfo:         map[string]any{"name": "tasks-client", "version": "1.0"},
			mcp.MetaKeyClientCapabilities: tasksClient(),
		},
		"notifications": map[string]any{"taskIds": taskIDs},
	})
	if err != nil {
		t.Fatal(err)
	}
	rid, err := jsonrpc.MakeID(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.conn.Write(context.Background(), &jsonrpc.Request{ID: rid, Method: "subscriptions/listen", Params: params}); err != nil {
		t.Fatalf("subscriptions/listen: %v", err)
	}
}

// next is the next message of the subscriptions, with its params and
// their _meta.
func (l *taskListener) next(t *testing.T) (msg, params, meta map[string]any) {
	t.Helper()
	select {
	case msg = <-l.conn.got:
	case <-time.After(waitLimit):
		t.Fatal("no message on the subscription")
	}
	params, _ = msg["params"].(map[string]any)
	meta, _ = params["_meta"].(map[string]any)
	return msg, params, meta
}

// TestTaskStatusNotifications: a client of the 2026-07-28 revision that
// declares the Tasks extension subscribes to the task it launched, and is
// told of each change of its status, from the change log: it asks its
// user (input_required, with the elicitation to answer), works again once
// answered, and completes with the answer tasks/get gives. Each
// notification carries the subscription's id; none comes for a task it
// did not subscribe to, and the subscription stays open after the SDK
// would have ended it.
func TestTaskStatusNotifications(t *testing.T) {
	h := newAskHarness(t)
	gate := make(chan struct{})
	var open sync.Once
	release := func() { open.Do(func() { close(gate) }) }
	t.Cleanup(release)

	l := &taskListener{}
	h.clientTransport = func(tr mcp.Transport) mcp.Transport { l.Transport = tr; return l }
	c := h.connectAt(inMemory, "tasks-client", "1.0", statelessRevision, tasksClient())

	id := c.deferred(h, map[string]any{"description": "marker", "prompt": "please run the marker", "agent": "general"})
	l.listen(t, "listen-1", id)
	ack, p, meta := l.next(t)
	if ack["method"] != "notifications/subscriptions/acknowledged" || meta[mcp.MetaKeySubscriptionID] != "listen-1" {
		t.Fatalf("first message %v, want the acknowledgement", ack)
	}
	if notes, _ := p["notifications"].(map[string]any); notes == nil || !slices.Equal(anyStrings(notes["taskIds"]), []string{id}) {
		t.Fatalf("acknowledged %v, want the task", p)
	}

	var statuses []string
	var key string
	for key == "" {
		status, p := nextStatus(t, l, id)
		statuses = append(statuses, status)
		switch status {
		case "working":
		case "input_required":
			reqs, _ := p["inputRequests"].(map[string]any)
			for k := range reqs {
				key = k
			}
			if len(reqs) != 1 || !strings.Contains(p["statusMessage"].(string), "echo ask-marker-$((6*7))") {
				t.Fatalf("input_required notification %v, want the command asked about", p)
			}
		default:
			t.Fatalf("status %s before the task asked", status)
		}
	}

	// A task nobody subscribed to runs to its end meanwhile, unheard.
	other := c.deferred(h, map[string]any{"description": "unheard", "prompt": "say done", "agent": "general"})
	if done := c.waitTask(other); done.Status != mcptasks.StatusCompleted {
		t.Fatalf("unsubscribed task ended %+v", done)
	}

	// The model's answer once the command ran waits for the test, so the
	// task is seen working again.
	h.model.Handle(func(req llmtest.Request) llmtest.Reply {
		if strings.Contains(string(req.Body), "ask-marker-42") {
			<-gate
		}
		return askModel(req)
	})
	if err := c.updateTask(id, mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"allow": true}}}); err != nil {
		t.Fatalf("tasks/update: %v", err)
	}
	status, _ := nextStatus(t, l, id)
	statuses = append(statuses, status)
	if status != "working" {
		t.Fatalf("after the answer: %s, want working", status)
	}
	release()
	status, p = nextStatus(t, l, id)
	statuses = append(statuses, status)
	result, _ := p["result"].(map[string]any)
	text, _ := json.Marshal(result["content"])
	if status != "completed" || result["isError"] != false || !strings.Contains(string(text), "The command printed ask-marker-42.") {
		t.Fatalf("last notification %v, want completed with the task's answer", p)
	}
	if got := c.waitTask(id); got.Status != mcptasks.StatusCompleted {
		t.Errorf("tasks/get says %s", got.Status)
	}
	t.Logf("statuses: %v", statuses)
}

// nextStatus reads a notifications/tasks of the subscription listen-1,
// which must be about task id.
func nextStatus(t *testing.T, l *taskListener, id string) (string, map[string]any) {
	t.Helper()
	msg, p, meta := l.next(t)
	if msg["method"] != mcptasks.NotificationStatus || meta[mcp.MetaKeySubscriptionID] != "listen-1" {
		t.Fatalf("got %v, want notifications/tasks of the subscription", msg)
	}
	if p["taskId"] != id {
		t.Fatalf("notification about task %v, want only %s", p["taskId"], id)
	}
	status, _ := p["status"].(string)
	return status, p
}

func anyStrings(v any) []string {
	list, _ := v.([]any)
	var s []string
	for _, x := range list {
		str, _ := x.(string)
		s = append(s, str)
	}
	return s
}
