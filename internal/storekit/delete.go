package storekit

import (
	"context"
	"fmt"
	"time"

	sa "github.com/superagents/superagents"
)

// DeleteTx is what a store's write transaction offers DeleteSession.
type DeleteTx interface {
	// LockForDelete checks that a session is live, holding it against
	// forks, appends and launches under way where the store locks rows.
	LockForDelete(ctx context.Context, id string) error
	// UnclearedTasks lists (and holds) the ids of a session's tasks not
	// cleared yet.
	UnclearedTasks(ctx context.Context, parentID string) ([]string, error)
	// MarkDeleted hides a session and records its deletion.
	MarkDeleted(ctx context.Context, id string) error
	// UpdateTask changes a task as Tasks.UpdateTask does (see ChangeTask).
	UpdateTask(ctx context.Context, id string, change func(*sa.Task) error) (sa.Task, error)
	// MarkUndelivered: see InboxTx.
	MarkUndelivered(ctx context.Context, taskID, reason string) (int64, error)
	// SessionRow reads a session's parent ("" for a root) and whether it
	// is deleted, hidden or not.
	SessionRow(ctx context.Context, id string) (parentID string, deleted bool, err error)
	// Children counts a session's children and gives their latest fork
	// point.
	Children(ctx context.Context, id string) (n int, lastForkPoint int64, err error)
	// DeleteMessages deletes a session's own messages after a message id.
	DeleteMessages(ctx context.Context, id string, after int64) error
	// DeleteSessionRow deletes a session's row, whose messages are gone.
	DeleteSessionRow(ctx context.Context, id string) error
}

// deleteSession deletes a live session in tx. It is hidden at once (gone
// from listings, unresolvable, unusable as a parent); its tasks leave
// every listing, the active ones ended as cancelled (see
// ClearForDeletedParent); and its rows are reclaimed as far as no
// descendant needs them (see Reclaim).
func deleteSession(ctx context.Context, tx DeleteTx, id string, now time.Time) error {
	if err := tx.LockForDelete(ctx, id); err != nil {
		return err
	}
	tasks, err := tx.UnclearedTasks(ctx, id)
	if err != nil {
		return fmt.Errorf("clear tasks: %w", err)
	}
	if err := tx.MarkDeleted(ctx, id); err != nil {
		return err
	}
	for _, task := range tasks {
		if _, err := tx.UpdateTask(ctx, task, ClearForDeletedParent(now)); err != nil {
			return fmt.Errorf("clear task %s: %w", task, err)
		}
		if _, err := tx.MarkUndelivered(ctx, task, "the task was cancelled first: its parent session was deleted"); err != nil {
			return fmt.Errorf("clear task %s: %w", task, err)
		}
	}
	return Reclaim(ctx, tx, id)
}

// Reclaim frees what deleted sessions no longer need, starting at id and
// going up through deleted ancestors: a deleted session with children
// keeps its messages up to their latest fork point (they inherit no
// more), one without loses its messages and its row, which may free its
// deleted parent in turn. Live sessions keep everything.
func Reclaim(ctx context.Context, tx DeleteTx, id string) error {
	for id != "" {
		parent, deleted, err := tx.SessionRow(ctx, id)
		if err != nil {
			return fmt.Errorf("reclaim %s: %w", id, err)
		}
		if !deleted {
			return nil
		}
		children, lastForkPoint, err := tx.Children(ctx, id)
		if err != nil {
			return fmt.Errorf("reclaim %s: %w", id, err)
		}
		if children > 0 {
			if err := tx.DeleteMessages(ctx, id, lastForkPoint); err != nil {
				return fmt.Errorf("reclaim messages of %s: %w", id, err)
			}
			return nil
		}
		if err := tx.DeleteMessages(ctx, id, 0); err != nil {
			return fmt.Errorf("reclaim messages of %s: %w", id, err)
		}
		if err := tx.DeleteSessionRow(ctx, id); err != nil {
			return fmt.Errorf("reclaim session %s: %w", id, err)
		}
		id = parent
	}
	return nil
}
