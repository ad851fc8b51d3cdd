package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

// taskColumns are the columns scanTask reads.
const taskColumns = storekit.TaskColumns

func scanTask(r pgx.Row) (sa.Task, error) {
	return storekit.ScanTask(r.Scan, rawDest)
}

// CreateTask creates a task and its child session (forked from the parent
// or fresh) with the session's first messages, in one transaction.
func (s *Store) CreateTask(ctx context.Context, nt sa.NewTask) (sa.Task, error) {
	return s.createTask(ctx, nt, nil)
}

func (s *Store) createTask(ctx context.Context, nt sa.NewTask, hook TaskHook) (sa.Task, error) {
	t, err := storekit.CheckNewTask(nt)
	if err != nil {
		return sa.Task{}, err
	}
	err = s.inWrite(ctx, func(tx *writeTx) (err error) {
		if t, err = storekit.CreateTask(ctx, tx, nt, t, s.newID(), tx.now); err != nil {
			return err
		}
		return runHook(ctx, tx, hook, t)
	})
	if err != nil {
		return sa.Task{}, fmt.Errorf("create task: %w", err)
	}
	return t, nil
}

// ActiveBatch finds the batch of a session's newest active task. Launches
// into one session, on any node, choose their batch one after the other,
// so that two at once cannot both start one: the advisory lock is taken
// first, as every advisory lock is.
func (tx *writeTx) ActiveBatch(ctx context.Context, parentID string) (string, error) {
	key := lockKey("batch", tx.s.schema+"\x00"+parentID)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, key); err != nil {
		return "", fmt.Errorf("lock the batch of session %s: %w", sa.ShortID(parentID), err)
	}
	var batch []byte
	err := tx.QueryRow(ctx, `SELECT batch_id FROM tasks WHERE parent_session_id = $1
		AND status IN ('queued', 'running', 'resumed') AND batch_id <> ''
		ORDER BY created_at DESC, id DESC LIMIT 1`, parentID).Scan(&batch)
	if _, err := storekit.Found(err, pgx.ErrNoRows); err != nil {
		return "", err
	}
	return string(batch), nil
}

// InsertTask writes a new task and records its creation, in one round
// trip.
func (tx *writeTx) InsertTask(ctx context.Context, t sa.Task) error {
	progress, worktree, err := storekit.EncodeTask(t)
	if err != nil {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO tasks (`+taskColumns+`, description_folded, tool_calls)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)`,
		t.ID, t.ParentSessionID, t.ParentMessageID, bin(t.ParentAgent), bin(t.Description), bin(t.Prompt), bin(t.Agent),
		string(t.Status), nanos(t.StartedAt), nullNanos(t.CompletedAt), nullNanos(t.ResultRetrievedAt), bin(t.Result),
		bin(t.Error), string(progress), bin(t.BatchID), t.ResumeCount, t.IsForked, t.Timeout.Duration().Milliseconds(),
		t.RunnerID, nullNanos(t.ClearedAt), nanos(t.CreatedAt), t.Budget.MaxCost, t.Budget.MaxTokens, worktree, t.MayAsk,
		t.Launcher, bin(sa.FoldCase(t.Description)), t.Progress.ToolCalls)
	if err := tx.recordAfter(ctx, b, sa.ChangeTaskCreated, t.ParentSessionID, t.ID, t); err != nil {
		return fmt.Errorf("insert task: %w", err)
	}
	return nil
}

// Task returns one task by its full id.
func (s *Store) Task(ctx context.Context, id string) (sa.Task, error) {
	return readTask(ctx, s.pool, id, false)
}

// readTask reads a task, locking its row for update if lock is set.
func readTask(ctx context.Context, q querier, id string, lock bool) (sa.Task, error) {
	if !storekit.Storable(id) {
		return sa.Task{}, fmt.Errorf("task %s: %w", id, sa.ErrNotFound)
	}
	query := `SELECT ` + taskColumns + ` FROM tasks WHERE id = $1`
	if lock {
		query += ` FOR UPDATE`
	}
	t, err := scanTask(q.QueryRow(ctx, query, id))
	if err := storekit.ReadError(err, pgx.ErrNoRows, "task", id); err != nil {
		return sa.Task{}, err
	}
	return t, nil
}

// ResolveTask finds a task by full id or unique prefix.
func (s *Store) ResolveTask(ctx context.Context, ref string) (sa.Task, error) {
	if t, err := readTask(ctx, s.pool, storekit.ExactID(ref), false); !errors.Is(err, sa.ErrNotFound) {
		return t, err
	}
	id, err := resolve(ctx, s.pool, "task", `SELECT id FROM tasks WHERE id >= $1 AND id < $2 ORDER BY id LIMIT $3`, ref, false)
	if err != nil {
		return sa.Task{}, err
	}
	return readTask(ctx, s.pool, id, false)
}

// ListTasks lists tasks, newest first.
func (s *Store) ListTasks(ctx context.Context, f sa.TaskFilter) ([]sa.Task, error) {
	query, args, err := s.TaskListQuery(f, taskColumns)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sa.Task, error) { return scanTask(r) })
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return out, nil
}

// ResolveBatch finds a batch by full id or unique prefix.
func (s *Store) ResolveBatch(ctx context.Context, ref string) (string, error) {
	return resolve(ctx, s.pool, "batch", `SELECT DISTINCT batch_id FROM tasks WHERE batch_id >= $1 AND batch_id < $2
		ORDER BY batch_id LIMIT $3`, ref, true)
}

// UpdateTask applies change to a task inside one write transaction.
func (s *Store) UpdateTask(ctx context.Context, id string, change func(*sa.Task) error) (sa.Task, error) {
	return s.UpdateTaskTx(ctx, id, change, nil)
}

// ParentLive reports whether a task's parent session is live, locking its
// row for the notification's append. Rows are locked session first, then
// task (as DeleteSession does): the parent is known from the task, whose
// parent never changes.
func (tx *writeTx) ParentLive(ctx context.Context, taskID string) (bool, error) {
	t, err := readTask(ctx, tx, taskID, false)
	if err != nil {
		return false, err
	}
	_, err = liveSession(ctx, tx, t.ParentSessionID, lockAppend)
	return storekit.Found(err, sa.ErrNotFound)
}

// UpdateTask reads a task with its row locked, applies change, checks the
// result (see storekit.ChangeTask) and writes it back, recording the
// change.
func (tx *writeTx) UpdateTask(ctx context.Context, id string, change func(*sa.Task) error) (sa.Task, error) {
	old, err := readTask(ctx, tx, id, true)
	if err != nil {
		return sa.Task{}, err
	}
	t, kind, err := storekit.ChangeTask(old, change)
	if err != nil {
		return sa.Task{}, err
	}
	progress, err := json.Marshal(t.Progress)
	if err != nil {
		return sa.Task{}, fmt.Errorf("encode progress: %w", err)
	}
	worktree, err := storekit.EncodeWorktree(t.Worktree)
	if err != nil {
		return sa.Task{}, err
	}
	b := &pgx.Batch{}
	b.Queue(`UPDATE tasks SET parent_message_id = $1, parent_agent = $2, description = $3, prompt = $4,
		agent = $5, status = $6, started_at = $7, completed_at = $8, result_retrieved_at = $9, result = $10, error = $11,
		progress = $12, batch_id = $13, resume_count = $14, timeout_ms = $15, runner_id = $16, cleared_at = $17,
		description_folded = $18, tool_calls = $19, worktree = $21 WHERE id = $20`,
		t.ParentMessageID, bin(t.ParentAgent), bin(t.Description), bin(t.Prompt), bin(t.Agent), string(t.Status),
		nanos(t.StartedAt), nullNanos(t.CompletedAt), nullNanos(t.ResultRetrievedAt), bin(t.Result), bin(t.Error),
		string(progress), bin(t.BatchID), t.ResumeCount, t.Timeout.Duration().Milliseconds(), t.RunnerID,
		nullNanos(t.ClearedAt), bin(sa.FoldCase(t.Description)), t.Progress.ToolCalls, id, worktree)
	if err := tx.recordAfter(ctx, b, kind, t.ParentSessionID, t.ID, t); err != nil {
		return sa.Task{}, fmt.Errorf("update task: %w", err)
	}
	return t, nil
}

// BatchCounts counts a batch's tasks, and the active ones among them.
func (tx *writeTx) BatchCounts(ctx context.Context, batchID, parentID string) (total, active int, err error) {
	err = tx.QueryRow(ctx, `SELECT COUNT(*), COUNT(*) FILTER (WHERE status IN ('queued', 'running', 'resumed'))
		FROM tasks WHERE batch_id = $1 AND parent_session_id = $2`, bin(batchID), parentID).Scan(&total, &active)
	return total, active, err
}

// CompletedInBatch lists a batch's completed tasks.
func (tx *writeTx) CompletedInBatch(ctx context.Context, batchID, parentID string) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT id FROM tasks WHERE batch_id = $1 AND parent_session_id = $2 AND status = 'completed'
		ORDER BY created_at, id`, bin(batchID), parentID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
