// Package mcptasks serves the MCP Tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663, final with protocol revision 2026-07-28) on a server of the
// official Go SDK, through the SDK's extension points: custom methods and
// receiving middleware.
//
// A tool handler answers tools/call with a task (resultType "task") instead
// of a result once the server's own durable record of the work exists; the
// package then serves tasks/get, tasks/update and tasks/cancel from a
// [Backend] the server provides. The package stores nothing: the server's
// task is the MCP task, under one id, and whether a caller may see a task is
// the backend's decision, since the 2026-07-28 revision has no session to
// tie a task to. A [Notifier] sends notifications/tasks to the clients
// that subscribed to their tasks with subscriptions/listen.
package mcptasks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ExtensionID names the extension in capabilities.
const ExtensionID = "io.modelcontextprotocol/tasks"

// MinProtocolVersion is the first protocol revision the extension is defined
// for; requests of older revisions proceed as if they had not declared it.
const MinProtocolVersion = "2026-07-28"

// The extension's methods and notification.
const (
	MethodGet          = "tasks/get"
	MethodUpdate       = "tasks/update"
	MethodCancel       = "tasks/cancel"
	NotificationStatus = "notifications/tasks"
)

// Error codes the extension uses (specification, "Error Handling").
const (
	// CodeMissingRequiredClientCapability answers a tasks/* request from a
	// client that did not declare the extension on that request.
	CodeMissingRequiredClientCapability = -32021
	// CodeInvalidParams answers a request for an unknown or expired task.
	CodeInvalidParams = jsonrpc.CodeInvalidParams
	// CodeInternalError answers a request the backend failed to serve.
	CodeInternalError = jsonrpc.CodeInternalError
)

// Status is a task's state.
type Status string

// The statuses of the specification's "Task Status".
const (
	StatusWorking       Status = "working"
	StatusInputRequired Status = "input_required"
	StatusCompleted     Status = "completed"
	StatusFailed        Status = "failed"
	StatusCancelled     Status = "cancelled"
)

// Terminal reports whether a task in status s has ended for good.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

func (s Status) valid() bool {
	switch s {
	case StatusWorking, StatusInputRequired, StatusCompleted, StatusFailed, StatusCancelled:
		return true
	}
	return false
}

// State is what a backend knows of one task at one moment.
type State struct {
	// ID is the task id: unguessable, since it may be all a caller holds.
	ID string
	// Status is the task's status; empty reads as working.
	Status Status
	// Message is the statusMessage: progress, what input is awaited, why it
	// failed. It may reach the user or the model.
	Message string
	// CreatedAt and UpdatedAt are when the task began and last changed.
	CreatedAt, UpdatedAt time.Time
	// TTL is how long after CreatedAt the server may discard the task; zero
	// means unlimited (ttlMs null).
	TTL time.Duration
	// PollInterval is the suggested interval between polls; zero uses
	// [Options.PollInterval].
	PollInterval time.Duration
	// InputRequests are the outstanding requests of an input_required task,
	// keyed by ids unique over the task's life.
	InputRequests mcp.InputRequestMap
	// Result is a completed task's tool result, isError included.
	Result *mcp.CallToolResult
	// Error is a failed task's JSON-RPC error.
	Error *jsonrpc.Error
}

// Task is the wire form of a task: CreateTaskResult for tools/call (with
// resultType "task") and GetTaskResult for tasks/get (with resultType
// "complete", and the fields of its status inlined). See the extension's
// schema, schema/draft/schema.ts.
type Task struct {
	mcp.ResultBase
	ResultType     string              `json:"resultType"`
	TaskID         string              `json:"taskId"`
	Status         Status              `json:"status"`
	StatusMessage  string              `json:"statusMessage,omitempty"`
	CreatedAt      string              `json:"createdAt"`
	LastUpdatedAt  string              `json:"lastUpdatedAt"`
	TTLMs          *int64              `json:"ttlMs"` // null is unlimited
	PollIntervalMs int64               `json:"pollIntervalMs,omitempty"`
	InputRequests  mcp.InputRequestMap `json:"inputRequests,omitempty"`
	Result         *mcp.CallToolResult `json:"result,omitempty"`
	Error          *jsonrpc.Error      `json:"error,omitempty"`
}

// MarshalJSON writes the task, with a result's isError always present: the
// specification's examples spell out "isError": false, and a client need
// not know the default.
func (t *Task) MarshalJSON() ([]byte, error) {
	type plain Task // without this method
	w := struct {
		*plain
		Result json.RawMessage `json:"result,omitempty"`
	}{plain: (*plain)(t)}
	if t.Result != nil {
		b, err := json.Marshal(t.Result)
		if err != nil {
			return nil, fmt.Errorf("task %s: result: %w", t.TaskID, err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(b, &fields); err != nil {
			return nil, fmt.Errorf("task %s: result: %w", t.TaskID, err)
		}
		if _, ok := fields["isError"]; !ok {
			fields["isError"] = json.RawMessage("false")
		}
		if w.Result, err = json.Marshal(fields); err != nil {
			return nil, fmt.Errorf("task %s: result: %w", t.TaskID, err)
		}
	}
	return json.Marshal(w)
}

// The resultType values of the extension's results.
const (
	resultTypeTask     = "task"
	resultTypeComplete = "complete"
)

// TaskParams are the parameters of tasks/get and tasks/cancel.
type TaskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

// UpdateParams are the parameters of tasks/update.
type UpdateParams struct {
	mcp.ParamsBase
	TaskID         string               `json:"taskId"`
	InputResponses mcp.InputResponseMap `json:"inputResponses"`
}

// Ack is the empty acknowledgement of tasks/update and tasks/cancel.
type Ack struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

// timeFormat is ISO 8601 in UTC, to the millisecond, as the examples write it.
const timeFormat = "2006-01-02T15:04:05.999Z07:00"

// wire renders st as the specification's Task with the fields of its
// status; detailed adds those of tasks/get (inputRequests, result, error),
// which a CreateTaskResult does not carry.
func wire(st State, resultType string, poll time.Duration, detailed bool) *Task {
	status := st.Status
	if status == "" {
		status = StatusWorking
	}
	t := &Task{
		ResultType:    resultType,
		TaskID:        st.ID,
		Status:        status,
		StatusMessage: st.Message,
		CreatedAt:     st.CreatedAt.UTC().Format(timeFormat),
		LastUpdatedAt: lastUpdated(st).UTC().Format(timeFormat),
	}
	if st.TTL > 0 {
		ms := st.TTL.Milliseconds()
		t.TTLMs = &ms
	}
	switch {
	case st.PollInterval > 0:
		t.PollIntervalMs = st.PollInterval.Milliseconds()
	case !status.Terminal() && poll > 0:
		// An ended task needs no polling unless the backend says otherwise.
		t.PollIntervalMs = poll.Milliseconds()
	}
	if !detailed {
		return t
	}
	switch status {
	case StatusInputRequired:
		// Required by the status, even when nothing is outstanding yet.
		t.InputRequests = st.InputRequests
		if t.InputRequests == nil {
			t.InputRequests = mcp.InputRequestMap{}
		}
	case StatusCompleted:
		t.Result = st.Result
		if t.Result == nil {
			t.Result = &mcp.CallToolResult{}
		}
		if t.Result.Content == nil {
			// content is required: never send null.
			r := *t.Result
			r.Content = []mcp.Content{}
			t.Result = &r
		}
	case StatusFailed:
		t.Error = st.Error
		if t.Error == nil {
			msg := st.Message
			if msg == "" {
				msg = "task failed"
			}
			t.Error = &jsonrpc.Error{Code: CodeInternalError, Message: msg}
		}
	}
	return t
}

func lastUpdated(st State) time.Time {
	if st.UpdatedAt.IsZero() {
		return st.CreatedAt
	}
	return st.UpdatedAt
}

// missingCapability is the -32021 error naming the extension, as the
// specification's "Capability Negotiation" shows it.
func missingCapability(method string) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]any{
		"requiredCapabilities": map[string]any{
			"extensions": map[string]any{ExtensionID: map[string]any{}},
		},
	})
	return &jsonrpc.Error{
		Code:    CodeMissingRequiredClientCapability,
		Message: "Missing required client capability: " + method + " needs the " + ExtensionID + " extension declared in the request's _meta (protocol " + MinProtocolVersion + " or later)",
		Data:    data,
	}
}
