package sqlite

import (
	"context"
	"database/sql"
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

// SessionRow reads a session's parent and whether it is deleted.
func (tx *writeTx) SessionRow(ctx context.Context, id string) (string, bool, error) {
	var parent sql.NullString
	var deleted sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT parent_id, deleted_at FROM sessions WHERE id = ?`, id).Scan(&parent, &deleted)
	return parent.String, deleted.Valid, err
}

// Children counts a session's children and gives their latest fork point.
func (tx *writeTx) Children(ctx context.Context, id string) (int, int64, error) {
	var n int
	var last sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*), MAX(fork_message_id) FROM sessions WHERE parent_id = ?`, id).Scan(&n, &last)
	return n, last.Int64, err
}

// DeleteMessages deletes a session's own messages after a message id.
func (tx *writeTx) DeleteMessages(ctx context.Context, id string, after int64) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ? AND id > ?`, id, after)
	return err
}

// DeleteSessionRow deletes a session's row.
func (tx *writeTx) DeleteSessionRow(ctx context.Context, id string) error {
	_, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	return err
}
