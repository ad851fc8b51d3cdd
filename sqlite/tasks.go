package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	sa "github.com/superagents/superagents"
)

const taskColumns = `id, parent_session_id, parent_message_id, parent_agent, description, prompt, agent, status,
	started_at, completed_at, result_retrieved_at, result, error, progress, batch_id, resume_count, is_forked,
	timeout_ms, cleared_at, created_at`

func scanTask(r rowScanner) (sa.Task, error) {
	var (
		t                             sa.Task
		started, created, timeoutMS   int64
		completed, retrieved, cleared sql.NullInt64
		progress                      []byte
		forked                        int
	)
	err := r.Scan(&t.ID, &t.ParentSessionID, &t.ParentMessageID, &t.ParentAgent, &t.Description, &t.Prompt, &t.Agent,
		&t.Status, &started, &completed, &retrieved, &t.Result, &t.Error, &progress, &t.BatchID, &t.ResumeCount,
		&forked, &timeoutMS, &cleared, &created)
	if err != nil {
		return sa.Task{}, err
	}
	if err := json.Unmarshal(progress, &t.Progress); err != nil {
		return sa.Task{}, fmt.Errorf("%w: task %s has unreadable progress: %v", sa.ErrCorrupt, t.ID, err)
	}
	t.StartedAt, t.CreatedAt = fromNanos(started), fromNanos(created)
	t.CompletedAt, t.ResultRetrievedAt, t.ClearedAt = fromNullNanos(completed), fromNullNanos(retrieved), fromNullNanos(cleared)
	t.IsForked, t.Timeout = forked != 0, time.Duration(timeoutMS)*time.Millisecond
	return t, nil
}

// CreateTask creates a task and its child session (forked from the parent
// or fresh) with the session's first messages, in one transaction.
func (s *Store) CreateTask(ctx context.Context, nt sa.NewTask) (sa.Task, error) {
	t := nt.Task
	if t.Status == "" {
		t.Status = sa.TaskQueued
	}
	if err := t.Validate(); err != nil {
		return sa.Task{}, err
	}
	if err := validateMessages(nt.Session.Messages); err != nil {
		return sa.Task{}, err
	}
	now := s.now().UTC()
	err := s.inWrite(ctx, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, t.ParentSessionID); err != nil {
			return fmt.Errorf("parent: %w", err)
		}
		last, err := lastMessageID(ctx, tx, t.ParentSessionID)
		if err != nil {
			return err
		}
		var child sa.Session
		if nt.Fork {
			child, err = forkIn(ctx, tx, s.newID(), t.ParentSessionID, sa.ForkOptions{
				Agent: nt.Session.Agent, Model: nt.Session.Model, Title: nt.Session.Title}, now)
			if err != nil {
				return err
			}
		} else {
			child = sa.Session{ID: s.newID(), Agent: nt.Session.Agent, Model: nt.Session.Model, Title: nt.Session.Title, CreatedAt: now}
			if err := insertSession(ctx, tx, child); err != nil {
				return err
			}
		}
		if _, err := insertMessages(ctx, tx, child.ID, nt.Session.Messages, now); err != nil {
			return err
		}
		t.ID, t.ParentMessageID, t.IsForked, t.CreatedAt = child.ID, last, nt.Fork, now
		if t.StartedAt.IsZero() {
			t.StartedAt = now
		}
		return insertTask(ctx, tx, t)
	})
	if err != nil {
		return sa.Task{}, fmt.Errorf("create task: %w", err)
	}
	return normalizeTask(t), nil
}

// normalizeTask gives a task the form it has when read back: UTC times at
// the store's precision.
func normalizeTask(t sa.Task) sa.Task {
	round := func(p *time.Time) *time.Time {
		if p == nil {
			return nil
		}
		v := fromNanos(nanos(*p))
		return &v
	}
	t.StartedAt, t.CreatedAt = fromNanos(nanos(t.StartedAt)), fromNanos(nanos(t.CreatedAt))
	t.CompletedAt, t.ResultRetrievedAt, t.ClearedAt = round(t.CompletedAt), round(t.ResultRetrievedAt), round(t.ClearedAt)
	t.Timeout = t.Timeout.Truncate(time.Millisecond)
	if !t.Progress.LastUpdate.IsZero() {
		t.Progress.LastUpdate = t.Progress.LastUpdate.UTC()
	}
	return t
}

func insertTask(ctx context.Context, tx *sql.Tx, t sa.Task) error {
	progress, err := json.Marshal(t.Progress)
	if err != nil {
		return fmt.Errorf("encode progress: %w", err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO tasks (`+taskColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.ParentSessionID, t.ParentMessageID, t.ParentAgent, t.Description, t.Prompt, t.Agent, t.Status,
		nanos(t.StartedAt), nullNanos(t.CompletedAt), nullNanos(t.ResultRetrievedAt), t.Result, t.Error, progress,
		t.BatchID, t.ResumeCount, boolInt(t.IsForked), t.Timeout.Milliseconds(), nullNanos(t.ClearedAt), nanos(t.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert task: %w", err)
	}
	return nil
}

// Task returns one task by its full id.
func (s *Store) Task(ctx context.Context, id string) (sa.Task, error) {
	return readTask(ctx, s.read, id)
}

func readTask(ctx context.Context, q querier, id string) (sa.Task, error) {
	t, err := scanTask(q.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return sa.Task{}, fmt.Errorf("task %s: %w", id, sa.ErrNotFound)
	}
	if err != nil {
		return sa.Task{}, fmt.Errorf("read task %s: %w", id, err)
	}
	return t, nil
}

// ResolveTask finds a task by full id or unique prefix.
func (s *Store) ResolveTask(ctx context.Context, ref string) (sa.Task, error) {
	id, err := resolve(ctx, s.read, "task", `SELECT id FROM tasks WHERE id >= ? AND id < ? ORDER BY id LIMIT ?`, ref)
	if err != nil {
		return sa.Task{}, err
	}
	return readTask(ctx, s.read, id)
}

// ListTasks lists tasks, newest first.
func (s *Store) ListTasks(ctx context.Context, f sa.TaskFilter) ([]sa.Task, error) {
	query := `SELECT ` + taskColumns + ` FROM tasks WHERE 1 = 1`
	var args []any
	add := func(cond string, arg any) {
		query += ` AND ` + cond
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
	if !f.IncludeCleared {
		query += ` AND cleared_at IS NULL`
	}
	query += ` ORDER BY created_at DESC, id DESC`
	if f.Limit > 0 {
		query += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := s.read.QueryContext(ctx, query, args...)
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

// UpdateTask applies change to a task inside one write transaction. The
// id, parent, creation time and fork flag are fixed; a status change must
// be one TaskStatus.CanBecome allows.
func (s *Store) UpdateTask(ctx context.Context, id string, change func(*sa.Task) error) (sa.Task, error) {
	var updated sa.Task
	err := s.inWrite(ctx, func(tx *sql.Tx) error {
		old, err := readTask(ctx, tx, id)
		if err != nil {
			return err
		}
		t := old
		t.Progress.ByName = maps.Clone(old.Progress.ByName)
		t.Progress.LastTools = slices.Clone(old.Progress.LastTools)
		if err := change(&t); err != nil {
			return err
		}
		if t.ID != old.ID || t.ParentSessionID != old.ParentSessionID || t.IsForked != old.IsForked || !t.CreatedAt.Equal(old.CreatedAt) {
			return fmt.Errorf("%w: a task's id, parent, fork flag and creation time cannot change", sa.ErrInvalid)
		}
		if !old.Status.CanBecome(t.Status) {
			return fmt.Errorf("%w: task %s cannot go from %s to %s", sa.ErrConflict, id, old.Status, t.Status)
		}
		if err := t.Validate(); err != nil {
			return err
		}
		progress, err := json.Marshal(t.Progress)
		if err != nil {
			return fmt.Errorf("encode progress: %w", err)
		}
		_, err = tx.ExecContext(ctx, `UPDATE tasks SET parent_message_id = ?, parent_agent = ?, description = ?, prompt = ?,
			agent = ?, status = ?, started_at = ?, completed_at = ?, result_retrieved_at = ?, result = ?, error = ?,
			progress = ?, batch_id = ?, resume_count = ?, timeout_ms = ?, cleared_at = ? WHERE id = ?`,
			t.ParentMessageID, t.ParentAgent, t.Description, t.Prompt, t.Agent, t.Status, nanos(t.StartedAt),
			nullNanos(t.CompletedAt), nullNanos(t.ResultRetrievedAt), t.Result, t.Error, progress, t.BatchID,
			t.ResumeCount, t.Timeout.Milliseconds(), nullNanos(t.ClearedAt), id)
		if err != nil {
			return fmt.Errorf("update task: %w", err)
		}
		updated = t
		return nil
	})
	if err != nil {
		return sa.Task{}, fmt.Errorf("update task %s: %w", id, err)
	}
	return normalizeTask(updated), nil
}
