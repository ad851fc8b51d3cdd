package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
)

// LockForDelete checks that a session is live, locking its row. Rows are
// locked before the id lock (see writeTx.send): the session first, which
// waits for forks and appends under way, then its tasks (UnclearedTasks);
// reclaiming runs after MarkDeleted has taken the id lock, so two
// deletions never reclaim at once.
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
