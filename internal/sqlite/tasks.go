package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

// taskColumns are the columns scanTask reads.
const taskColumns = storekit.TaskColumns

func scanTask(r rowScanner) (sa.Task, error) {
	return storekit.ScanTask(r.Scan, rawDest)
}

// CreateTask creates a task and its child session (forked from the parent
// or fresh) with the session's first messages, in one transaction (see
// storekit.CreateTask).
func (s *Store) CreateTask(ctx context.Context, nt sa.NewTask) (sa.Task, error) {
	t, err := storekit.CheckNewTask(nt)
	if err != nil {
		return sa.Task{}, err
	}
	err = s.inWrite(ctx, func(tx *writeTx) (err error) {
		t, err = storekit.CreateTask(ctx, tx, nt, t, s.newID(), tx.now)
		return err
	})
	if err != nil {
		return sa.Task{}, fmt.Errorf("create task: %w", err)
	}
	return t, nil
}

// ActiveBatch finds the batch of a session's newest active task. Writes
// are serial: no other launch can start a batch before this one's insert.
func (tx *writeTx) ActiveBatch(ctx context.Context, parentID string) (string, error) {
	var batch string
	err := tx.QueryRowContext(ctx, `SELECT batch_id FROM tasks WHERE parent_session_id = ?
		AND status IN ('queued', 'running', 'resumed') AND batch_id != ''
		ORDER BY created_at DESC, id DESC LIMIT 1`, parentID).Scan(&batch)
	if _, err := storekit.Found(err, sql.ErrNoRows); err != nil {
		return "", err
	}
	return batch, nil
}

// InsertTask writes a new task and records its creation.
func (tx *writeTx) InsertTask(ctx context.Context, t sa.Task) error {
	progress, worktree, err := storekit.EncodeTask(t)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO tasks (`+taskColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.ParentSessionID, t.ParentMessageID, t.ParentAgent, t.Description, t.Prompt, t.Agent, t.Status,
		nanos(t.StartedAt), nullNanos(t.CompletedAt), nullNanos(t.ResultRetrievedAt), t.Result, t.Error, progress,
		t.BatchID, t.ResumeCount, boolInt(t.IsForked), t.Timeout.Duration().Milliseconds(), t.RunnerID, nullNanos(t.ClearedAt),
		nanos(t.CreatedAt), t.Budget.MaxCost, t.Budget.MaxTokens, string(worktree), boolInt(t.MayAsk), t.Launcher)
	if err != nil {
		return fmt.Errorf("insert task: %w", err)
	}
	return tx.record(ctx, sa.ChangeTaskCreated, t.ParentSessionID, t.ID, t)
}

// taskUpdates are the columns of a task that an update may change, each
// with its value.
var taskUpdates = []struct {
	column string
	value  func(t sa.Task) any
}{
	{"parent_message_id", func(t sa.Task) any { return t.ParentMessageID }},
	{"parent_agent", func(t sa.Task) any { return t.ParentAgent }},
	{"description", func(t sa.Task) any { return t.Description }},
	{"prompt", func(t sa.Task) any { return t.Prompt }},
	{"agent", func(t sa.Task) any { return t.Agent }},
	{"status", func(t sa.Task) any { return string(t.Status) }},
	{"started_at", func(t sa.Task) any { return nanos(t.StartedAt) }},
	{"completed_at", func(t sa.Task) any { return nullNanos(t.CompletedAt) }},
	{"result_retrieved_at", func(t sa.Task) any { return nullNanos(t.ResultRetrievedAt) }},
	{"result", func(t sa.Task) any { return t.Result }},
	{"error", func(t sa.Task) any { return t.Error }},
	{"batch_id", func(t sa.Task) any { return t.BatchID }},
	{"resume_count", func(t sa.Task) any { return t.ResumeCount }},
	{"timeout_ms", func(t sa.Task) any { return t.Timeout.Duration().Milliseconds() }},
	{"runner_id", func(t sa.Task) any { return t.RunnerID }},
	{"cleared_at", func(t sa.Task) any { return nullNanos(t.ClearedAt) }},
}

// changedTaskColumns is the SET list (and its values) of the columns
// whose values differ between old and updated, "" when none does. Only
// those are written: SQLite rewrites the entries of every index on a
// column that a SET names, changed or not, and a task has eight (a
// progress update would rewrite its status in four).
func changedTaskColumns(old, updated sa.Task) (string, []any, error) {
	var set strings.Builder
	var args []any
	add := func(column string, value any) {
		if set.Len() > 0 {
			set.WriteString(", ")
		}
		set.WriteString(column + " = ?")
		args = append(args, value)
	}
	for _, u := range taskUpdates {
		if v := u.value(updated); v != u.value(old) {
			add(u.column, v)
		}
	}
	if !reflect.DeepEqual(old.Progress, updated.Progress) {
		progress, err := json.Marshal(updated.Progress)
		if err != nil {
			return "", nil, fmt.Errorf("encode progress: %w", err)
		}
		add("progress", progress)
	}
	if !reflect.DeepEqual(old.Worktree, updated.Worktree) {
		worktree, err := storekit.EncodeWorktree(updated.Worktree)
		if err != nil {
			return "", nil, err
		}
		add("worktree", string(worktree))
	}
	return set.String(), args, nil
}

// Task returns one task by its full id.
func (s *Store) Task(ctx context.Context, id string) (sa.Task, error) {
	return readTask(ctx, s.reader, id)
}

func readTask(ctx context.Context, q querier, id string) (sa.Task, error) {
	t, err := scanTask(q.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, id))
	if err := storekit.ReadError(err, sql.ErrNoRows, "task", id); err != nil {
		return sa.Task{}, err
	}
	return t, nil
}

// ResolveTask finds a task by full id or unique prefix.
func (s *Store) ResolveTask(ctx context.Context, ref string) (sa.Task, error) {
	if t, err := readTask(ctx, s.reader, storekit.ExactID(ref)); !errors.Is(err, sa.ErrNotFound) {
		return t, err
	}
	id, err := resolve(ctx, s.reader, "task", `SELECT id FROM tasks WHERE id >= ? AND id < ? ORDER BY id LIMIT `+limitParam, ref)
	if err != nil {
		return sa.Task{}, err
	}
	return readTask(ctx, s.reader, id)
}

// ListTasks lists tasks, newest first.
func (s *Store) ListTasks(ctx context.Context, f sa.TaskFilter) ([]sa.Task, error) {
	query, args, err := s.TaskListQuery(f, taskColumns)
	if err != nil {
		return nil, err
	}
	rows, err := s.reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	defer rows.Close()
	var out []sa.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, fmt.Errorf("list tasks: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return out, nil
}

// ResolveBatch finds a batch by full id or unique prefix.
func (s *Store) ResolveBatch(ctx context.Context, ref string) (string, error) {
	return resolve(ctx, s.reader, "batch", `SELECT DISTINCT batch_id FROM tasks WHERE batch_id >= ? AND batch_id < ?
		ORDER BY batch_id LIMIT `+limitParam, ref)
}

// UpdateTask applies change to a task inside one write transaction.
func (s *Store) UpdateTask(ctx context.Context, id string, change func(*sa.Task) error) (sa.Task, error) {
	var updated sa.Task
	err := s.inWrite(ctx, func(tx *writeTx) (err error) {
		updated, err = tx.UpdateTask(ctx, id, change)
		return err
	})
	if err != nil {
		return sa.Task{}, fmt.Errorf("update task %s: %w", id, err)
	}
	return updated, nil
}

// ParentLive reports whether a task's parent session is live, in one
// probe (writes are serial: nothing to lock).
func (tx *writeTx) ParentLive(ctx context.Context, taskID string) (bool, error) {
	return exists(ctx, tx, `SELECT 1 FROM tasks t JOIN sessions s ON s.id = t.parent_session_id
		WHERE t.id = ? AND s.deleted_at IS NULL`, taskID)
}

// UpdateTask reads a task, applies change, checks the result (see
// storekit.ChangeTask) and writes back the columns that changed,
// recording the change.
func (tx *writeTx) UpdateTask(ctx context.Context, id string, change func(*sa.Task) error) (sa.Task, error) {
	old, err := readTask(ctx, tx, id)
	if err != nil {
		return sa.Task{}, err
	}
	t, kind, err := storekit.ChangeTask(old, change)
	if err != nil {
		return sa.Task{}, err
	}
	set, args, err := changedTaskColumns(old, t)
	if err != nil {
		return sa.Task{}, err
	}
	if set != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET `+set+` WHERE id = ?`, append(args, id)...); err != nil {
			return sa.Task{}, fmt.Errorf("update task: %w", err)
		}
	}
	if err := tx.record(ctx, kind, t.ParentSessionID, t.ID, t); err != nil {
		return sa.Task{}, err
	}
	return t, nil
}

// BatchCounts reads a batch's counts, kept in task_batches by triggers.
func (tx *writeTx) BatchCounts(ctx context.Context, batchID, parentID string) (total, active int, err error) {
	err = tx.QueryRowContext(ctx, `SELECT total, active FROM task_batches WHERE batch_id = ? AND parent_session_id = ?`,
		batchID, parentID).Scan(&total, &active)
	return total, active, err
}

// CompletedInBatch lists a batch's completed tasks.
func (tx *writeTx) CompletedInBatch(ctx context.Context, batchID, parentID string) ([]string, error) {
	// Through tasks_batch: left to itself, SQLite walks all of the
	// parent's tasks (tasks_parent gives the order).
	rows, err := tx.QueryContext(ctx, `SELECT id FROM tasks INDEXED BY tasks_batch
		WHERE batch_id = ? AND parent_session_id = ? AND status = 'completed' ORDER BY created_at, id`,
		batchID, parentID)
	if err != nil {
		return nil, err
	}
	return collectStrings(rows)
}
