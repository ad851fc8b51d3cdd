package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

const taskColumns = `id, parent_session_id, parent_message_id, parent_agent, description, prompt, agent, status,
	started_at, completed_at, result_retrieved_at, result, error, progress, batch_id, resume_count, is_forked,
	timeout_ms, runner_id, cleared_at, created_at, max_cost, max_tokens, worktree, may_ask`

func scanTask(r rowScanner) (sa.Task, error) {
	var (
		t                             sa.Task
		started, created, timeoutMS   int64
		completed, retrieved, cleared sql.NullInt64
		progress, worktree            []byte
		forked, mayAsk                int
	)
	err := r.Scan(&t.ID, &t.ParentSessionID, &t.ParentMessageID, &t.ParentAgent, &t.Description, &t.Prompt, &t.Agent,
		&t.Status, &started, &completed, &retrieved, &t.Result, &t.Error, &progress, &t.BatchID, &t.ResumeCount,
		&forked, &timeoutMS, &t.RunnerID, &cleared, &created, &t.Budget.MaxCost, &t.Budget.MaxTokens, &worktree, &mayAsk)
	if err != nil {
		return sa.Task{}, err
	}
	if t.Worktree, err = storekit.DecodeWorktree(t.ID, worktree); err != nil {
		return sa.Task{}, err
	}
	if err := json.Unmarshal(progress, &t.Progress); err != nil {
		return sa.Task{}, fmt.Errorf("%w: task %s has unreadable progress: %v", sa.ErrCorrupt, t.ID, err)
	}
	t.StartedAt, t.CreatedAt = fromNanos(started), fromNanos(created)
	t.CompletedAt, t.ResultRetrievedAt, t.ClearedAt = fromNullNanos(completed), fromNullNanos(retrieved), fromNullNanos(cleared)
	t.IsForked, t.MayAsk, t.Timeout = forked != 0, mayAsk != 0, sa.Seconds(time.Duration(timeoutMS)*time.Millisecond)
	return t, nil
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
	progress, err := json.Marshal(t.Progress)
	if err != nil {
		return fmt.Errorf("encode progress: %w", err)
	}
	worktree, err := storekit.EncodeWorktree(t.Worktree)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO tasks (`+taskColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.ParentSessionID, t.ParentMessageID, t.ParentAgent, t.Description, t.Prompt, t.Agent, t.Status,
		nanos(t.StartedAt), nullNanos(t.CompletedAt), nullNanos(t.ResultRetrievedAt), t.Result, t.Error, progress,
		t.BatchID, t.ResumeCount, boolInt(t.IsForked), t.Timeout.Duration().Milliseconds(), t.RunnerID, nullNanos(t.ClearedAt),
		nanos(t.CreatedAt), t.Budget.MaxCost, t.Budget.MaxTokens, string(worktree), boolInt(t.MayAsk))
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

// taskWhere turns a filter into a WHERE clause and its arguments.
func taskWhere(f sa.TaskFilter) (string, []any) {
	where := ` WHERE 1 = 1`
	var args []any
	add := func(cond string, arg any) {
		where += ` AND ` + cond
		args = append(args, arg)
	}
	if f.ParentSessionID != "" {
		add(`parent_session_id = ?`, f.ParentSessionID)
	}
	if f.Status != "" {
		add(`status = ?`, f.Status)
	}
	if f.Agent != "" {
		add(`agent = ?`, f.Agent)
	}
	if f.BatchID != "" {
		add(`batch_id = ?`, f.BatchID)
	}
	if f.RunnerID != "" {
		add(`runner_id = ?`, f.RunnerID)
	}
	if f.Search != "" {
		// Not LIKE: it knows the case of ASCII letters only, and takes %
		// and _ for wildcards. The search is folded once, here.
		add(containsFoldFunc+`(description, ?)`, foldCase(f.Search))
	}
	if f.Active {
		where += ` AND status IN ('queued', 'running', 'resumed')`
	}
	if !f.IncludeCleared {
		where += ` AND cleared_at IS NULL`
	}
	return where, args
}

// ListTasks lists tasks, newest first.
func (s *Store) ListTasks(ctx context.Context, f sa.TaskFilter) ([]sa.Task, error) {
	if err := storekit.CheckPage("tasks", f.Offset, f.Limit); err != nil {
		return nil, err
	}
	where, args := taskWhere(f)
	query := `SELECT ` + taskColumns + ` FROM tasks` + where + ` ORDER BY created_at DESC, id DESC`
	if f.Limit > 0 || f.Offset > 0 {
		// SQLite needs a LIMIT before an OFFSET: -1 is no limit.
		query += limitOffset
		args = append(args, cmp.Or(f.Limit, -1), f.Offset)
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

// CountTasks counts the tasks a filter selects.
func (s *Store) CountTasks(ctx context.Context, f sa.TaskFilter) (int, error) {
	where, args := taskWhere(f)
	var n int
	if err := s.reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM tasks`+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count tasks: %w", err)
	}
	return n, nil
}

// TaskStats sums up the tasks a filter selects, in one read transaction.
func (s *Store) TaskStats(ctx context.Context, f sa.TaskFilter) (sa.TaskStats, error) {
	where, args := taskWhere(f)
	stats := sa.TaskStats{ByStatus: map[sa.TaskStatus]int{}, ByAgent: map[string]int{}}
	err := s.inRead(ctx, func(q querier) error {
		groups := []struct {
			column string
			add    func(key string, n int)
		}{
			{"status", func(k string, n int) { stats.ByStatus[sa.TaskStatus(k)] = n; stats.Total += n }},
			{"agent", func(k string, n int) { stats.ByAgent[k] = n }},
		}
		for _, g := range groups {
			rows, err := q.QueryContext(ctx, `SELECT `+g.column+`, COUNT(*) FROM tasks`+where+` GROUP BY `+g.column, args...)
			if err != nil {
				return err
			}
			for rows.Next() {
				var key string
				var n int
				if err := rows.Scan(&key, &n); err != nil {
					rows.Close()
					return err
				}
				g.add(key, n)
			}
			if err := errors.Join(rows.Err(), rows.Close()); err != nil {
				return err
			}
		}
		var avg sql.NullFloat64
		var low, high, calls sql.NullInt64
		err := q.QueryRowContext(ctx, `SELECT COUNT(completed_at), AVG(completed_at - started_at),
			MIN(completed_at - started_at), MAX(completed_at - started_at),
			SUM(COALESCE(json_extract(progress, '$.tool_calls'), 0)) FROM tasks`+where, args...).
			Scan(&stats.Durations.Count, &avg, &low, &high, &calls)
		stats.Durations.Avg = time.Duration(avg.Float64)
		stats.Durations.Min, stats.Durations.Max = time.Duration(low.Int64), time.Duration(high.Int64)
		stats.ToolCalls = int(calls.Int64)
		return err
	})
	if err != nil {
		return sa.TaskStats{}, fmt.Errorf("task stats: %w", err)
	}
	return stats, nil
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
