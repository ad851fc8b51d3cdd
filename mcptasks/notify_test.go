package mcptasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/superagents/superagents/mcptasks"
)

// pipeClient speaks raw JSON-RPC to a server over an in-memory
// connection: the SDK's client cannot ask for task ids in
// subscriptions/listen, nor receive notifications/tasks.
type pipeClient struct {
	t    *testing.T
	conn mcp.Connection
	in   chan jsonrpc.Message
	raw  *rawClient // for the _meta of its requests
}

// servePipe serves s, with task notifications from n, to a new pipeClient
// named name that declares the extension or not.
func servePipe(t *testing.T, s *mcp.Server, n *mcptasks.Notifier, name string, declare bool) *pipeClient {
	t.Helper()
	return servePipeOn(t, s, n.Wrap, name, declare)
}

// servePipeOn is servePipe with the server's side of the connection
// wrapped by wrap.
func servePipeOn(t *testing.T, s *mcp.Server, wrap func(mcp.Transport) mcp.Transport, name string, declare bool) *pipeClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	serverSide, clientSide := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, wrap(serverSide), nil)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := clientSide.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &pipeClient{t: t, conn: conn, in: make(chan jsonrpc.Message, 64), raw: &rawClient{name: name, declare: declare}}
	go func() {
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				close(c.in)
				return
			}
			c.in <- msg
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		ss.Close()
		cancel()
	})
	return c
}

func (c *pipeClient) send(id any, method string, params map[string]any) {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = c.raw.meta()
	raw, err := json.Marshal(params)
	if err != nil {
		c.t.Fatal(err)
	}
	msg := &jsonrpc.Request{Method: method, Params: raw}
	if id != nil {
		if msg.ID, err = jsonrpc.MakeID(id); err != nil {
			c.t.Fatal(err)
		}
	}
	if err := c.conn.Write(context.Background(), msg); err != nil {
		c.t.Fatalf("write %s: %v", method, err)
	}
}

// next is the next message from the server, as JSON.
func (c *pipeClient) next() map[string]any {
	c.t.Helper()
	select {
	case msg, ok := <-c.in:
		if !ok {
			c.t.Fatal("the server closed the connection")
		}
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			c.t.Fatal(err)
		}
		return decode(c.t, string(b))
	case <-time.After(10 * time.Second):
		c.t.Fatal("no message from the server")
	}
	return nil
}

// nothingPending checks that the server sent nothing: the answer to a
// ping is the next message.
func (c *pipeClient) nothingPending(id string) {
	c.t.Helper()
	c.send(id, "ping", nil)
	if got := c.next(); got["id"] != id {
		c.t.Fatalf("got %s, want nothing before the answer to ping %s", pretty(got), id)
	}
}

func newNotifier(t *testing.T, b *memBackend) *mcptasks.Notifier {
	t.Helper()
	n, err := mcptasks.NewNotifier(mcptasks.NotifierOptions{
		Backend: b,
		Caller:  func(_ context.Context, req mcp.Request) (string, error) { return callerOf(req), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// withoutMeta returns the params of a message, and their _meta apart.
func paramsOf(t *testing.T, msg map[string]any) (map[string]any, map[string]any) {
	t.Helper()
	p, _ := msg["params"].(map[string]any)
	if p == nil {
		t.Fatalf("no params: %s", pretty(msg))
	}
	meta, _ := p["_meta"].(map[string]any)
	delete(p, "_meta")
	return p, meta
}

// TestTaskNotifications: a client subscribes to its task with
// subscriptions/listen (SEP-2575, notifications.taskIds as SEP-2663 adds
// it); the acknowledgement lists the task and leaves out one it may not
// have; the task's state follows at once, and each change of status
// after, as the specification's example writes it, tagged with the
// subscription; the same state is not sent twice, nor an older state
// after the task's end; the subscription stays
// open until the client cancels it, and then nothing more comes.
func TestTaskNotifications(t *testing.T) {
	b := newMemBackend()
	s := newServer(t, b)
	n := newNotifier(t, b)
	c := servePipe(t, s, n, "claude-code", true)

	c.send(1.0, "tools/call", map[string]any{"name": "get_weather", "arguments": map[string]any{"city": "New York"}})
	if got := c.next(); got["id"] != 1.0 {
		t.Fatalf("tools/call answered %s", pretty(got))
	}
	b.put("someone-else", mcptasks.State{ID: "foreign", CreatedAt: at("10:00:00")})
	if n.Subscribed(exampleID) {
		t.Fatal("subscribed before any listen")
	}

	c.send("listen-1", "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{exampleID, "foreign", "unknown"}}})
	ack := c.next()
	if ack["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message %s, want the acknowledgement", pretty(ack))
	}
	p, meta := paramsOf(t, ack)
	if want := decode(t, `{"notifications": {"taskIds": ["`+exampleID+`"]}}`); !reflect.DeepEqual(p, want) {
		t.Errorf("acknowledged %s, want %s", pretty(p), pretty(want))
	}
	if meta[mcp.MetaKeySubscriptionID] != "listen-1" {
		t.Errorf("acknowledgement _meta %v, want the subscription id", meta)
	}
	if !n.Subscribed(exampleID) || n.Subscribed("foreign") {
		t.Error("Subscribed disagrees with the acknowledgement")
	}

	// The state when the subscription begins.
	first := c.next()
	p, meta = paramsOf(t, first)
	if first["method"] != mcptasks.NotificationStatus || p["taskId"] != exampleID || p["status"] != "working" || meta[mcp.MetaKeySubscriptionID] != "listen-1" {
		t.Fatalf("first notification %s", pretty(first))
	}
	if _, ok := p["resultType"]; ok {
		t.Errorf("a notification carries resultType: %s", pretty(p))
	}

	// A progress message alone is not a change of status.
	b.set(exampleID, func(st *mcptasks.State) { st.Message = "Halfway." })
	st, _ := b.Get(context.Background(), "claude-code", exampleID)
	n.Notify(context.Background(), st)
	c.nothingPending("ping-1")

	// Extension specification, "Task Status Notifications".
	b.set(exampleID, func(st *mcptasks.State) {
		st.Status, st.Message, st.UpdatedAt = mcptasks.StatusCompleted, "", at("10:50:00")
		st.Result = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Operation completed successfully."}}}
	})
	st, _ = b.Get(context.Background(), "claude-code", exampleID)
	n.Notify(context.Background(), st)
	got := c.next()
	want := decode(t, `{
  "jsonrpc": "2.0",
  "method": "notifications/tasks",
  "params": {
    "taskId": "786512e2-9e0d-44bd-8f29-789f320fe840",
    "status": "completed",
    "createdAt": "2025-11-25T10:30:00Z",
    "lastUpdatedAt": "2025-11-25T10:50:00Z",
    "ttlMs": 60000,
    "pollIntervalMs": 5000,
    "result": {
      "content": [
        {
          "type": "text",
          "text": "Operation completed successfully."
        }
      ],
      "isError": false
    }
  }
}`)
	_, meta = paramsOf(t, got)
	if !reflect.DeepEqual(got, want) || meta[mcp.MetaKeySubscriptionID] != "listen-1" {
		t.Errorf("notification\n%s\nwant\n%s\nwith the subscription id in _meta (%v)", pretty(got), pretty(want), meta)
	}
	n.Notify(context.Background(), st) // the same again
	c.nothingPending("ping-2")
	// A state read before the task ended, delivered late, is not sent: an
	// ended task's notification is its last.
	stale := st
	stale.Status, stale.Result = mcptasks.StatusWorking, nil
	n.Notify(context.Background(), stale)
	c.nothingPending("ping-stale")

	// Cancelled: no more, and no answer to the listen.
	c.send(nil, "notifications/cancelled", map[string]any{"requestId": "listen-1"})
	c.nothingPending("ping-3")
	if n.Subscribed(exampleID) {
		t.Error("still subscribed after the client cancelled")
	}
	b.set(exampleID, func(st *mcptasks.State) { st.Status = mcptasks.StatusFailed })
	st, _ = b.Get(context.Background(), "claude-code", exampleID)
	n.Notify(context.Background(), st)
	c.nothingPending("ping-4")
}

// TestTaskNotificationsRefused: a listen for tasks from a client that did
// not declare the extension is the specification's -32021 error; one for
// tasks the client may not have is acknowledged without them and ends at
// once, as the SDK ends a listen with nothing to send.
func TestTaskNotificationsRefused(t *testing.T) {
	b := newMemBackend()
	s := newServer(t, b)
	n := newNotifier(t, b)
	b.put("claude-code", mcptasks.State{ID: exampleID, CreatedAt: at("10:30:00")})

	plain := servePipe(t, s, n, "claude-code", false)
	plain.send(12.0, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{exampleID}}})
	got := plain.next()
	e, _ := got["error"].(map[string]any)
	want := decode(t, `{"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}`)
	if got["id"] != 12.0 || e == nil || e["code"] != -32021.0 || !reflect.DeepEqual(e["data"], want) {
		t.Fatalf("listen without the extension: %s", pretty(got))
	}
	plain.nothingPending("ping-1")

	other := servePipe(t, s, n, "another-client", true)
	other.send(7.0, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{exampleID}}})
	ack := other.next()
	p, _ := paramsOf(t, ack)
	if ack["method"] != "notifications/subscriptions/acknowledged" || !reflect.DeepEqual(p, decode(t, `{"notifications": {}}`)) {
		t.Fatalf("acknowledgement %s, want one without the task", pretty(ack))
	}
	if end := other.next(); end["id"] != 7.0 || end["result"] == nil {
		t.Fatalf("got %s, want the listen ended", pretty(end))
	}
	if n.Subscribed(exampleID) {
		t.Error("another client's listen subscribed to the task")
	}
}

// TestTaskNotificationsPerConnection: a connection wrapped with a caller
// of its own (WrapFor) subscribes as that caller, whatever its listens'
// _meta say: of two clients with the same name, the one the server knows
// as the task's owner gets the task, the other an acknowledgement without
// it; a caller that cannot be told refuses the listen.
func TestTaskNotificationsPerConnection(t *testing.T) {
	b := newMemBackend()
	s := newServer(t, b)
	n := newNotifier(t, b)
	b.put("connection-a", mcptasks.State{ID: exampleID, CreatedAt: at("10:30:00")})
	as := func(caller string, err error) func(mcp.Transport) mcp.Transport {
		return func(tr mcp.Transport) mcp.Transport {
			return n.WrapFor(tr, func(context.Context) (string, error) { return caller, err })
		}
	}
	tests := []struct {
		name      string
		wrap      func(mcp.Transport) mcp.Transport
		want      string // the acknowledgement's notifications
		refusal   bool
		subscribe bool
	}{
		{"the owner's connection", as("connection-a", nil), `{"taskIds": ["` + exampleID + `"]}`, false, true},
		{"another connection of a client with the same name", as("connection-b", nil), `{}`, false, false},
		{"a connection whose caller cannot be told", as("", errors.New("no such connection")), "", true, false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := servePipeOn(t, s, tt.wrap, "claude-code", true)
			id := float64(i + 1)
			c.send(id, "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{exampleID}}})
			got := c.next()
			if tt.refusal {
				if e, _ := got["error"].(map[string]any); got["id"] != id || e == nil || e["code"] != float64(mcptasks.CodeInternalError) {
					t.Fatalf("got %s, want the listen refused with an internal error", pretty(got))
				}
				return
			}
			p, _ := paramsOf(t, got)
			if got["method"] != "notifications/subscriptions/acknowledged" || !reflect.DeepEqual(p["notifications"], decode(t, tt.want)) {
				t.Fatalf("acknowledgement %s, want notifications %s", pretty(got), tt.want)
			}
			if n.Subscribed(exampleID) != tt.subscribe {
				t.Errorf("Subscribed = %v, want %v", !tt.subscribe, tt.subscribe)
			}
			if !tt.subscribe {
				if end := c.next(); end["id"] != id || end["result"] == nil {
					t.Fatalf("got %s, want the listen ended", pretty(end))
				}
				return
			}
			if first := c.next(); first["method"] != mcptasks.NotificationStatus {
				t.Fatalf("got %s, want the task's state", pretty(first))
			}
			c.send(nil, "notifications/cancelled", map[string]any{"requestId": id})
			c.nothingPending("ping")
		})
	}
}
