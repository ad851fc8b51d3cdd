package taskqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/runner"
)

// A node takes a job, then claims its task: if it dies in between (a few
// milliseconds), the task still waits for the queue while its job stays
// running under the dead node until River rescues it (the run limit
// later). Every working node looks for such jobs and queues their tasks
// again at once; the stale job, if it is ever handed out again, finds its
// task claimed or ended and completes without a run.

// orphanQuery finds the running task_run jobs whose River client (named
// by its runner id) is no longer a registered runner (a reconcile removed
// it: its process is gone) and whose task still waits for the queue.
const orphanQuery = `SELECT j.args FROM river_job j JOIN tasks t ON t.id = j.args->>'task_id'
	WHERE j.kind = 'task_run' AND j.state = 'running' AND t.runner_id = $1 AND t.status IN ('queued', 'resumed')
		AND NOT EXISTS (SELECT 1 FROM runners r WHERE r.id = j.attempted_by[array_upper(j.attempted_by, 1)])`

func (q *Queue) watchOrphans(ctx context.Context) {
	defer close(q.stopped)
	tick := time.NewTicker(q.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		_, _ = q.RequeueOrphans(ctx) // tried again at the next tick
	}
}

// RequeueOrphans queues again the tasks whose job a dead node took
// without claiming them, and returns how many.
func (q *Queue) RequeueOrphans(ctx context.Context) (int, error) {
	rows, err := q.store.Pool().Query(ctx, orphanQuery, runner.Queue)
	if err != nil {
		return 0, fmt.Errorf("find orphaned jobs: %w", err)
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RunArgs, error) {
		var raw []byte
		var a RunArgs
		if err := r.Scan(&raw); err != nil {
			return a, err
		}
		return a, json.Unmarshal(raw, &a)
	})
	if err != nil {
		return 0, fmt.Errorf("find orphaned jobs: %w", err)
	}
	n := 0
	var errs []error
	for _, a := range found {
		queued, err := q.requeue(ctx, a)
		if err != nil {
			errs = append(errs, err)
		} else if queued {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// requeue inserts a new job for an orphaned one, under the task's row
// lock, unless the task no longer waits for that run or has a job waiting
// already (another node requeued it first).
func (q *Queue) requeue(ctx context.Context, a RunArgs) (bool, error) {
	tx, err := q.store.Pool().Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("requeue task %s: %w", a.TaskID, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after commit, a no-op
	var status sa.TaskStatus
	var runnerID string
	var resumes int
	err = tx.QueryRow(ctx, `SELECT status, runner_id, resume_count FROM tasks WHERE id = $1 FOR UPDATE`, a.TaskID).
		Scan(&status, &runnerID, &resumes)
	if err != nil {
		return false, fmt.Errorf("requeue task %s: %w", a.TaskID, err)
	}
	want := sa.TaskQueued
	if a.Resume {
		want = sa.TaskResumed
	}
	if status != want || runnerID != runner.Queue || resumes != a.ResumeCount {
		return false, nil
	}
	var waiting bool
	err = tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM river_job WHERE kind = 'task_run' AND args->>'task_id' = $1
		AND state IN ('available', 'pending', 'scheduled', 'retryable'))`, a.TaskID).Scan(&waiting)
	if err != nil || waiting {
		return false, err
	}
	if err := q.insert(ctx, tx, a); err != nil {
		return false, err
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("requeue task %s: %w", a.TaskID, err)
	}
	return true, nil
}
