package sqlite

import (
	"context"

	sa "github.com/superagents/superagents"
)

var (
	_ sa.Inputs = (*Store)(nil)
	_ sa.Inbox  = (*Store)(nil)
)

// LockTask reads a task (writes are serial: nothing to lock).
func (tx *writeTx) LockTask(ctx context.Context, id string) (sa.Task, error) {
	return readTask(ctx, tx, id)
}

// RecordTaskUpdated records a change of a task.
func (tx *writeTx) RecordTaskUpdated(ctx context.Context, t sa.Task) error {
	return tx.record(ctx, sa.ChangeTaskUpdated, t.ParentSessionID, t.ID, t)
}

// RecordTaskChange records a change of kind about a task, carrying data.
func (tx *writeTx) RecordTaskChange(ctx context.Context, kind sa.ChangeKind, t sa.Task, data any) error {
	return tx.record(ctx, kind, t.ParentSessionID, t.ID, data)
}
