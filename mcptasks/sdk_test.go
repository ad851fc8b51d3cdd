package mcptasks_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/superagents/superagents/mcptasks"
)

// session is a real SDK client session with the extension's methods.
type session struct {
	cs  *mcp.ClientSession
	rec *recorder
}

type dialer func(t *testing.T, name string, declare bool, version string) session

func newClient(t *testing.T, name string, declare bool) *mcp.Client {
	t.Helper()
	caps := &mcp.ClientCapabilities{}
	if declare {
		caps.AddExtension(mcptasks.ExtensionID, map[string]any{})
	}
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "v1"}, &mcp.ClientOptions{Capabilities: caps})
	for _, err := range []error{
		mcp.AddSendingCustomMethod[*mcptasks.TaskParams, *mcptasks.Task](c, mcptasks.MethodGet),
		mcp.AddSendingCustomMethod[*mcptasks.TaskParams, *mcptasks.Ack](c, mcptasks.MethodCancel),
		mcp.AddSendingCustomMethod[*mcptasks.UpdateParams, *mcptasks.Ack](c, mcptasks.MethodUpdate),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func connect(t *testing.T, tr mcp.Transport, name string, declare bool, version string) session {
	t.Helper()
	rec := &recorder{Transport: tr}
	cs, err := newClient(t, name, declare).Connect(t.Context(), rec, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s: %v", name, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return session{cs: cs, rec: rec}
}

func inMemory(t *testing.T, s *mcp.Server) dialer {
	return func(t *testing.T, name string, declare bool, version string) session {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := s.Connect(t.Context(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Wait() })
		return connect(t, ct, name, declare, version)
	}
}

func overHTTP(t *testing.T, s *mcp.Server) dialer {
	url := serveHTTP(t, s, false) // answers as SSE streams, as by default
	return func(t *testing.T, name string, declare bool, version string) session {
		return connect(t, &mcp.StreamableClientTransport{Endpoint: url}, name, declare, version)
	}
}

func (s session) get(ctx context.Context, id string) (*mcptasks.Task, error) {
	return mcp.CallCustomMethod[*mcptasks.TaskParams, *mcptasks.Task](ctx, s.cs, mcptasks.MethodGet, &mcptasks.TaskParams{TaskID: id})
}

func (s session) cancel(ctx context.Context, id string) error {
	_, err := mcp.CallCustomMethod[*mcptasks.TaskParams, *mcptasks.Ack](ctx, s.cs, mcptasks.MethodCancel, &mcptasks.TaskParams{TaskID: id})
	return err
}

func (s session) update(ctx context.Context, id string, r mcp.InputResponseMap) error {
	_, err := mcp.CallCustomMethod[*mcptasks.UpdateParams, *mcptasks.Ack](ctx, s.cs, mcptasks.MethodUpdate, &mcptasks.UpdateParams{TaskID: id, InputResponses: r})
	return err
}

// launch calls the slow tool and returns the task it answered with.
func (s session) launch(t *testing.T) mcptasks.Task {
	t.Helper()
	res, err := s.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "slow"})
	if err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if len(res.Content) != 0 {
		t.Fatalf("tools/call answered with content %v, want a task", res.Content)
	}
	return s.rec.lastTask(t)
}

// rpcError is the JSON-RPC error err carries, or fails the test.
func rpcError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("got %v (%T), want a JSON-RPC error", err, err)
	}
	return we
}

func wantError(t *testing.T, what string, err error, code int64, msg string) {
	t.Helper()
	we := rpcError(t, err)
	if we.Code != code || !strings.Contains(we.Message, msg) {
		t.Fatalf("%s: error %d %q, want %d containing %q", what, we.Code, we.Message, code, msg)
	}
}

// TestSDKClient exchanges every method and error with real SDK clients,
// over the in-memory transport and over stateless streamable HTTP.
func TestSDKClient(t *testing.T) {
	transports := []struct {
		name string
		dial func(*testing.T, *mcp.Server) dialer
	}{
		{"in-memory", inMemory},
		{"streamable HTTP, stateless", overHTTP},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			b := newMemBackend()
			dial := tr.dial(t, newServer(t, b))
			ctx := t.Context()
			host := dial(t, "host-a", true, protocol)

			if ext := host.cs.InitializeResult().Capabilities.Extensions; ext == nil || ext[mcptasks.ExtensionID] == nil {
				t.Fatalf("server/discover advertised extensions %v, want %s", ext, mcptasks.ExtensionID)
			}

			task := host.launch(t)
			if task.Status != mcptasks.StatusWorking || task.TaskID == "" || task.PollIntervalMs != mcptasks.DefaultPollInterval.Milliseconds() ||
				task.TTLMs == nil || *task.TTLMs != time.Hour.Milliseconds() {
				t.Fatalf("CreateTaskResult %+v: want working, an id, the default poll interval and a one-hour TTL", task)
			}
			note, _ := task.GetMeta()[mcptasks.AgentTaskMetaKey].(map[string]any)
			if note["modelImmediateResponse"] != "the task runs in the background" {
				t.Fatalf("_meta %v lacks the note for the model", task.GetMeta())
			}
			id := task.TaskID

			got, err := host.get(ctx, id)
			if err != nil || got.Status != mcptasks.StatusWorking || got.ResultType != "complete" {
				t.Fatalf("tasks/get: %+v, %v; want working, resultType complete", got, err)
			}

			b.set(id, func(st *mcptasks.State) {
				st.Status = mcptasks.StatusInputRequired
				st.Message = "may I run rm -rf build?"
				st.InputRequests = mcp.InputRequestMap{"q1": &mcp.ElicitParams{Mode: "form", Message: "Run rm -rf build?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}}}}
			})
			got, err = host.get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if q, ok := got.InputRequests["q1"].(*mcp.ElicitParams); got.Status != mcptasks.StatusInputRequired || !ok || q.Message != "Run rm -rf build?" || got.StatusMessage != "may I run rm -rf build?" {
				t.Fatalf("tasks/get: %+v; want input_required with the elicitation q1", got)
			}

			answer := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}
			if err := host.update(ctx, id, mcp.InputResponseMap{"q1": answer, "never-asked": &mcp.ElicitResult{Action: "decline"}}); err != nil {
				t.Fatalf("tasks/update: %v", err)
			}
			rec := b.task(id)
			if r, ok := rec.responses["q1"].(*mcp.ElicitResult); len(rec.responses) != 1 || !ok || r.Action != "accept" || r.Content["ok"] != true {
				t.Fatalf("backend got %v, want only the answer to q1", rec.responses)
			}
			if got, err = host.get(ctx, id); err != nil || got.Status != mcptasks.StatusWorking || got.InputRequests != nil {
				t.Fatalf("after tasks/update: %+v, %v; want working without inputRequests", got, err)
			}

			structured := map[string]any{"summary": "built", "tools": float64(3)}
			b.set(id, func(st *mcptasks.State) {
				st.Status = mcptasks.StatusCompleted
				st.Message = "3 tools used"
				st.Result = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "built"}}, StructuredContent: structured}
			})
			got, err = host.get(ctx, id)
			if err != nil || got.Status != mcptasks.StatusCompleted || got.Result == nil || got.PollIntervalMs != 0 {
				t.Fatalf("tasks/get: %+v, %v; want completed with a result and no poll interval", got, err)
			}
			if !reflect.DeepEqual(got.Result.StructuredContent, structured) || len(got.Result.Content) != 1 || got.Result.Content[0].(*mcp.TextContent).Text != "built" {
				t.Fatalf("result %+v, want the tool's text and structured content", got.Result)
			}

			// Cancelling an ended task is acknowledged and changes nothing.
			for range 2 {
				if err := host.cancel(ctx, id); err != nil {
					t.Fatalf("tasks/cancel of a completed task: %v", err)
				}
			}
			if got, _ := host.get(ctx, id); got.Status != mcptasks.StatusCompleted {
				t.Fatalf("a completed task became %s", got.Status)
			}

			// Claude Code sends tasks/cancel twice, 2 ms apart.
			second := host.launch(t).TaskID
			errs := make(chan error, 2)
			for range 2 {
				go func() { errs <- host.cancel(ctx, second) }()
			}
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatalf("tasks/cancel: %v", err)
				}
			}
			if n := b.task(second).cancels; n != 2 {
				t.Fatalf("backend saw %d cancels, want 2", n)
			}
			if got, err := host.get(ctx, second); err != nil || got.Status != mcptasks.StatusCancelled {
				t.Fatalf("after tasks/cancel: %+v, %v; want cancelled", got, err)
			}

			// Unknown and foreign tasks read alike, for every method.
			other := dial(t, "host-b", true, protocol)
			for _, c := range []struct {
				who  string
				s    session
				task string
			}{{"unknown", host, "no-such-task"}, {"foreign", other, id}} {
				_, err := c.s.get(ctx, c.task)
				wantError(t, c.who+" tasks/get", err, jsonrpc.CodeInvalidParams, "Failed to retrieve task: Task not found")
				wantError(t, c.who+" tasks/cancel", c.s.cancel(ctx, c.task), jsonrpc.CodeInvalidParams, "Failed to cancel task: Task not found")
				wantError(t, c.who+" tasks/update", c.s.update(ctx, c.task, mcp.InputResponseMap{}), jsonrpc.CodeInvalidParams, "Failed to update task: Task not found")
			}
			if n := b.task(id).cancels; n != 2 {
				t.Fatalf("a foreign cancel reached the task: %d cancels", n)
			}

			b.expire(second)
			_, err = host.get(ctx, second)
			wantError(t, "expired tasks/get", err, jsonrpc.CodeInvalidParams, "Failed to retrieve task: Task has expired")

			// A client that does not declare the extension gets results, and
			// no tasks/* method.
			for _, c := range []struct {
				who     string
				declare bool
				version string
			}{{"undeclared", false, protocol}, {"declared on 2025-11-25", true, "2025-11-25"}} {
				plain := dial(t, "host-a", c.declare, c.version)
				res, err := plain.cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
				if err != nil || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != "slow answered at once" {
					t.Fatalf("%s: tools/call %+v, %v; want the result at once", c.who, res, err)
				}
				_, err = plain.get(ctx, id)
				wantError(t, c.who+" tasks/get", err, mcptasks.CodeMissingRequiredClientCapability, "Missing required client capability")
			}
		})
	}
}

// TestTypedToolDefers: a typed tool whose zero output fails its output
// schema still answers with the task it deferred to.
func TestTypedToolDefers(t *testing.T) {
	type out struct {
		Summary string `json:"summary"`
	}
	b := newMemBackend()
	s := newServer(t, b)
	one := 1
	schema := &jsonschema.Schema{Type: "object", Required: []string{"summary"},
		Properties: map[string]*jsonschema.Schema{"summary": {Type: "string", MinLength: &one}}}
	mcp.AddTool(s, &mcp.Tool{Name: "typed", OutputSchema: schema},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, out, error) {
			st := mcptasks.State{ID: "typed-task", CreatedAt: time.Now()}
			b.put(callerOf(req), st)
			res, err := mcptasks.Defer(ctx, st, nil)
			return res, out{}, err
		})
	host := inMemory(t, s)(t, "host-a", true, protocol)
	if _, err := host.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "typed"}); err != nil {
		t.Fatalf("tools/call: %v", err)
	}
	if task := host.rec.lastTask(t); task.TaskID != "typed-task" || task.Status != mcptasks.StatusWorking {
		t.Fatalf("answered %+v, want task typed-task working", task)
	}
}
