package superagents

import (
	"context"
	"io"
)

// Store keeps sessions, messages and tasks. Every method that writes more
// than one row does it in one transaction: a crash leaves either all of it
// or none. Implementations live in their own packages (sqlite/) and must
// pass the conformance suite in storetest/.
//
// Deleted sessions are invisible through this interface (ErrNotFound), but
// the messages their descendants inherit stay readable through History.
type Store interface {
	// CreateSession creates a root session with its first messages.
	CreateSession(ctx context.Context, s NewSession) (Session, error)
	// Session returns one session by its full id.
	Session(ctx context.Context, id string) (Session, error)
	// ResolveSession finds the session whose id is ref or starts with the
	// prefix ref (at least MinPrefixLength characters). An ambiguous prefix
	// is an *AmbiguousIDError listing the candidates.
	ResolveSession(ctx context.Context, ref string) (Session, error)
	// ListSessions lists sessions, newest first.
	ListSessions(ctx context.Context, f SessionFilter) ([]SessionSummary, error)
	// Fork creates a child of parentID that inherits the parent's effective
	// history up to the parent's current last message. It writes one row,
	// whatever the length of the history.
	Fork(ctx context.Context, parentID string, opts ForkOptions) (Session, error)
	// Append stores messages at the end of a session and returns them with
	// their ids and timestamps set.
	Append(ctx context.Context, sessionID string, msgs ...Message) ([]Message, error)
	// History returns the effective history of a session, as built by
	// BuildHistory from a consistent snapshot.
	History(ctx context.Context, sessionID string) ([]Message, error)
	// DeleteSession deletes a session. If sessions were forked from it, it
	// is hidden and its rows are kept until no descendant needs them: no
	// other session's history ever changes.
	DeleteSession(ctx context.Context, id string) error

	// CreateTask creates a task and its child session in one transaction.
	CreateTask(ctx context.Context, t NewTask) (Task, error)
	// Task returns one task by its full id.
	Task(ctx context.Context, id string) (Task, error)
	// ResolveTask finds a task by full id or unique prefix, as
	// ResolveSession does; cleared tasks are found too.
	ResolveTask(ctx context.Context, ref string) (Task, error)
	// ListTasks lists tasks, newest first.
	ListTasks(ctx context.Context, f TaskFilter) ([]Task, error)
	// UpdateTask reads a task, applies change to it and writes it back, in
	// one transaction. It refuses (ErrConflict) a status change that
	// TaskStatus.CanBecome forbids, and an error from change aborts it.
	UpdateTask(ctx context.Context, id string, change func(*Task) error) (Task, error)

	io.Closer
}

// SessionFilter selects sessions to list.
type SessionFilter struct {
	// ParentID, when set, lists only the direct children of that session.
	ParentID string
	// Limit caps the number returned; 0 means no cap.
	Limit int
}

// ClearMessage returns the message that marks a context boundary.
func ClearMessage() Message {
	return Message{Role: RoleSystem, Kind: KindClear}
}
