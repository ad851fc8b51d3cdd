package sqlite

import (
	"context"
	"fmt"

	sa "github.com/superagents/superagents"
)

// LockForDelete checks that a session is live (writes are serial: nothing
// to lock).
func (tx *writeTx) LockForDelete(ctx context.Context, id string) error {
	return requireLive(ctx, tx, id)
}

// UnclearedTasks lists the ids of a session's tasks not cleared yet.
func (tx *writeTx) UnclearedTasks(ctx context.Context, parentID string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM tasks WHERE parent_session_id = ? AND cleared_at IS NULL ORDER BY id`, parentID)
	if err != nil {
		return nil, err
	}
	return collectStrings(rows)
}

// MarkDeleted hides a session and records its deletion.
func (tx *writeTx) MarkDeleted(ctx context.Context, id string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET deleted_at = ? WHERE id = ?`, nanos(tx.now), id); err != nil {
		return fmt.Errorf("mark deleted: %w", err)
	}
	return tx.record(ctx, sa.ChangeSessionDeleted, id, "", map[string]string{"id": id})
}
