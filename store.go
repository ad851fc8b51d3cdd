package superagents

import (
	"context"
	"io"
)

// Store keeps sessions, messages and tasks. Every method that writes more
// than one row does it in one transaction: a crash leaves either all of it
// or none. Implementations live in their own packages (sqlite/) and must
// pass the conformance suite in storetest/. Consumers take the part they
// use (Sessions, Tasks, ChangeLog, Runners, Leases, HostLinker, Inputs,
// Inbox), not the
// whole.
//
// Deleted sessions are invisible through this interface (ErrNotFound), but
// the messages their descendants inherit stay readable through History.
//
// StoreReader is its reads alone: what a way in is handed.
type Store interface {
	Sessions
	Tasks
	ChangeLog
	Runners
	Leases
	HostLinker
	Inputs // input.go
	Inbox  // inbox.go
	io.Closer
}

// StoreReader is the reads of a Store, without a method that writes: the
// view of the store the runtime hands the ways in (their writes are the
// runtime's operations).
type StoreReader interface {
	SessionReader
	TaskReader
	ChangeLog
	HostLinkReader
	// InputRequests: see Inputs.
	InputRequests(ctx context.Context, taskID string) ([]InputRequest, error)
	// TaskMessages and WaitingTaskMessages: see Inbox.
	TaskMessages(ctx context.Context, taskID string) ([]TaskMessage, error)
	WaitingTaskMessages(ctx context.Context, taskID string) (int, error)
	// Runners: see Runners.
	Runners(ctx context.Context) ([]Runner, error)
	// Lease: see Leases.
	Lease(ctx context.Context, sessionID string) (TurnLease, error)
}

// Sessions are the conversations and their messages, stored as deltas.
type Sessions interface {
	SessionReader
	// CreateSession creates a root session with its first messages.
	CreateSession(ctx context.Context, s NewSession) (Session, error)
	// Fork creates a child of parentID that inherits the parent's effective
	// history up to the parent's current last message. It writes one row,
	// whatever the length of the history.
	Fork(ctx context.Context, parentID string, opts ForkOptions) (Session, error)
	// Append stores messages at the end of a session and returns them with
	// their ids and timestamps set.
	Append(ctx context.Context, sessionID string, msgs ...Message) ([]Message, error)
	// DeleteSession deletes a session. If sessions were forked from it, it
	// is hidden and its rows are kept until no descendant needs them: no
	// other session's history ever changes. Its tasks leave every listing,
	// and those still active are ended as cancelled (ParentDeletedError),
	// in the same transaction.
	DeleteSession(ctx context.Context, id string) error
}

// SessionReader is the reads of Sessions.
type SessionReader interface {
	// Session returns one session by its full id.
	Session(ctx context.Context, id string) (Session, error)
	// ResolveSession finds the session whose id is ref or starts with the
	// prefix ref (at least MinPrefixLength characters). An ambiguous prefix
	// is an *AmbiguousIDError listing the candidates.
	ResolveSession(ctx context.Context, ref string) (Session, error)
	// ListSessions lists sessions, newest first.
	ListSessions(ctx context.Context, f SessionFilter) ([]SessionSummary, error)
	// History returns the effective history of a session, as built by
	// BuildHistory from a consistent snapshot.
	History(ctx context.Context, sessionID string) ([]Message, error)
	// HistoryChunks hands the same history to fn in chunks of at most size
	// messages as it reads them (StreamHistory), from one snapshot: a
	// long history is written out while the rest is read.
	HistoryChunks(ctx context.Context, sessionID string, size int, fn func([]Message) error) error
	// MessagesAfter returns the messages stored in the session itself
	// after the message afterID, oldest first: its own rows, not its
	// history (nothing inherited through a fork; no clear or compaction
	// applied). It answers "what came since" without reading the whole
	// history.
	MessagesAfter(ctx context.Context, sessionID string, afterID int64) ([]Message, error)
	// LatestMessage returns the newest message of a session's effective
	// history that matches (the last match in what History returns), and
	// false when none does. It reads from the end, so its cost does not
	// grow with the history.
	LatestMessage(ctx context.Context, sessionID string, match MessageMatch) (Message, bool, error)
}

// Tasks are the background tasks' records.
type Tasks interface {
	TaskReader
	// CreateTask creates a task and its child session in one transaction.
	CreateTask(ctx context.Context, t NewTask) (Task, error)
	// UpdateTask reads a task, applies change to it and writes it back, in
	// one transaction. It refuses (ErrConflict) a status change that
	// Task.CanBecome forbids, and an error from change aborts it.
	UpdateTask(ctx context.Context, id string, change func(*Task) error) (Task, error)
	// FinishTask ends a task: it applies change, which must leave the task
	// completed, error or cancelled (ErrConflict if the task cannot get
	// there, for example because it has ended already), and stores the
	// notification note builds at the end of the parent session, in one
	// transaction. A task therefore never ends without its notification,
	// nor twice. note gets the ended task and the state of its batch as it
	// is in that transaction (the ended task counted), so counts like "3 of
	// 4 done" are exact even when tasks end at once. No
	// notification is stored when the parent session is gone. The turn
	// lease its run holds on its session goes with it: a task that ended
	// runs no more, and only its resume may take that session again. It
	// returns the ended task and the stored notification (zero when none
	// was stored).
	FinishTask(ctx context.Context, id string, change func(*Task) error, note func(ended Task, batch BatchState) Message) (Task, Message, error)
}

// TaskReader is the reads of Tasks.
type TaskReader interface {
	// Task returns one task by its full id.
	Task(ctx context.Context, id string) (Task, error)
	// ResolveTask finds a task by full id or unique prefix, as
	// ResolveSession does; cleared tasks are found too.
	ResolveTask(ctx context.Context, ref string) (Task, error)
	// ListTasks lists tasks, newest first.
	ListTasks(ctx context.Context, f TaskFilter) ([]Task, error)
	// CountTasks counts the tasks ListTasks would list without Offset and
	// Limit.
	CountTasks(ctx context.Context, f TaskFilter) (int, error)
	// TaskStats sums up the tasks ListTasks would list without Offset and
	// Limit.
	TaskStats(ctx context.Context, f TaskFilter) (TaskStats, error)
	// ResolveBatch finds the batch whose id is ref or starts with the
	// prefix ref, as ResolveSession does, and returns its full id.
	ResolveBatch(ctx context.Context, ref string) (string, error)
}

// ChangeLog is the log of every write, in commit order.
type ChangeLog interface {
	// Changes returns the change log after the entry with ID after, oldest
	// first, at most limit entries. Old entries are pruned: a reader that
	// falls further behind than the log keeps gets the oldest kept ones
	// (their first ID tells it that it missed some).
	Changes(ctx context.Context, after int64, limit int) ([]Change, error)
	// LastChangeID returns the ID of the newest change (0 when none).
	LastChangeID(ctx context.Context) (int64, error)
}

// Runners are the processes that run turns and tasks, with their
// heartbeats.
type Runners interface {
	// RegisterRunner records a runner; TouchRunner marks it alive now;
	// RemoveRunner deletes it, and the turn leases it holds, in one
	// transaction. Runners lists them.
	RegisterRunner(ctx context.Context, r Runner) error
	TouchRunner(ctx context.Context, id string) error
	RemoveRunner(ctx context.Context, id string) error
	Runners(ctx context.Context) ([]Runner, error)
}

// Leases are the sessions' turn leases: one writer at a time per session.
type Leases interface {
	// AcquireTurn takes the turn lease of l.SessionID for l.RunnerID and
	// returns it with AcquiredAt set. It refuses with a *BusyError while
	// another lease is held (even by the same runner: one turn at a time),
	// with a *TaskSessionError when the session is a task's and l.TaskID
	// is not that task, and with ErrNotFound when the session does not
	// exist. A lease whose runner is no longer registered is taken over.
	AcquireTurn(ctx context.Context, l TurnLease) (TurnLease, error)
	// ReleaseTurn gives back a lease of sessionID held by runnerID; it is
	// a no-op when that runner does not hold it.
	ReleaseTurn(ctx context.Context, sessionID, runnerID string) error
	// Lease returns the lease held on a session (ErrNotFound when none).
	Lease(ctx context.Context, sessionID string) (TurnLease, error)
}

// SessionFilter selects sessions to list.
type SessionFilter struct {
	// ParentID, when set, lists only the direct children of that session.
	ParentID string
	// Offset skips that many sessions of the listing.
	Offset int
	// Limit caps the number returned; 0 means no cap.
	Limit int
}

// ClearMessage returns the message that marks a context boundary.
func ClearMessage() Message {
	return Message{Role: RoleSystem, Kind: KindClear}
}

// ChangeNotifier is implemented by stores that can say when they wrote a
// change, so followers of the log need not poll for this process's own
// writes (they still poll, slowly, for other processes').
type ChangeNotifier interface {
	// Changed returns a channel that receives a value after writes that
	// recorded changes; signals may be merged.
	Changed() <-chan struct{}
}

// ForkRecord is the message a front end stores in a new child to record
// where it was forked from ("Forked from abc123..."). It is kind fork: a
// record for people, never sent to a model.
func ForkRecord(parent Session) Message {
	return Message{Role: RoleSystem, Kind: KindFork, Parts: []Part{TextPart("Forked from " + ShortID(parent.ID))}}
}
