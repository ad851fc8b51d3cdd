package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
)

// TaskHook runs inside the transaction that writes a task, after the
// task's row is written, with the task as written: what it does on tx
// (inserting the job that will run the task) commits together with the
// task, and an error from it rolls both back.
type TaskHook func(ctx context.Context, tx pgx.Tx, t sa.Task) error

// CreateTaskTx is CreateTask with hook run in its transaction.
func (s *Store) CreateTaskTx(ctx context.Context, nt sa.NewTask, hook TaskHook) (sa.Task, error) {
	return s.createTask(ctx, nt, hook)
}

// UpdateTaskTx is UpdateTask with hook run in its transaction.
func (s *Store) UpdateTaskTx(ctx context.Context, id string, change func(*sa.Task) error, hook TaskHook) (sa.Task, error) {
	var updated sa.Task
	err := s.inWrite(ctx, func(tx *writeTx) error {
		var err error
		if updated, err = tx.UpdateTask(ctx, id, change); err != nil {
			return err
		}
		return runHook(ctx, tx, hook, updated)
	})
	if err != nil {
		return sa.Task{}, fmt.Errorf("update task %s: %w", id, err)
	}
	return updated, nil
}

func runHook(ctx context.Context, tx *writeTx, hook TaskHook, t sa.Task) error {
	if hook == nil {
		return nil
	}
	if err := hook(ctx, tx.Tx, t); err != nil {
		return fmt.Errorf("task %s: %w", t.ID, err)
	}
	return nil
}
