package mcptasks_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/superagents/superagents/mcptasks"
)

// demoBackend is a server's task store, in memory: a real one keeps the
// tasks durably and records who launched each, to check it in Get, Cancel
// and Update.
type demoBackend struct {
	mu    sync.Mutex
	tasks map[string]mcptasks.State
}

// launch stores a new task and returns it.
func (b *demoBackend) launch(st mcptasks.State) mcptasks.State {
	b.mu.Lock()
	defer b.mu.Unlock()
	st.ID = fmt.Sprintf("task-%d", len(b.tasks)+1) // a real id is unguessable
	b.tasks[st.ID] = st
	return st
}

// finish records a task's result, as the server's worker would.
func (b *demoBackend) finish(id, text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.tasks[id]
	st.Status, st.Message = mcptasks.StatusCompleted, "done"
	st.Result = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
	b.tasks[id] = st
}

func (b *demoBackend) Get(_ context.Context, _, id string) (mcptasks.State, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.tasks[id]
	if !ok {
		return mcptasks.State{}, fmt.Errorf("task %s: %w", id, mcptasks.ErrNotFound)
	}
	return st, nil
}

func (b *demoBackend) Cancel(_ context.Context, _, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	st, ok := b.tasks[id]
	if !ok {
		return fmt.Errorf("task %s: %w", id, mcptasks.ErrNotFound)
	}
	if !st.Status.Terminal() {
		st.Status = mcptasks.StatusCancelled
		b.tasks[id] = st
	}
	return nil
}

func (b *demoBackend) Update(_ context.Context, _, id string, _ mcp.InputResponseMap) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.tasks[id]; !ok {
		return fmt.Errorf("task %s: %w", id, mcptasks.ErrNotFound)
	}
	return nil // this backend's tasks never ask for input
}

// demoServer is an MCP server with a "build" tool that answers a client
// that declared the extension with a task, and any other at once.
func demoServer(b *demoBackend) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "builder", Version: "v1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "build", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if !mcptasks.Declared(req) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "built, while you waited"}}}, nil
			}
			created := time.Date(2026, 7, 28, 9, 30, 0, 0, time.UTC) // time.Now() in a real server
			st := b.launch(mcptasks.State{Status: mcptasks.StatusWorking, Message: "building", CreatedAt: created, TTL: time.Hour})
			// The task is stored: the answer to tools/call is its handle.
			return mcptasks.Defer(ctx, st, mcptasks.ModelImmediateResponse("The build runs in the background."))
		})
	if err := mcptasks.Install(s, mcptasks.Options{Backend: b, PollInterval: 2 * time.Second}); err != nil {
		log.Fatal(err)
	}
	return s
}

// demoClient connects an SDK client to s in memory; declare says whether it
// declares the extension.
func demoClient(ctx context.Context, s *mcp.Server, declare bool) (*mcp.ClientSession, error) {
	caps := &mcp.ClientCapabilities{}
	if declare {
		caps.AddExtension(mcptasks.ExtensionID, map[string]any{})
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v1"}, &mcp.ClientOptions{Capabilities: caps})
	err := errors.Join(
		mcp.AddSendingCustomMethod[*mcptasks.TaskParams, *mcptasks.Task](c, mcptasks.MethodGet),
		mcp.AddSendingCustomMethod[*mcptasks.TaskParams, *mcptasks.Ack](c, mcptasks.MethodCancel),
	)
	if err != nil {
		return nil, err
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.Connect(ctx, st, nil); err != nil {
		return nil, err
	}
	return c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: mcptasks.MinProtocolVersion})
}

func getTask(ctx context.Context, cs *mcp.ClientSession, id string) (*mcptasks.Task, error) {
	return mcp.CallCustomMethod[*mcptasks.TaskParams, *mcptasks.Task](ctx, cs, mcptasks.MethodGet, &mcptasks.TaskParams{TaskID: id})
}

// A tool answers a client that declared the extension with a task, which
// the client then polls with tasks/get until it has ended.
func ExampleInstall() {
	ctx := context.Background()
	b := &demoBackend{tasks: map[string]mcptasks.State{}}
	cs, err := demoClient(ctx, demoServer(b), true)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	// The SDK's CallToolResult has no field for the task (its id is in the
	// raw CreateTaskResult), only the empty content and the _meta.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "build"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(res.Content), res.Meta[mcptasks.AgentTaskMetaKey])

	task, err := getTask(ctx, cs, "task-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.TaskID, task.Status, task.StatusMessage, task.CreatedAt, *task.TTLMs, task.PollIntervalMs)

	b.finish("task-1", "ok: 3 packages built")
	task, err = getTask(ctx, cs, "task-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.Status, task.Result.Content[0].(*mcp.TextContent).Text, task.PollIntervalMs)

	_, err = getTask(ctx, cs, "task-9")
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		fmt.Println(rpcErr.Code, rpcErr.Message)
	}
	// Output:
	// 0 map[modelImmediateResponse:The build runs in the background.]
	// task-1 working building 2026-07-28T09:30:00Z 3600000 2000
	// completed ok: 3 packages built 0
	// -32602 Failed to retrieve task: Task not found
}

// A client that does not declare the extension gets the tool's result at
// once, and may not use the extension's methods.
func ExampleDeclared() {
	ctx := context.Background()
	b := &demoBackend{tasks: map[string]mcptasks.State{}}
	cs, err := demoClient(ctx, demoServer(b), false)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "build"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)

	_, err = getTask(ctx, cs, "task-1")
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		fmt.Println(rpcErr.Code == mcptasks.CodeMissingRequiredClientCapability)
	}
	// Output:
	// built, while you waited
	// true
}

// Cancelling is idempotent: clients send tasks/cancel more than once, and
// for tasks that have already ended.
func ExampleBackend_cancel() {
	ctx := context.Background()
	b := &demoBackend{tasks: map[string]mcptasks.State{}}
	cs, err := demoClient(ctx, demoServer(b), true)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "build"}); err != nil {
		log.Fatal(err)
	}
	for range 2 {
		_, err := mcp.CallCustomMethod[*mcptasks.TaskParams, *mcptasks.Ack](ctx, cs, mcptasks.MethodCancel, &mcptasks.TaskParams{TaskID: "task-1"})
		fmt.Println(err)
	}
	task, err := getTask(ctx, cs, "task-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.Status, task.Status.Terminal())
	// Output:
	// <nil>
	// <nil>
	// cancelled true
}
