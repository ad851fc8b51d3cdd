package mcptasks_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/superagents/superagents/mcptasks"
)

const protocol = "2026-07-28"

// exampleID is the task id of the specification's examples.
const exampleID = "786512e2-9e0d-44bd-8f29-789f320fe840"

func at(clock string) time.Time {
	t, err := time.Parse(time.RFC3339, "2025-11-25T"+clock+"Z")
	if err != nil {
		panic(err)
	}
	return t
}

// seeds are the first states of the tools' tasks: those of the
// specification's examples, so that its answers can be compared as written.
var seeds = map[string]mcptasks.State{
	// Extension specification (ext-tasks specification/draft/tasks.md),
	// "Task Creation".
	"get_weather": {
		ID: exampleID, Status: mcptasks.StatusWorking, Message: "The operation is now in progress.",
		CreatedAt: at("10:30:00"), UpdatedAt: at("10:40:00"), TTL: time.Minute, PollInterval: 5 * time.Second,
	},
	// Same document, "Example Message Flow".
	"hello_world": {
		ID: exampleID, Status: mcptasks.StatusWorking,
		CreatedAt: at("10:30:00"), UpdatedAt: at("10:50:00"), TTL: time.Hour, PollInterval: 5 * time.Second,
	},
	// A task with no example: a fresh id, the server's default interval.
	"slow": {Status: mcptasks.StatusWorking, TTL: time.Hour},
}

// callerOf names the caller by its client name: two clients are two owners.
// A real server would use a conversation, a token's holder or a connection.
func callerOf(req mcp.Request) string {
	p := req.GetParams()
	if p == nil {
		return ""
	}
	info, _ := p.GetMeta()[mcp.MetaKeyClientInfo].(map[string]any)
	name, _ := info["name"].(string)
	return name
}

// newServer is an MCP server whose tools answer a declaring client with a
// task, stored in b first, and any other client at once.
func newServer(t *testing.T, b *memBackend) *mcp.Server {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "tasks-test", Version: "v0.0.1"}, nil)
	for name, seed := range seeds {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if !mcptasks.Declared(req) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " answered at once"}}}, nil
				}
				st := seed
				if st.ID == "" {
					st.ID = rand.Text()
					st.CreatedAt = time.Now()
				}
				b.put(callerOf(req), st)
				var meta map[string]any
				if name == "slow" {
					meta = mcptasks.ModelImmediateResponse("the task runs in the background")
				}
				return mcptasks.Defer(ctx, st, meta)
			})
	}
	err := mcptasks.Install(s, mcptasks.Options{
		Backend: b,
		Caller:  func(_ context.Context, req mcp.Request) (string, error) { return callerOf(req), nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serveHTTP serves s over stateless streamable HTTP on loopback.
func serveHTTP(t *testing.T, s *mcp.Server, jsonResponse bool) string {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: jsonResponse})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// rawClient speaks JSON-RPC over HTTP as Claude Code was seen to: every
// request with Mcp-Method and Mcp-Protocol-Version headers, Mcp-Name the
// tool or the task, and _meta carrying version, client info and
// capabilities.
type rawClient struct {
	url     string
	name    string
	declare bool
}

func (c *rawClient) meta() map[string]any {
	caps := map[string]any{}
	if c.declare {
		caps["extensions"] = map[string]any{mcptasks.ExtensionID: map[string]any{}}
	}
	return map[string]any{
		mcp.MetaKeyProtocolVersion:    protocol,
		mcp.MetaKeyClientInfo:         map[string]any{"name": c.name, "version": "2.1.328"},
		mcp.MetaKeyClientCapabilities: caps,
	}
}

// call sends method with params (plus the _meta triple) under id, with the
// given Mcp-Name, and returns the decoded JSON-RPC response without the
// result's _meta, which carries the server's info.
func (c *rawClient) call(t *testing.T, id any, method, name string, params map[string]any) map[string]any {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	meta := c.meta()
	if m, ok := params["_meta"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	params["_meta"] = meta
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", protocol)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var msg map[string]any
	if err := json.Unmarshal(data, &msg); err != nil {
		t.Fatalf("%s: HTTP %d, not a JSON-RPC response: %s", method, resp.StatusCode, data)
	}
	if r, ok := msg["result"].(map[string]any); ok {
		delete(r, "_meta")
	}
	return msg
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("example: %v\n%s", err, s)
	}
	return v
}

func pretty(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// recorder keeps the raw results a real SDK client receives: the SDK
// decodes tools/call into CallToolResult, which has no place for a task.
type recorder struct {
	mcp.Transport
	mu      sync.Mutex
	results []json.RawMessage
}

func (r *recorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, r: r}, nil
}

type recordingConn struct {
	mcp.Connection
	r *recorder
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok && err == nil && resp.Result != nil {
		c.r.mu.Lock()
		c.r.results = append(c.r.results, resp.Result)
		c.r.mu.Unlock()
	}
	return msg, err
}

// last returns the last result received that has a resultType.
func (r *recorder) lastTask(t *testing.T) mcptasks.Task {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.results) - 1; i >= 0; i-- {
		var task mcptasks.Task
		if err := json.Unmarshal(r.results[i], &task); err == nil && task.ResultType == "task" {
			return task
		}
	}
	t.Fatal("no task received")
	return mcptasks.Task{}
}
