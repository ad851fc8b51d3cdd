package mcptasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Errors a [Backend] returns, wrapped or not, for a task a caller cannot
// have.
var (
	// ErrNotFound: no task has this id.
	ErrNotFound = errors.New("task not found")
	// ErrForeign: the task exists but is not the caller's. It is answered
	// exactly as ErrNotFound, so that a caller learns nothing of another's
	// tasks.
	ErrForeign = errors.New("task belongs to another caller")
	// ErrExpired: the task outlived its TTL and was discarded.
	ErrExpired = errors.New("task has expired")
	// ErrEnded: tasks/update of a task that has ended (completed, failed
	// or cancelled), which awaits no input any more.
	ErrEnded = errors.New("task has ended")
)

// Backend is the server's durable task store, seen from the extension. Each
// method receives the caller's identity (see [Options.Caller]) and decides
// ownership itself.
type Backend interface {
	// Get returns the task's current state.
	Get(ctx context.Context, caller, taskID string) (State, error)
	// Cancel asks for the task to stop. It must be idempotent: clients send
	// it more than once, and for tasks that have already ended, which is no
	// error.
	Cancel(ctx context.Context, caller, taskID string) error
	// Update delivers answers to the task's inputRequests. Keys that are not
	// outstanding are to be ignored; a task that has ended is ErrEnded.
	Update(ctx context.Context, caller, taskID string, responses mcp.InputResponseMap) error
}

// Options configure [Install].
type Options struct {
	// Backend serves the tasks. Required.
	Backend Backend
	// Caller names who sends a tasks/* request: a conversation, a token's
	// holder, a connection. The backend uses it to decide ownership. Nil
	// means every caller is "" and task ids alone guard the tasks.
	Caller func(ctx context.Context, req mcp.Request) (string, error)
	// PollInterval is the pollIntervalMs suggested for tasks that do not set
	// their own; zero means one second.
	PollInterval time.Duration
	// Logger receives backend failures, which callers see only as internal
	// errors. Nil discards them.
	Logger *slog.Logger
}

// DefaultPollInterval is the poll interval when Options.PollInterval is zero.
const DefaultPollInterval = time.Second

// Install adds the extension to s: it advertises it in server/discover,
// registers tasks/get, tasks/update and tasks/cancel, and lets tool handlers
// answer with [Defer]. Call it once, before s serves.
func Install(s *mcp.Server, opts Options) error {
	if s == nil {
		return errors.New("mcptasks: nil server")
	}
	if opts.Backend == nil {
		return errors.New("mcptasks: Options.Backend is required")
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	x := &ext{opts: opts}
	if err := mcp.AddReceivingCustomMethod(s, MethodGet, x.get); err != nil {
		return fmt.Errorf("mcptasks: %w", err)
	}
	if err := mcp.AddReceivingCustomMethod(s, MethodUpdate, x.update); err != nil {
		return fmt.Errorf("mcptasks: %w", err)
	}
	if err := mcp.AddReceivingCustomMethod(s, MethodCancel, x.cancel); err != nil {
		return fmt.Errorf("mcptasks: %w", err)
	}
	s.AddReceivingMiddleware(x.middleware)
	return nil
}

type ext struct{ opts Options }

type callerKey struct{}

type slotKey struct{}

// slot carries a task out of a tool handler, to the middleware that turns
// the tools/call answer into a CreateTaskResult.
type slot struct {
	mu   sync.Mutex
	set  bool
	st   State
	meta map[string]any
}

// middleware advertises the extension, guards the tasks/* methods and
// swaps a deferred tool result for its task.
func (x *ext) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "server/discover":
			res, err := next(ctx, method, req)
			if d, ok := res.(*mcp.DiscoverResult); ok && err == nil && d.Capabilities != nil {
				// The SDK builds a fresh copy of the capabilities per answer.
				d.Capabilities.AddExtension(ExtensionID, map[string]any{})
			}
			return res, err
		case "tools/call":
			if !Declared(req) {
				return next(ctx, method, req)
			}
			sl := &slot{}
			res, err := next(context.WithValue(ctx, slotKey{}, sl), method, req)
			sl.mu.Lock()
			defer sl.mu.Unlock()
			if !sl.set {
				return res, err
			}
			if err != nil {
				// The task is stored and runs: its handle is the answer. A
				// typed handler's zero output that fails its schema lands here.
				x.opts.Logger.Warn("mcptasks: tools/call failed after deferring to a task; answering with the task", "task", sl.st.ID, "err", err)
			}
			t := wire(sl.st, resultTypeTask, x.opts.PollInterval, false)
			if len(sl.meta) > 0 {
				t.SetMeta(maps.Clone(sl.meta)) // the SDK adds its serverInfo to it
			}
			return t, nil
		case MethodGet, MethodUpdate, MethodCancel:
			if !Declared(req) {
				return nil, missingCapability(method)
			}
			if err := checkRoute(req); err != nil {
				return nil, err
			}
			caller := ""
			if x.opts.Caller != nil {
				c, err := x.opts.Caller(ctx, req)
				if err != nil {
					x.opts.Logger.Warn("mcptasks: identifying the caller", "method", method, "err", err)
					return nil, &jsonrpc.Error{Code: CodeInternalError, Message: fmt.Sprintf("%s: cannot identify the caller: %v", method, err)}
				}
				caller = c
			}
			return next(context.WithValue(ctx, callerKey{}, caller), method, req)
		}
		return next(ctx, method, req)
	}
}

// checkRoute rejects a request whose Mcp-Name header, which routes it to the
// node holding the task, names another task than its body
// (specification, "Streamable HTTP: Routing Headers").
func checkRoute(req mcp.Request) error {
	extra := req.GetExtra()
	if extra == nil || extra.Header == nil {
		return nil
	}
	name := extra.Header.Get("Mcp-Name")
	if name == "" {
		return nil
	}
	var id string
	switch p := req.GetParams().(type) {
	case *TaskParams:
		id = p.TaskID
	case *UpdateParams:
		id = p.TaskID
	}
	if id != "" && name != id {
		return &jsonrpc.Error{Code: CodeInvalidParams, Message: fmt.Sprintf("Mcp-Name header %q does not match taskId %q", name, id)}
	}
	return nil
}

func callerOf(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(string)
	return c
}

func (x *ext) get(ctx context.Context, _ *mcp.ServerSession, p *TaskParams) (*Task, error) {
	if p == nil || p.TaskID == "" {
		return nil, &jsonrpc.Error{Code: CodeInvalidParams, Message: "Failed to retrieve task: taskId is required"}
	}
	st, err := x.opts.Backend.Get(ctx, callerOf(ctx), p.TaskID)
	if err != nil {
		return nil, x.fail(MethodGet, "Failed to retrieve task", p.TaskID, err)
	}
	if st.ID != p.TaskID || (st.Status != "" && !st.Status.valid()) {
		x.opts.Logger.Error("mcptasks: backend returned a malformed task", "task", p.TaskID, "id", st.ID, "status", st.Status)
		return nil, &jsonrpc.Error{Code: CodeInternalError, Message: "Failed to retrieve task: the server's record of it is malformed"}
	}
	return wire(st, resultTypeComplete, x.opts.PollInterval, true), nil
}

func (x *ext) update(ctx context.Context, _ *mcp.ServerSession, p *UpdateParams) (*Ack, error) {
	if p == nil || p.TaskID == "" {
		return nil, &jsonrpc.Error{Code: CodeInvalidParams, Message: "Failed to update task: taskId is required"}
	}
	if err := x.opts.Backend.Update(ctx, callerOf(ctx), p.TaskID, p.InputResponses); err != nil {
		return nil, x.fail(MethodUpdate, "Failed to update task", p.TaskID, err)
	}
	return &Ack{ResultType: resultTypeComplete}, nil
}

func (x *ext) cancel(ctx context.Context, _ *mcp.ServerSession, p *TaskParams) (*Ack, error) {
	if p == nil || p.TaskID == "" {
		return nil, &jsonrpc.Error{Code: CodeInvalidParams, Message: "Failed to cancel task: taskId is required"}
	}
	if err := x.opts.Backend.Cancel(ctx, callerOf(ctx), p.TaskID); err != nil {
		return nil, x.fail(MethodCancel, "Failed to cancel task", p.TaskID, err)
	}
	return &Ack{ResultType: resultTypeComplete}, nil
}

// fail maps a backend error to the extension's protocol errors: unknown
// and foreign tasks read alike, as the specification's "Task not found"
// example; an expired one as its "Task has expired".
func (x *ext) fail(method, what, id string, err error) error {
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrForeign):
		return &jsonrpc.Error{Code: CodeInvalidParams, Message: what + ": Task not found"}
	case errors.Is(err, ErrExpired):
		return &jsonrpc.Error{Code: CodeInvalidParams, Message: what + ": Task has expired"}
	case errors.Is(err, ErrEnded):
		return &jsonrpc.Error{Code: CodeInvalidParams, Message: what + ": Task has already ended and awaits no input"}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	x.opts.Logger.Error("mcptasks: backend failed", "method", method, "task", id, "err", err)
	return &jsonrpc.Error{Code: CodeInternalError, Message: what + ": internal error"}
}

// Declared reports whether req declares the extension in its per-request
// client capabilities (_meta "io.modelcontextprotocol/clientCapabilities"),
// on protocol 2026-07-28 or later. Only then may tools/call be answered with
// a task.
func Declared(req mcp.Request) bool {
	if req == nil {
		return false
	}
	p := req.GetParams()
	if p == nil {
		return false
	}
	// A typed nil inside the interface would panic on GetMeta.
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return false
	}
	return declares(p.GetMeta())
}

func declares(meta map[string]any) bool {
	if meta == nil {
		return false
	}
	v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	if v == "" || v < MinProtocolVersion {
		return false
	}
	raw, ok := meta[mcp.MetaKeyClientCapabilities]
	if !ok || raw == nil {
		return false
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return false
	}
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if err := json.Unmarshal(b, &caps); err != nil {
		return false
	}
	s, ok := caps.Extensions[ExtensionID]
	// The settings are an object, empty today.
	return ok && strings.HasPrefix(strings.TrimSpace(string(s)), "{")
}

// ErrNotDeclared is returned by [Defer] when the tools/call it answers did
// not declare the extension, or the server has no [Install]: the handler
// must then answer with a result.
var ErrNotDeclared = errors.New("mcptasks: the request did not declare the " + ExtensionID + " extension")

// Defer answers the tools/call whose handler received ctx with the task st
// instead of a result: the handler returns what Defer returns. Call it only
// once the task is durably stored, so that tasks/get finds it from any
// node. meta, if any, becomes the answer's _meta (see
// [ModelImmediateResponse]).
//
// A typed tool handler (mcp.AddTool) returns Defer's result with a zero
// output: whatever the SDK makes of that output, even a failed check
// against the tool's output schema, the answer is the task.
func Defer(ctx context.Context, st State, meta map[string]any) (*mcp.CallToolResult, error) {
	sl, _ := ctx.Value(slotKey{}).(*slot)
	if sl == nil {
		return nil, ErrNotDeclared
	}
	if st.ID == "" {
		return nil, errors.New("mcptasks: Defer: the task has no id")
	}
	if st.Status != "" && !st.Status.valid() {
		return nil, fmt.Errorf("mcptasks: Defer: unknown status %q", st.Status)
	}
	if st.CreatedAt.IsZero() {
		return nil, errors.New("mcptasks: Defer: the task has no creation time")
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.set {
		return nil, fmt.Errorf("mcptasks: Defer: the call is already answered with task %s", sl.st.ID)
	}
	sl.set, sl.st, sl.meta = true, st, meta
	// A placeholder the middleware replaces; it carries no content so that
	// nothing of it could be mistaken for the tool's answer.
	return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
}

// AgentTaskMetaKey is the _meta key under which Claude Code reads a note for
// its model in the answer to a tools/call that became a task.
const AgentTaskMetaKey = "com.anthropic/agent-task"

// ModelImmediateResponse is the _meta for [Defer] that gives Claude Code's
// model a note to read at once, with the tool result that says the call
// moved to the background.
func ModelImmediateResponse(text string) map[string]any {
	return map[string]any{AgentTaskMetaKey: map[string]any{"modelImmediateResponse": text}}
}
