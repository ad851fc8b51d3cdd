package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

// DeleteSession deletes a live session. It is hidden at once (gone from
// listings, unresolvable, unusable as a parent), its tasks leave every
// listing, and its rows are reclaimed as far as no descendant needs them:
// entirely when nothing was forked from it, otherwise only the messages
// after its children's latest fork point. Reclaiming a session may free
// its deleted parent in turn, so it walks up the chain.
func (s *Store) DeleteSession(ctx context.Context, id string) error {
	err := s.inWrite(ctx, func(tx *writeTx) error {
		if err := requireLive(ctx, tx, id); err != nil {
			return err
		}
		now := nanos(tx.now)
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET deleted_at = ? WHERE id = ?`, now, id); err != nil {
			return fmt.Errorf("mark deleted: %w", err)
		}
		if err := tx.record(ctx, sa.ChangeSessionDeleted, id, "", map[string]string{"id": id}); err != nil {
			return err
		}
		if err := clearTasksOf(ctx, tx, id); err != nil {
			return err
		}
		return reclaim(ctx, tx, id)
	})
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}

// reclaim frees what deleted sessions no longer need, starting at id and
// going up through deleted ancestors. Live sessions keep everything.
func reclaim(ctx context.Context, tx *writeTx, id string) error {
	for id != "" {
		var parent sql.NullString
		var deleted sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT parent_id, deleted_at FROM sessions WHERE id = ?`, id).Scan(&parent, &deleted)
		if err != nil {
			return fmt.Errorf("reclaim %s: %w", id, err)
		}
		if !deleted.Valid {
			return nil
		}
		var children int
		var lastForkPoint sql.NullInt64
		err = tx.QueryRowContext(ctx,
			`SELECT COUNT(*), MAX(fork_message_id) FROM sessions WHERE parent_id = ?`, id).Scan(&children, &lastForkPoint)
		if err != nil {
			return fmt.Errorf("reclaim %s: %w", id, err)
		}
		if children > 0 {
			// Children inherit this session's messages up to their fork
			// points only; later ones are nobody's.
			_, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ? AND id > ?`, id, lastForkPoint.Int64)
			if err != nil {
				return fmt.Errorf("reclaim messages of %s: %w", id, err)
			}
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE session_id = ?`, id); err != nil {
			return fmt.Errorf("reclaim messages of %s: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id); err != nil {
			return fmt.Errorf("reclaim session %s: %w", id, err)
		}
		id = parent.String
	}
	return nil
}

// clearTasksOf removes a deleted parent's tasks from listings. Its active
// tasks are ended as cancelled on the way: nobody is left to hear from
// them, and the process running them stops them when it reads the change.
func clearTasksOf(ctx context.Context, tx *writeTx, parentID string) error {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM tasks WHERE parent_session_id = ? AND cleared_at IS NULL`, parentID)
	if err != nil {
		return fmt.Errorf("clear tasks: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("clear tasks: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("clear tasks: %w", err)
	}
	for _, id := range ids {
		_, err := updateTask(ctx, tx, id, storekit.ClearForDeletedParent(tx.now))
		if err != nil {
			return fmt.Errorf("clear task %s: %w", id, err)
		}
	}
	return nil
}
