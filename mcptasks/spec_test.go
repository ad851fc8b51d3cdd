package mcptasks_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/superagents/superagents/mcptasks"
)

// The examples below are copied from the Tasks extension's specification,
// modelcontextprotocol/ext-tasks specification/draft/tasks.md (the text
// SEP-2663 made final; the same examples are in the protocol repository's
// seps/2663-tasks-extension.md). Each request is sent as written, with the
// 2026-07-28 _meta triple added where the example says "Other metadata",
// over stateless streamable HTTP on loopback; each answer must equal the
// example, the server's _meta aside.

// step is one request of a flow and the answer the specification shows.
type step struct {
	name   string
	before func(b *memBackend) // what the server's worker does meanwhile
	method string
	params string
	want   string // the whole response
	after  func(t *testing.T, b *memBackend)
}

func runSteps(t *testing.T, steps []step) {
	b := newMemBackend()
	c := &rawClient{url: serveHTTP(t, newServer(t, b), true), name: "claude-code", declare: true}
	for i, s := range steps {
		if s.before != nil {
			s.before(b)
		}
		params := decode(t, s.params)
		name, _ := params["name"].(string)
		if id, ok := params["taskId"].(string); ok {
			name = id
		}
		want := decode(t, s.want)
		got := c.call(t, want["id"], s.method, name, params)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d (%s): %s answered\n%s\nthe specification shows\n%s", i, s.name, s.method, pretty(got), pretty(want))
		}
		if s.after != nil {
			s.after(t, b)
		}
	}
}

// TestSpecExampleMessageFlow follows "Example Message Flow": a task that
// asks for the user's name with an elicitation, gets it through
// tasks/update, and completes.
func TestSpecExampleMessageFlow(t *testing.T) {
	working := `{"jsonrpc":"2.0","id":%d,"result":{"resultType":"complete","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":3600000,"pollIntervalMs":5000}}`
	inputRequired := `{"id":%d,"jsonrpc":"2.0","result":{"resultType":"complete","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"input_required","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":3600000,"pollIntervalMs":5000,
		"inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"Please enter your name.","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}}}}`
	get := `{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840"}`
	runSteps(t, []step{
		{
			name:   "tools/call answered with a task",
			method: "tools/call",
			params: `{"name":"hello_world","arguments":{}}`,
			want:   `{"jsonrpc":"2.0","id":2,"result":{"resultType":"task","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":3600000,"pollIntervalMs":5000}}`,
		},
		{name: "working", method: "tasks/get", params: get, want: fmt.Sprintf(working, 3)},
		{
			name: "input_required",
			before: func(b *memBackend) {
				b.set(exampleID, func(st *mcptasks.State) {
					st.Status = mcptasks.StatusInputRequired
					st.InputRequests = mcp.InputRequestMap{"name": &mcp.ElicitParams{
						Mode: "form", Message: "Please enter your name.",
						RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}},
					}}
				})
			},
			method: "tasks/get", params: get, want: fmt.Sprintf(inputRequired, 4),
		},
		{name: "input_required again before the answer", method: "tasks/get", params: get, want: fmt.Sprintf(inputRequired, 5)},
		{
			name:   "tasks/update",
			method: "tasks/update",
			params: `{"taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","inputResponses":{"name":{"action":"accept","content":{"input":"Luca"}}}}`,
			want:   `{"jsonrpc":"2.0","id":6,"result":{"resultType":"complete"}}`,
			after: func(t *testing.T, b *memBackend) {
				got, ok := b.task(exampleID).responses["name"].(*mcp.ElicitResult)
				if !ok || got.Action != "accept" || got.Content["input"] != "Luca" {
					t.Fatalf("the backend got %#v, want the accepted elicitation with input Luca", b.task(exampleID).responses)
				}
			},
		},
		{name: "working again", method: "tasks/get", params: get, want: fmt.Sprintf(working, 7)},
		{
			name: "completed with the result inline",
			before: func(b *memBackend) {
				b.set(exampleID, func(st *mcptasks.State) {
					st.Status = mcptasks.StatusCompleted
					st.Result = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, Luca!"}}}
				})
			},
			method: "tasks/get", params: get,
			want: `{"jsonrpc":"2.0","id":8,"result":{"resultType":"complete","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"completed","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:50:00Z","ttlMs":3600000,"pollIntervalMs":5000,"result":{"content":[{"type":"text","text":"Hello, Luca!"}],"isError":false}}}`,
		},
	})
}

// TestSpecExampleTaskCreation follows "Task Creation": the
// CreateTaskResult with a statusMessage.
func TestSpecExampleTaskCreation(t *testing.T) {
	runSteps(t, []step{{
		name:   "CreateTaskResult",
		method: "tools/call",
		params: `{"name":"get_weather","arguments":{"city":"New York"}}`,
		want:   `{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"786512e2-9e0d-44bd-8f29-789f320fe840","status":"working","statusMessage":"The operation is now in progress.","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttlMs":60000,"pollIntervalMs":5000}}`,
	}})
}

// TestSpecExampleExecutionErrors follows "Task Execution Errors": a
// JSON-RPC failure is failed with the error; a tool result with isError is
// completed. The specification's two examples mark these tasks/get answers
// resultType "task", against its own rule (in "Task Polling", "Response")
// that tasks/get answers MUST say "complete": the rule wins here.
func TestSpecExampleExecutionErrors(t *testing.T) {
	tests := []struct {
		name  string
		state func(*mcptasks.State)
		want  string
	}{
		{
			name: "failed",
			state: func(st *mcptasks.State) {
				st.Status = mcptasks.StatusFailed
				st.Message = "Tool execution failed: API rate limit exceeded"
				st.Error = &jsonrpc.Error{Code: -32603, Message: "API rate limit exceeded"}
			},
			want: `{"jsonrpc":"2.0","id":4,"result":{"resultType":"task","taskId":"786512e2-9e0d-44bd-8f29-789f820fe840","status":"failed","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttlMs":3600000,"statusMessage":"Tool execution failed: API rate limit exceeded","error":{"code":-32603,"message":"API rate limit exceeded"}}}`,
		},
		{
			name: "completed with isError",
			state: func(st *mcptasks.State) {
				st.Status = mcptasks.StatusCompleted
				st.Result = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Failed to process request: invalid input"}}}
			},
			want: `{"jsonrpc":"2.0","id":5,"result":{"resultType":"task","taskId":"786512e2-9e0d-44bd-8f29-789f820fe840","status":"completed","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z","ttlMs":3600000,"result":{"content":[{"type":"text","text":"Failed to process request: invalid input"}],"isError":true}}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := decode(t, tt.want)
			id := want["result"].(map[string]any)["taskId"].(string) // these examples spell the id ...820fe840
			want["result"].(map[string]any)["resultType"] = "complete"
			st := mcptasks.State{ID: id, CreatedAt: at("10:30:00"), UpdatedAt: at("10:40:00"), TTL: 3600000 * 1e6}
			tt.state(&st)
			b := newMemBackend()
			b.put("claude-code", st)
			c := &rawClient{url: serveHTTP(t, newServer(t, b), true), name: "claude-code", declare: true}
			got := c.call(t, want["id"], "tasks/get", id, map[string]any{"taskId": id})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("tasks/get answered\n%s\nthe specification shows (resultType aside)\n%s", pretty(got), pretty(want))
			}
		})
	}
}

// TestSpecExampleProtocolErrors follows "Protocol Errors" and "Capability
// Negotiation": unknown, foreign and expired tasks, and a client that did
// not declare the extension.
func TestSpecExampleProtocolErrors(t *testing.T) {
	notFound := `{"jsonrpc":"2.0","id":70,"error":{"code":-32602,"message":"Failed to retrieve task: Task not found"}}`
	tests := []struct {
		name    string
		client  string
		declare bool
		id      string
		want    string
		prefix  bool // the example's message is non-normative: compare its start
	}{
		{name: "unknown task", client: "claude-code", declare: true, id: "no-such-task", want: notFound},
		{name: "another caller's task", client: "someone-else", declare: true, id: exampleID, want: notFound},
		{name: "expired task", client: "claude-code", declare: true, id: "expired-task",
			want: `{"jsonrpc":"2.0","id":71,"error":{"code":-32602,"message":"Failed to retrieve task: Task has expired"}}`},
		{name: "client without the extension", client: "claude-code", declare: false, id: exampleID, prefix: true,
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Missing required client capability","data":{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newMemBackend()
			b.put("claude-code", seeds["hello_world"])
			b.put("claude-code", mcptasks.State{ID: "expired-task"})
			b.expire("expired-task")
			c := &rawClient{url: serveHTTP(t, newServer(t, b), true), name: tt.client, declare: tt.declare}
			want := decode(t, tt.want)
			got := c.call(t, want["id"], "tasks/get", tt.id, map[string]any{"taskId": tt.id})
			if tt.prefix {
				msg, _ := got["error"].(map[string]any)["message"].(string)
				wantMsg := want["error"].(map[string]any)["message"].(string)
				if !strings.HasPrefix(msg, wantMsg) {
					t.Fatalf("message %q does not start with %q", msg, wantMsg)
				}
				got["error"].(map[string]any)["message"] = wantMsg
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("tasks/get answered\n%s\nthe specification shows\n%s", pretty(got), pretty(want))
			}
		})
	}
}

// TestSpecExampleDiscover checks the server's capabilities in
// server/discover against the protocol's schema example
// schema/2026-07-28/examples/ServerCapabilities/extensions-tasks.json.
func TestSpecExampleDiscover(t *testing.T) {
	c := &rawClient{url: serveHTTP(t, newServer(t, newMemBackend()), true), name: "claude-code", declare: true}
	got := c.call(t, 1, "server/discover", "", nil)
	caps, _ := got["result"].(map[string]any)["capabilities"].(map[string]any)
	want := decode(t, `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`)
	if !reflect.DeepEqual(caps["extensions"], want["extensions"]) {
		t.Fatalf("server/discover capabilities %s, want extensions %s", pretty(caps), pretty(want))
	}
}
