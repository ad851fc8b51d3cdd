package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

var _ sa.Inputs = (*Store)(nil)

// InputRequests returns the requests of a task's current run.
func (s *Store) InputRequests(ctx context.Context, taskID string) ([]sa.InputRequest, error) {
	return storekit.InputRequests(ctx, func(ctx context.Context, id string) ([]sa.InputRequest, error) {
		return runInputs(ctx, s.reader, id)
	}, taskID)
}

// LockTask reads a task (writes are serial: nothing to lock).
func (tx *writeTx) LockTask(ctx context.Context, id string) (sa.Task, error) {
	return readTask(ctx, tx, id)
}

// InsertInput stores a request, unless its task asked its key already.
func (tx *writeTx) InsertInput(ctx context.Context, r sa.InputRequest) (bool, error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO task_inputs (task_id, key, message, request, created_at)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT (task_id, key) DO NOTHING`,
		r.TaskID, r.Key, r.Message, string(r.Request), nanos(r.CreatedAt))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// RunInputs reads the requests of a task's current run.
func (tx *writeTx) RunInputs(ctx context.Context, taskID string) ([]sa.InputRequest, error) {
	return runInputs(ctx, tx, taskID)
}

// StoreAnswer writes the answer to one request.
func (tx *writeTx) StoreAnswer(ctx context.Context, taskID, key string, answer json.RawMessage) error {
	_, err := tx.ExecContext(ctx, `UPDATE task_inputs SET response = ?, answered_at = ? WHERE task_id = ? AND key = ?`,
		string(answer), nanos(tx.now), taskID, key)
	return err
}

// RecordTaskUpdated records a change of a task.
func (tx *writeTx) RecordTaskUpdated(ctx context.Context, t sa.Task) error {
	return tx.record(ctx, sa.ChangeTaskUpdated, t.ParentSessionID, t.ID, t)
}

// runInputs reads the requests of a task's current run, oldest first:
// none unless the task is active.
func runInputs(ctx context.Context, q querier, taskID string) ([]sa.InputRequest, error) {
	rows, err := q.QueryContext(ctx, `SELECT i.task_id, i.key, i.message, i.request, i.response, i.created_at, i.answered_at
		FROM task_inputs i JOIN tasks t ON t.id = i.task_id
		WHERE i.task_id = ? AND t.status IN (?, ?, ?) AND i.created_at >= t.started_at
		ORDER BY i.created_at, i.key`, taskID, sa.TaskQueued, sa.TaskRunning, sa.TaskResumed)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sa.InputRequest
	for rows.Next() {
		var (
			r        sa.InputRequest
			request  string
			response sql.NullString
			created  int64
			answered sql.NullInt64
		)
		if err := rows.Scan(&r.TaskID, &r.Key, &r.Message, &request, &response, &created, &answered); err != nil {
			return nil, err
		}
		r.Request = json.RawMessage(request)
		if response.Valid {
			r.Response = json.RawMessage(response.String)
		}
		r.CreatedAt, r.AnsweredAt = fromNanos(created), fromNullNanos(answered)
		out = append(out, r)
	}
	return out, rows.Err()
}
