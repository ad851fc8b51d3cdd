package storekit

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	sa "github.com/superagents/superagents"
)

// CheckNewTask checks a task about to be created and returns its record
// (queued unless it says otherwise): the task, the child session's first
// messages and the lease, with ids every store can hold.
func CheckNewTask(nt sa.NewTask) (sa.Task, error) {
	t := nt.Task
	if t.Status == "" {
		t.Status = sa.TaskQueued
	}
	if err := t.Validate(); err != nil {
		return sa.Task{}, err
	}
	if !Storable(t.ID) {
		return sa.Task{}, fmt.Errorf("%w: task id %q", sa.ErrInvalid, t.ID)
	}
	if !Storable(t.RunnerID) {
		return sa.Task{}, fmt.Errorf("%w: runner id %q", sa.ErrInvalid, t.RunnerID)
	}
	if !Storable(t.Launcher) {
		return sa.Task{}, fmt.Errorf("%w: launcher %q", sa.ErrInvalid, t.Launcher)
	}
	if err := ValidateMessages(nt.Session.Messages); err != nil {
		return sa.Task{}, err
	}
	if nt.Lease != nil && (nt.Lease.RunnerID == "" || !Storable(nt.Lease.RunnerID)) {
		return sa.Task{}, fmt.Errorf("%w: a task's lease needs a runner id of printable text", sa.ErrInvalid)
	}
	return t, nil
}

// CreateTaskTx is what a store's write transaction offers CreateTask.
type CreateTaskTx interface {
	ForkTx
	// ActiveBatch returns the batch of a session's newest active task
	// ("" when none), chosen one launch at a time on every process.
	ActiveBatch(ctx context.Context, parentID string) (string, error)
	// InsertTask writes a new task and records its creation.
	InsertTask(ctx context.Context, t sa.Task) error
	// PutLease writes a lease; the lease of a task's run on its new
	// session is not replaced.
	PutLease(ctx context.Context, l sa.TurnLease, replace bool) error
}

// CreateTask creates, in tx, task t (checked by CheckNewTask) with its
// child session, forked from the parent or fresh, named newID unless the
// task has an id; the session's first messages; and the run's lease.
func CreateTask(ctx context.Context, tx CreateTaskTx, nt sa.NewTask, t sa.Task, newID string, now time.Time) (sa.Task, error) {
	if nt.JoinActiveBatch {
		batch, err := tx.ActiveBatch(ctx, t.ParentSessionID)
		if err != nil {
			return sa.Task{}, fmt.Errorf("find the active batch: %w", err)
		}
		t.BatchID = cmp.Or(batch, t.BatchID)
	}
	parent, err := tx.LockParent(ctx, t.ParentSessionID)
	if err != nil {
		return sa.Task{}, fmt.Errorf("parent: %w", err)
	}
	last, err := tx.LastMessageID(ctx, parent.ID)
	if err != nil {
		return sa.Task{}, err
	}
	ns := nt.Session
	child := NewSession(cmp.Or(t.ID, newID), ns, now)
	if nt.Fork {
		child = ForkChild(child.ID, parent, last, sa.ForkOptions{Agent: ns.Agent, Model: ns.Model, Title: ns.Title, Origin: ns.Origin}, now)
	}
	if err := tx.InsertSession(ctx, child); err != nil {
		return sa.Task{}, err
	}
	if _, err := tx.InsertMessages(ctx, child.ID, "", ns.Messages); err != nil {
		return sa.Task{}, err
	}
	t.ID, t.ParentMessageID, t.IsForked, t.CreatedAt = child.ID, last, nt.Fork, now
	if t.StartedAt.IsZero() {
		t.StartedAt = now
	}
	t = NormalizeTask(t)
	if err := tx.InsertTask(ctx, t); err != nil {
		return sa.Task{}, err
	}
	if nt.Lease != nil {
		l := sa.TurnLease{SessionID: t.ID, RunnerID: nt.Lease.RunnerID, Holder: nt.Lease.Holder, TaskID: t.ID, AcquiredAt: now}
		if err := tx.PutLease(ctx, l, false); err != nil {
			return sa.Task{}, fmt.Errorf("write lease: %w", err)
		}
	}
	return t, nil
}

// FinishTx is what a store's write transaction offers FinishTask.
type FinishTx interface {
	// ParentLive reports whether a task's parent session is live,
	// holding it for the notification's append where the store locks
	// rows (before the task's row, the order deletion takes them in).
	ParentLive(ctx context.Context, taskID string) (bool, error)
	// UpdateTask changes a task as Tasks.UpdateTask does (see ChangeTask).
	UpdateTask(ctx context.Context, id string, change func(*sa.Task) error) (sa.Task, error)
	// ReleaseTaskLease gives back the lease a task's run holds on its
	// session.
	ReleaseTaskLease(ctx context.Context, taskID string) error
	BatchReader
	// InsertMessages appends messages to a session, recording them with
	// the id of the task they are about ("" for none).
	InsertMessages(ctx context.Context, sessionID, taskID string, msgs []sa.Message) ([]sa.Message, error)
	// WaitingMessages and MarkUndelivered: see InboxTx.
	WaitingMessages(ctx context.Context, taskID string) ([]sa.TaskMessage, error)
	MarkUndelivered(ctx context.Context, taskID, reason string) (int64, error)
}

// BatchReader reads the tasks of one batch of one parent session.
type BatchReader interface {
	// BatchCounts counts a batch's tasks, and the active ones among them.
	BatchCounts(ctx context.Context, batchID, parentID string) (total, active int, err error)
	// CompletedInBatch lists the ids of a batch's completed tasks, oldest
	// first.
	CompletedInBatch(ctx context.Context, batchID, parentID string) ([]string, error)
}

// finishTask ends a task in tx: change must leave it in a terminal status
// (ErrInvalid otherwise); the lease of its run is given back; and, if its
// parent is live, note's message about it and its batch is appended
// there. It returns the task as ended and the stored notification (zero
// when the parent is gone).
func finishTask(ctx context.Context, tx FinishTx, id string, change func(*sa.Task) error, note func(sa.Task, sa.BatchState) sa.Message) (sa.Task, sa.Message, error) {
	parentLive, err := tx.ParentLive(ctx, id)
	if err != nil {
		return sa.Task{}, sa.Message{}, err
	}
	ended, err := tx.UpdateTask(ctx, id, change)
	if err != nil {
		return sa.Task{}, sa.Message{}, err
	}
	if !ended.Status.Terminal() {
		return sa.Task{}, sa.Message{}, fmt.Errorf("%w: finishing task %s left it %s", sa.ErrInvalid, id, ended.Status)
	}
	if err := settleInbox(ctx, tx, ended); err != nil {
		return sa.Task{}, sa.Message{}, err
	}
	if err := tx.ReleaseTaskLease(ctx, id); err != nil {
		return sa.Task{}, sa.Message{}, fmt.Errorf("release the task's lease: %w", err)
	}
	if !parentLive {
		return ended, sa.Message{}, nil // the parent is gone: nobody to notify
	}
	batch, err := Batch(ctx, tx, ended)
	if err != nil {
		return sa.Task{}, sa.Message{}, err
	}
	msg := note(ended, batch)
	if err := msg.Validate(); err != nil {
		return sa.Task{}, sa.Message{}, fmt.Errorf("notification: %w", err)
	}
	stored, err := notify(ctx, tx, ended.ParentSessionID, ended.ID, msg)
	if err != nil {
		return sa.Task{}, sa.Message{}, err
	}
	return ended, stored, nil
}

// Batch returns the state of a task's batch; a task without a batch is a
// batch of one. The completed tasks' ids are read only once none is
// active: only the last task to end reports them.
func Batch(ctx context.Context, r BatchReader, t sa.Task) (sa.BatchState, error) {
	if t.BatchID == "" {
		return BatchOfOne(t), nil
	}
	var b sa.BatchState
	var err error
	if b.Total, b.Active, err = r.BatchCounts(ctx, t.BatchID, t.ParentSessionID); err != nil {
		return sa.BatchState{}, fmt.Errorf("read batch: %w", err)
	}
	if b.Active > 0 {
		return b, nil
	}
	if b.Completed, err = r.CompletedInBatch(ctx, t.BatchID, t.ParentSessionID); err != nil {
		return sa.BatchState{}, fmt.Errorf("read batch: %w", err)
	}
	return b, nil
}

// notify appends task taskID's notification to a session.
func notify(ctx context.Context, tx FinishTx, sessionID, taskID string, msg sa.Message) (sa.Message, error) {
	msgs, err := tx.InsertMessages(ctx, sessionID, taskID, []sa.Message{msg})
	if err != nil {
		return sa.Message{}, err
	}
	return msgs[0], nil
}

// EncodeTask encodes the columns of task t both stores keep encoded: its
// progress (JSON) and worktree.
func EncodeTask(t sa.Task) (progress, worktree []byte, err error) {
	if progress, err = json.Marshal(t.Progress); err != nil {
		return nil, nil, fmt.Errorf("encode progress: %w", err)
	}
	if worktree, err = EncodeWorktree(t.Worktree); err != nil {
		return nil, nil, err
	}
	return progress, worktree, nil
}
