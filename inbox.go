package superagents

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// TaskMessage is a message sent to a task while it is active (steering):
// stored before the sender is answered, and delivered once, in order, as
// a user message of the task's own session before its next model request,
// by whichever process or node runs it.
type TaskMessage struct {
	TaskID string `json:"task_id"`
	// Seq orders a task's messages: they are delivered in it.
	Seq int64 `json:"seq"`
	// From says who sent it, in words the task's model reads ("the user,
	// in the chat", "the agent that launched this task").
	From      string    `json:"from"`
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"created_at"`
	// DeliveredAt is when it entered the task's session, as the message
	// with id MessageID; nil until then.
	DeliveredAt *time.Time `json:"delivered_at,omitempty"`
	MessageID   int64      `json:"message_id,omitempty"`
	// Undelivered says why a message never reached the task: the task
	// ended (cancelled or failed) before its next model request.
	Undelivered string `json:"undelivered,omitempty"`
}

// MaxTaskMessage is the longest message a task is sent, in bytes.
const MaxTaskMessage = 64 << 10

// Validate reports whether a message is fit to be sent.
func (m TaskMessage) Validate() error {
	switch {
	case m.TaskID == "":
		return fmt.Errorf("%w: a message needs its task", ErrInvalid)
	case strings.TrimSpace(m.Text) == "":
		return fmt.Errorf("%w: message is empty: say what the task should know", ErrInvalid)
	case len(m.Text) > MaxTaskMessage:
		return fmt.Errorf("%w: message is %d bytes; at most %d", ErrInvalid, len(m.Text), MaxTaskMessage)
	case strings.TrimSpace(m.From) == "":
		return fmt.Errorf("%w: a message needs its sender", ErrInvalid)
	}
	return nil
}

// Pending reports whether a message awaits delivery.
func (m TaskMessage) Pending() bool { return m.DeliveredAt == nil && m.Undelivered == "" }

// Inbox is what is sent to running tasks. A message is accepted only
// while its task is active; the task's ending and the sending take the
// task's row in turn, so a message is either delivered in the run that
// was active when it was accepted or marked undelivered with the
// reason: a task does not complete while a message waits (FinishTask
// refuses it with ErrUndelivered), and a task cancelled or failed marks
// its waiting messages undelivered.
//
// Sending records a task.message change and delivering a session.message
// change, so that a run waiting for its own tasks, on any node, hears of
// a message at once.
type Inbox interface {
	// SendTaskMessage stores a message for an active task and returns it
	// with Seq and CreatedAt set. A task that has ended is refused with
	// a *TaskEndedError; an unknown one with ErrNotFound.
	SendTaskMessage(ctx context.Context, m TaskMessage) (TaskMessage, error)
	// DeliverTaskMessages appends a task's waiting messages to its
	// session, each as render makes it, and marks them delivered, in one
	// transaction; it returns the stored messages (none when nothing
	// waits).
	DeliverTaskMessages(ctx context.Context, taskID string, render func(TaskMessage) Message) ([]Message, error)
	// TaskMessages returns every message sent to a task, oldest first.
	TaskMessages(ctx context.Context, taskID string) ([]TaskMessage, error)
	// WaitingTaskMessages counts a task's messages that wait for
	// delivery: a read, which a run makes before each model request
	// where a delivery would be a write.
	WaitingTaskMessages(ctx context.Context, taskID string) (int, error)
}

// ErrUndelivered refuses a task's completion while messages sent to it
// wait for delivery: its run delivers them and goes on.
var ErrUndelivered = fmt.Errorf("%w: messages sent to the task wait for delivery", ErrConflict)

// SendResult is what sending to a task did: it delivered a message
// (Message), or answered the question the task waited on (Answered, with
// the answer as the task reads it).
type SendResult struct {
	Task     Task          `json:"task"`
	Message  *TaskMessage  `json:"message,omitempty"`
	Answered *InputRequest `json:"answered,omitempty"`
	Answer   string        `json:"answer,omitempty"`
}
