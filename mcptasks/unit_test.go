package mcptasks_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/superagents/superagents/mcptasks"
)

func TestDeclared(t *testing.T) {
	ext := map[string]any{"extensions": map[string]any{mcptasks.ExtensionID: map[string]any{}}}
	tests := []struct {
		name string
		meta map[string]any
		want bool
	}{
		{"declared on 2026-07-28", map[string]any{mcp.MetaKeyProtocolVersion: protocol, mcp.MetaKeyClientCapabilities: ext}, true},
		{"no _meta", nil, false},
		{"no protocol version", map[string]any{mcp.MetaKeyClientCapabilities: ext}, false},
		{"older protocol", map[string]any{mcp.MetaKeyProtocolVersion: "2025-11-25", mcp.MetaKeyClientCapabilities: ext}, false},
		{"no capabilities", map[string]any{mcp.MetaKeyProtocolVersion: protocol}, false},
		{"other extension", map[string]any{mcp.MetaKeyProtocolVersion: protocol,
			mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/ui": map[string]any{}}}}, false},
		{"settings not an object", map[string]any{mcp.MetaKeyProtocolVersion: protocol,
			mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{mcptasks.ExtensionID: true}}}, false},
		{"capabilities malformed", map[string]any{mcp.MetaKeyProtocolVersion: protocol, mcp.MetaKeyClientCapabilities: "tasks"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: tt.meta}}
			if got := mcptasks.Declared(req); got != tt.want {
				t.Fatalf("Declared = %v, want %v", got, tt.want)
			}
		})
	}
	if mcptasks.Declared(nil) || mcptasks.Declared(&mcp.CallToolRequest{}) {
		t.Fatal("a request without params declared the extension")
	}
}

func TestDeferOutsideADeclaredCall(t *testing.T) {
	_, err := mcptasks.Defer(context.Background(), mcptasks.State{ID: "t", CreatedAt: time.Now()}, nil)
	if !errors.Is(err, mcptasks.ErrNotDeclared) {
		t.Fatalf("Defer = %v, want ErrNotDeclared", err)
	}
}

func TestInstallNeedsABackend(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "v0"}, nil)
	if err := mcptasks.Install(s, mcptasks.Options{}); err == nil {
		t.Fatal("Install without a backend succeeded")
	}
	if err := mcptasks.Install(nil, mcptasks.Options{Backend: newMemBackend()}); err == nil {
		t.Fatal("Install on a nil server succeeded")
	}
}

// failing is a backend whose store is down.
type failing struct{ *memBackend }

var errStoreDown = errors.New("database is locked at /var/lib/secret.db")

func (*failing) Get(context.Context, string, string) (mcptasks.State, error) {
	return mcptasks.State{}, errStoreDown
}

// TestServerErrors covers what the specification leaves to the server: a
// misrouted request, a failing store, an unidentifiable caller, a tool that
// defers wrongly.
func TestServerErrors(t *testing.T) {
	badTool := func(st mcptasks.State) mcp.ToolHandler {
		return func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcptasks.Defer(ctx, st, nil)
		}
	}
	tests := []struct {
		name    string
		opts    mcptasks.Options
		method  string
		mcpName string
		params  map[string]any
		code    float64
		message string
	}{
		{
			name: "Mcp-Name names another task", opts: mcptasks.Options{Backend: newMemBackend()},
			method: "tasks/get", mcpName: "other", params: map[string]any{"taskId": "t1"},
			code: -32602, message: `Mcp-Name header "other" does not match taskId "t1"`,
		},
		{
			name: "no task id", opts: mcptasks.Options{Backend: newMemBackend()},
			method: "tasks/cancel", params: map[string]any{},
			code: -32602, message: "Failed to cancel task: taskId is required",
		},
		{
			name: "store down, details kept from the caller", opts: mcptasks.Options{Backend: &failing{newMemBackend()}},
			method: "tasks/get", mcpName: "t1", params: map[string]any{"taskId": "t1"},
			code: -32603, message: "Failed to retrieve task: internal error",
		},
		{
			name: "caller unknown", opts: mcptasks.Options{Backend: newMemBackend(),
				Caller: func(context.Context, mcp.Request) (string, error) { return "", errors.New("no token") }},
			method: "tasks/get", mcpName: "t1", params: map[string]any{"taskId": "t1"},
			code: -32603, message: "tasks/get: cannot identify the caller: no token",
		},
		{
			name: "tool defers a task without an id", opts: mcptasks.Options{Backend: newMemBackend()},
			method: "tools/call", mcpName: "no_id", params: map[string]any{"name": "no_id", "arguments": map[string]any{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "v0"}, nil)
			s.AddTool(&mcp.Tool{Name: "no_id", InputSchema: map[string]any{"type": "object"}}, badTool(mcptasks.State{CreatedAt: time.Now()}))
			if err := mcptasks.Install(s, tt.opts); err != nil {
				t.Fatal(err)
			}
			c := &rawClient{url: serveHTTP(t, s, true), name: "c", declare: true}
			got := c.call(t, 1, tt.method, tt.mcpName, tt.params)
			if tt.method == "tools/call" {
				// A raw tool handler's error is a JSON-RPC error in the SDK.
				e, _ := got["error"].(map[string]any)
				if got["result"] != nil || e["message"] != "mcptasks: Defer: the task has no id" {
					t.Fatalf("tools/call answered %s, want Defer's error and no task", pretty(got))
				}
				return
			}
			e, _ := got["error"].(map[string]any)
			if e["code"] != tt.code || e["message"] != tt.message {
				t.Fatalf("answered %s, want error %v %q", pretty(got), tt.code, tt.message)
			}
		})
	}
}
