package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

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
		// Rows are locked before the id lock: the session (which waits
		// for forks and appends under way), then its tasks.
		if _, err := liveSession(ctx, tx, id, lockDelete); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT id FROM tasks WHERE parent_session_id = $1 AND cleared_at IS NULL
			ORDER BY id FOR UPDATE`, id)
		if err != nil {
			return fmt.Errorf("clear tasks: %w", err)
		}
		tasks, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("clear tasks: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE sessions SET deleted_at = $1 WHERE id = $2`, nanos(tx.now), id); err != nil {
			return fmt.Errorf("mark deleted: %w", err)
		}
		if err := tx.record(ctx, sa.ChangeSessionDeleted, id, "", map[string]string{"id": id}); err != nil {
			return err
		}
		if err := clearTasks(ctx, tx, tasks); err != nil {
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
// going up through deleted ancestors. Live sessions keep everything. It
// runs under the id lock, so two deletions never reclaim at once.
func reclaim(ctx context.Context, tx *writeTx, id string) error {
	for id != "" {
		var parent *string
		var deleted *int64
		err := tx.QueryRow(ctx, `SELECT parent_id, deleted_at FROM sessions WHERE id = $1`, id).Scan(&parent, &deleted)
		if err != nil {
			return fmt.Errorf("reclaim %s: %w", id, err)
		}
		if deleted == nil {
			return nil
		}
		var children int
		var lastForkPoint *int64
		err = tx.QueryRow(ctx,
			`SELECT COUNT(*), MAX(fork_message_id) FROM sessions WHERE parent_id = $1`, id).Scan(&children, &lastForkPoint)
		if err != nil {
			return fmt.Errorf("reclaim %s: %w", id, err)
		}
		if children > 0 {
			// Children inherit this session's messages up to their fork
			// points only; later ones are nobody's.
			if _, err := tx.Exec(ctx, `DELETE FROM messages WHERE session_id = $1 AND id > $2`, id, *lastForkPoint); err != nil {
				return fmt.Errorf("reclaim messages of %s: %w", id, err)
			}
			return nil
		}
		if _, err := tx.Exec(ctx, `DELETE FROM messages WHERE session_id = $1`, id); err != nil {
			return fmt.Errorf("reclaim messages of %s: %w", id, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM sessions WHERE id = $1`, id); err != nil {
			return fmt.Errorf("reclaim session %s: %w", id, err)
		}
		id = ""
		if parent != nil {
			id = *parent
		}
	}
	return nil
}

// clearTasks removes a deleted parent's tasks (locked by the caller) from
// listings, ending the active ones as cancelled.
func clearTasks(ctx context.Context, tx *writeTx, ids []string) error {
	for _, id := range ids {
		_, err := updateTask(ctx, tx, id, storekit.ClearForDeletedParent(tx.now))
		if err != nil {
			return fmt.Errorf("clear task %s: %w", id, err)
		}
	}
	return nil
}
