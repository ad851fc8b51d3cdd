package superagents

import (
	"encoding/json"
	"fmt"
	"time"
)

// TaskStatus is where a background task is in its life.
type TaskStatus string

// Task statuses. Completed, error and cancelled are terminal; they are
// left only by a resume (→ resumed), of a completed task or of one whose
// resume was cancelled or failed (see Task.CanBecome).
const (
	TaskQueued    TaskStatus = "queued"
	TaskRunning   TaskStatus = "running"
	TaskCompleted TaskStatus = "completed"
	TaskError     TaskStatus = "error"
	TaskCancelled TaskStatus = "cancelled"
	TaskResumed   TaskStatus = "resumed"
)

// ParentDeletedError is the error of a task that was cancelled because its
// parent session was deleted.
const ParentDeletedError = "cancelled: its parent session was deleted"

// TaskStatuses lists every status, in lifecycle order.
var TaskStatuses = []TaskStatus{TaskQueued, TaskRunning, TaskResumed, TaskCompleted, TaskError, TaskCancelled}

// Valid reports whether s is a known status.
func (s TaskStatus) Valid() bool {
	switch s {
	case TaskQueued, TaskRunning, TaskCompleted, TaskError, TaskCancelled, TaskResumed:
		return true
	}
	return false
}

// Terminal reports whether the task has ended (for now: a completed task
// can still be resumed).
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskError || s == TaskCancelled
}

// Active reports whether the task is queued or has a model working on it.
func (s TaskStatus) Active() bool {
	return s == TaskQueued || s == TaskRunning || s == TaskResumed
}

// CanBecome reports whether a task may move from s to next. Terminal states
// never regress: a late event cannot turn cancelled into completed. The
// only way out of a terminal state is completed → resumed.
func (s TaskStatus) CanBecome(next TaskStatus) bool {
	if s == next {
		return true
	}
	switch s {
	case TaskQueued:
		return next == TaskRunning || next == TaskError || next == TaskCancelled
	case TaskRunning, TaskResumed:
		return next.Terminal()
	case TaskCompleted:
		return next == TaskResumed
	}
	return false
}

// TaskProgress is what a running task has done so far.
type TaskProgress struct {
	ToolCalls  int            `json:"tool_calls"`
	ByName     map[string]int `json:"by_name,omitempty"`
	LastTools  []string       `json:"last_tools,omitempty"`
	Phase      string         `json:"phase,omitempty"`
	LastUpdate time.Time      `json:"last_update,omitzero"`
}

// Task is a background sub-agent. Its ID is the ID of the session it runs
// in (its child session). Result is its latest answer: while a resume
// runs, and after one that was cancelled or failed, still the one before.
type Task struct {
	ID              string `json:"id"`
	ParentSessionID string `json:"parent_session_id"`
	// ParentMessageID is the parent's last message when the task was
	// launched (0 when the parent had none).
	ParentMessageID int64      `json:"parent_message_id,omitempty"`
	ParentAgent     string     `json:"parent_agent,omitempty"`
	Description     string     `json:"description"`
	Prompt          string     `json:"prompt"`
	Agent           string     `json:"agent"`
	Status          TaskStatus `json:"status"`
	// StartedAt is when the task was launched, or last resumed.
	StartedAt         time.Time    `json:"started_at"`
	CompletedAt       *time.Time   `json:"completed_at,omitempty"`
	ResultRetrievedAt *time.Time   `json:"result_retrieved_at,omitempty"`
	Result            string       `json:"result,omitempty"`
	Error             string       `json:"error,omitempty"`
	Progress          TaskProgress `json:"progress"`
	BatchID           string       `json:"batch_id,omitempty"`
	ResumeCount       int          `json:"resume_count"`
	IsForked          bool         `json:"is_forked"`
	// Timeout is the limit on one run of the task; 0 means the default.
	// JSON shows it in seconds, as requests give it.
	Timeout Seconds `json:"timeout,omitempty"`
	// Budget is what the task and the tasks it launches may spend; it is
	// fixed at launch.
	Budget Budget `json:"budget,omitzero"`
	// RunnerID is the runner (process) that runs the task while it is
	// active; see Runner.
	RunnerID string `json:"runner_id,omitempty"`
	// ClearedAt is set when the task was cleared from its parent's
	// listing (superagents_clear, or the parent session's deletion).
	ClearedAt *time.Time `json:"cleared_at,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	// Worktree is set for a task isolated in a git worktree of its own
	// (isolation "worktree"): its tools work there, not in the workspace.
	Worktree *TaskWorktree `json:"worktree,omitempty"`
	// MayAsk is set for a task whose launcher can answer its questions
	// (an MCP client that declared the Tasks extension): it may then wait
	// for its user's input (see Inputs). Fixed at launch.
	MayAsk bool `json:"may_ask,omitempty"`
	// Launcher names, for a task an MCP client launched, the principal
	// it launched it as: over HTTP the holder of an API token, over stdio
	// the workspace of the server it reached. The Tasks extension's
	// requests reach the task only as the same principal. Empty for a
	// task launched any other way. Fixed at launch.
	Launcher string `json:"launcher,omitempty"`
	// ForkContext, in the answer to a forked task's launch, is what it
	// inherits and what that is expected to cost; it is not stored.
	ForkContext *ForkContext `json:"fork_context,omitempty"`
}

// Isolations a task may be launched with: none (it works in the
// workspace) or "worktree".
const (
	IsolationNone     = ""
	IsolationWorktree = "worktree"
)

// ParseIsolation checks an isolation a request names ("" and "none" are
// no isolation).
func ParseIsolation(s string) (string, error) {
	switch s {
	case IsolationNone, "none":
		return IsolationNone, nil
	case IsolationWorktree:
		return IsolationWorktree, nil
	}
	return "", fmt.Errorf("%w: unknown isolation %q: use \"worktree\" (a git worktree of its own) or leave it out", ErrInvalid, s)
}

// TaskWorktree is the git worktree a task works in: made at its launch
// from the repository's HEAD on a branch of its own, so that tasks that
// run at once never write over each other or over the user's checkout.
type TaskWorktree struct {
	// Path is the worktree's directory; every node on the machine works
	// the task there.
	Path string `json:"path"`
	// Branch is the task's branch; Base the commit it started from.
	Branch string `json:"branch"`
	Base   string `json:"base"`
	// Repo is the main working tree of the repository.
	Repo string `json:"repo"`
	// Changes is `git diff --stat` from Base to the worktree as the
	// task's latest run left it (uncommitted and untracked files
	// included); empty when it changed nothing.
	Changes string `json:"changes,omitempty"`
	// Commits is how many commits the branch had beyond Base then.
	Commits int `json:"commits,omitempty"`
	// Removed is set when the task's latest run changed nothing, so its
	// worktree and branch were removed (a resume makes them again).
	Removed bool `json:"removed,omitempty"`
}

// Seconds is a duration that JSON writes as a number of seconds.
type Seconds time.Duration

// Duration returns s as a time.Duration.
func (s Seconds) Duration() time.Duration { return time.Duration(s) }

func (s Seconds) String() string { return time.Duration(s).String() }

func (s Seconds) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(s).Seconds()) }

func (s *Seconds) UnmarshalJSON(b []byte) error {
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("a duration in seconds: %w", err)
	}
	*s = Seconds(secs * float64(time.Second))
	return nil
}

// Validate reports whether a task record is fit to be stored.
func (t Task) Validate() error {
	if t.ParentSessionID == "" {
		return fmt.Errorf("%w: a task needs a parent session", ErrInvalid)
	}
	if !t.Status.Valid() {
		return fmt.Errorf("%w: unknown task status %q", ErrInvalid, t.Status)
	}
	if t.Timeout < 0 {
		return fmt.Errorf("%w: negative task timeout", ErrInvalid)
	}
	if err := t.Budget.Validate(); err != nil {
		return err
	}
	if w := t.Worktree; w != nil && (w.Path == "" || w.Branch == "" || w.Base == "" || w.Repo == "") {
		return fmt.Errorf("%w: a task's worktree needs its path, branch, base commit and repository", ErrInvalid)
	}
	return nil
}

// NewTask describes a task to create together with its child session, in
// one transaction.
type NewTask struct {
	// Task is the record; its CreatedAt is assigned, and its ID too
	// unless it has one (a new id, which the child session takes: a task
	// with a worktree is named after its id before it is created).
	Task Task
	// Fork links the child session to Task.ParentSessionID at the parent's
	// last message, so it inherits the parent's history (a delta fork).
	Fork bool
	// Session describes the child session and the messages it starts with.
	Session NewSession
	// JoinActiveBatch puts the task in the batch of its parent's active
	// tasks when there are any (Task.BatchID is kept otherwise), decided
	// in the creating transaction: launches into one session at once,
	// from any process, never start two batches.
	JoinActiveBatch bool
	// Lease, when set, leases the new session to the task's run (Lease's
	// RunnerID and Holder; the store fills in the rest) in the same
	// transaction: a task that runs where it is launched holds its
	// session from the start, without a write of its own for it.
	Lease *TurnLease
}

// TaskFilter selects tasks to list. Zero fields select everything; cleared
// tasks are left out unless IncludeCleared is set.
type TaskFilter struct {
	ParentSessionID string
	Status          TaskStatus
	Agent           string
	BatchID         string
	IncludeCleared  bool
	// Active selects the tasks that are queued, running or resumed.
	Active bool
	// RunnerID selects the tasks of one runner.
	RunnerID string
	// Search selects the tasks whose description contains this text,
	// ignoring case (Unicode simple case folding: É matches é, Σ matches
	// ς). Every character stands for itself: none is a wildcard.
	Search string
	// Offset skips that many tasks of the listing; Limit caps the rest (0:
	// no cap). Counts and stats ignore both.
	Offset int
	Limit  int
}

// BatchState is what a task's notification tells of the batch the task
// ended in (a task without a batch is a batch of one): how many tasks it
// holds, how many of them are still active, and, once none is, the ids
// of those that completed, oldest first. The ids are read only then, as
// a batch's last ending is the one that lists them: a batch that grows
// while it runs (a client launching a task a second into one session)
// must not cost its size at every ending.
type BatchState struct {
	Total     int
	Active    int
	Completed []string
}

// Done is how many tasks of the batch have ended.
func (b BatchState) Done() int { return b.Total - b.Active }

// TaskStats sums up a set of tasks.
type TaskStats struct {
	Total    int                `json:"total"`
	ByStatus map[TaskStatus]int `json:"by_status"`
	ByAgent  map[string]int     `json:"by_agent"`
	// ToolCalls is the tool calls of all the tasks, added up.
	ToolCalls int `json:"tool_calls"`
	// Durations are those of the tasks that have ended: from when their
	// latest run started to when it ended.
	Durations DurationStats `json:"durations"`
}

// DurationStats describes a set of durations.
type DurationStats struct {
	Count int           `json:"count"`
	Avg   time.Duration `json:"avg"`
	Min   time.Duration `json:"min"`
	Max   time.Duration `json:"max"`
}

// TaskOutput is what reading a task's output found: the task and, for a
// blocking read, whether the wait ended before the task did and how long
// it was; for a task still running, its latest answer text.
type TaskOutput struct {
	Task Task
	// TimedOut is set when a blocking wait ended before the task did.
	TimedOut bool
	// Told is set when a blocking wait of a task's own run stopped early
	// because the task was told something (a message sent to it, a
	// question one of its own tasks asks), which it reads next.
	Told bool
	// Waited is how long a blocking read waited.
	Waited time.Duration
	// Partial is the latest answer text of a task that has not finished.
	Partial string
	// Question is what an active task waits to have answered ("" when
	// it waits for nothing).
	Question string
}

// Blocking reads of a task's output: how long one waits by default, and
// at most.
const (
	DefaultBlockTimeout = 60 * time.Second
	MaxBlockTimeout     = 600 * time.Second
)

// The task tools' names, as models and MCP clients call them.
const (
	TaskTool   = "superagents_task"
	OutputTool = "superagents_output"
	ListTool   = "superagents_list"
	CancelTool = "superagents_cancel"
	ClearTool  = "superagents_clear"
	SendTool   = "superagents_send"
)

// ForkContext is the context a forked task inherits (the digest of its
// parent's conversation, with its preamble) and what its first request is
// expected to pay for it: a fork launched within the prompt cache's
// lifetime after another of the same parent reads what they share.
type ForkContext struct {
	// Tokens is the inherited context's size, estimated.
	Tokens int64 `json:"tokens"`
	// CacheReadTokens of it are expected to be read from the prompt cache,
	// CacheWriteTokens written to it.
	CacheReadTokens  int64 `json:"cache_read_tokens"`
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	// USD is what that input is expected to cost at the model's prices;
	// nil when the model has none.
	USD *float64 `json:"usd,omitempty"`
}
