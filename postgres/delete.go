package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
)

// LockForDelete checks that a session is live, locking its row.
func (tx *writeTx) LockForDelete(ctx context.Context, id string) error {
	_, err := liveSession(ctx, tx, id, lockDelete)
	return err
}

// UnclearedTasks lists the ids of a session's tasks not cleared yet,
// locking their rows in the order of their ids.
func (tx *writeTx) UnclearedTasks(ctx context.Context, parentID string) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT id FROM tasks WHERE parent_session_id = $1 AND cleared_at IS NULL
		ORDER BY id FOR UPDATE`, parentID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// MarkDeleted hides a session and records its deletion.
func (tx *writeTx) MarkDeleted(ctx context.Context, id string) error {
	if _, err := tx.Exec(ctx, `UPDATE sessions SET deleted_at = $1 WHERE id = $2`, nanos(tx.now), id); err != nil {
		return fmt.Errorf("mark deleted: %w", err)
	}
	return tx.record(ctx, sa.ChangeSessionDeleted, id, "", map[string]string{"id": id})
}

// SessionRow reads a session's parent and whether it is deleted.
func (tx *writeTx) SessionRow(ctx context.Context, id string) (string, bool, error) {
	var parent *string
	var deleted *int64
	err := tx.QueryRow(ctx, `SELECT parent_id, deleted_at FROM sessions WHERE id = $1`, id).Scan(&parent, &deleted)
	if err != nil || parent == nil {
		return "", deleted != nil, err
	}
	return *parent, deleted != nil, nil
}

// Children counts a session's children and gives their latest fork point.
func (tx *writeTx) Children(ctx context.Context, id string) (int, int64, error) {
	var n int
	var last *int64
	err := tx.QueryRow(ctx, `SELECT COUNT(*), MAX(fork_message_id) FROM sessions WHERE parent_id = $1`, id).Scan(&n, &last)
	if err != nil || last == nil {
		return n, 0, err
	}
	return n, *last, nil
}

// DeleteMessages deletes a session's own messages after a message id.
func (tx *writeTx) DeleteMessages(ctx context.Context, id string, after int64) error {
	_, err := tx.Exec(ctx, `DELETE FROM messages WHERE session_id = $1 AND id > $2`, id, after)
	return err
}

// DeleteSessionRow deletes a session's row.
func (tx *writeTx) DeleteSessionRow(ctx context.Context, id string) error {
	_, err := tx.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, id)
	return err
}
