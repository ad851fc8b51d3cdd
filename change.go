package superagents

import (
	"encoding/json"
	"time"
)

// ChangeKind says what a Change records.
type ChangeKind string

// Change kinds: the event types of the live event stream.
const (
	ChangeSessionCreated ChangeKind = "session.created"
	ChangeSessionMessage ChangeKind = "session.message"
	ChangeSessionDeleted ChangeKind = "session.deleted"
	ChangeTaskCreated    ChangeKind = "task.created"
	ChangeTaskUpdated    ChangeKind = "task.updated"
	ChangeTaskCompleted  ChangeKind = "task.completed"
	ChangeTaskError      ChangeKind = "task.error"
	ChangeTaskCancelled  ChangeKind = "task.cancelled"
	// ChangeTaskMessage: a message was sent to a task (Data: the
	// TaskMessage).
	ChangeTaskMessage ChangeKind = "task.message"
	// ChangeTaskQuestion: a task asked whoever launched it (Data: the
	// InputRequest); ChangeTaskAnswer: the question was answered, or
	// given up (Data: the InputRequest with its response).
	ChangeTaskQuestion ChangeKind = "task.question"
	ChangeTaskAnswer   ChangeKind = "task.answer"
)

// CarriesTask reports whether a change's Data is the task it is about
// (a task's creation, update or ending), not a message or question of it.
func (c Change) CarriesTask() bool {
	switch c.Kind {
	case ChangeTaskCreated, ChangeTaskUpdated, ChangeTaskCompleted, ChangeTaskError, ChangeTaskCancelled:
		return true
	}
	return false
}

// TaskChangeKind is the kind of change that moving a task to status
// records.
func TaskChangeKind(status TaskStatus) ChangeKind {
	switch status {
	case TaskCompleted:
		return ChangeTaskCompleted
	case TaskError:
		return ChangeTaskError
	case TaskCancelled:
		return ChangeTaskCancelled
	}
	return ChangeTaskUpdated
}

// Change is one entry of the store's change log. Every write records what
// it changed in the same transaction, and IDs follow commit order, so a
// reader that remembers the last ID it saw misses nothing and sees nothing
// twice: the live event stream, the terminal and blocking waits all follow
// this log, in this process or another.
type Change struct {
	ID        int64      `json:"id"`
	Kind      ChangeKind `json:"type"`
	SessionID string     `json:"session_id,omitempty"`
	// TaskID is the task a task change is about, and on the
	// session.message change of a task's notification, the task that
	// ended (so a reader pairs the two without remembering anything).
	TaskID string `json:"task_id,omitempty"`
	// Data is the session, message or task the change is about, as JSON.
	Data      json.RawMessage `json:"data,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
}

// Task decodes the task a task change carries.
func (c Change) Task() (Task, error) {
	var t Task
	err := json.Unmarshal(c.Data, &t)
	return t, err
}

// Message decodes the message a session.message change carries.
func (c Change) Message() (Message, error) {
	var m Message
	err := json.Unmarshal(c.Data, &m)
	return m, err
}

// Runner is a process that runs background tasks. Runners register in the
// store and keep their entry fresh, so that after a crash or restart the
// tasks of a runner that is gone can be told from those another live
// process is still running.
type Runner struct {
	ID        string    `json:"id"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	SeenAt    time.Time `json:"seen_at"`
}
