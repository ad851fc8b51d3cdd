package superagents

import (
	"errors"
	"fmt"
	"time"
)

// TurnLease is the right to write to a session: to run a turn in it, or to
// append or clear outside a turn. A session has at most one at a time,
// taken in the store, so the rule holds across every way in and every
// process. A lease belongs to a runner (see Runner): when the runner is
// taken for dead, its leases go with it.
type TurnLease struct {
	SessionID string `json:"session_id"`
	// RunnerID is the process that holds the lease.
	RunnerID string `json:"runner_id"`
	// Holder says, for people, what holds it: "chat", "http", "run",
	// "cli", "task".
	Holder string `json:"holder"`
	// TaskID is set when a task's own run holds its session; only such a
	// lease may be taken on a task's session.
	TaskID     string    `json:"task_id,omitempty"`
	AcquiredAt time.Time `json:"acquired_at"`
}

// ErrBusy: a session's lease is held by another turn. Wait for its end, or
// stop it.
var ErrBusy = errors.New("busy")

// BusyError is the error of a lease request refused because another holds
// the session.
type BusyError struct {
	Lease TurnLease
}

func (e *BusyError) Error() string {
	what := "a turn"
	if e.Lease.TaskID != "" {
		what = "its task"
	}
	return fmt.Sprintf("session %s is busy: %s is running there (%s, since %s); wait for it to end, or stop it",
		ShortID(e.Lease.SessionID), what, e.Lease.Holder, e.Lease.AcquiredAt.Local().Format(time.TimeOnly))
}

// Is makes errors.Is(err, ErrBusy) and errors.Is(err, ErrConflict) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy || target == ErrConflict }

// TaskSessionError refuses to write to a task's session from anywhere but
// the task's own run or resume: its conversation belongs to the task.
type TaskSessionError struct {
	SessionID string
}

func (e *TaskSessionError) Error() string {
	return fmt.Sprintf("session %s is the session of background task %s: only the task writes to it; "+
		"resume the task to send it a follow-up, or fork the session to continue from it", ShortID(e.SessionID), ShortID(e.SessionID))
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *TaskSessionError) Is(target error) bool { return target == ErrConflict }
