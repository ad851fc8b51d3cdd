package postgres

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

var _ sa.Inputs = (*Store)(nil)

// InputRequests returns the requests of a task's current run.
func (s *Store) InputRequests(ctx context.Context, taskID string) ([]sa.InputRequest, error) {
	return storekit.InputRequests(ctx, func(ctx context.Context, id string) ([]sa.InputRequest, error) {
		return runInputs(ctx, s.pool, id)
	}, taskID)
}

// LockTask reads a task, locking its row.
func (tx *writeTx) LockTask(ctx context.Context, id string) (sa.Task, error) {
	return readTask(ctx, tx, id, true)
}

// InsertInput stores a request, unless its task asked its key already.
func (tx *writeTx) InsertInput(ctx context.Context, r sa.InputRequest) (bool, error) {
	tag, err := tx.Exec(ctx, `INSERT INTO task_inputs (task_id, key, message, request, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (task_id, key) DO NOTHING`,
		r.TaskID, []byte(r.Key), []byte(r.Message), []byte(r.Request), nanos(r.CreatedAt))
	return err == nil && tag.RowsAffected() > 0, err
}

// RunInputs reads the requests of a task's current run.
func (tx *writeTx) RunInputs(ctx context.Context, taskID string) ([]sa.InputRequest, error) {
	return runInputs(ctx, tx, taskID)
}

// StoreAnswer writes the answer to one request.
func (tx *writeTx) StoreAnswer(ctx context.Context, taskID, key string, answer json.RawMessage) error {
	_, err := tx.Exec(ctx, `UPDATE task_inputs SET response = $1, answered_at = $2 WHERE task_id = $3 AND key = $4`,
		[]byte(answer), nanos(tx.now), taskID, []byte(key))
	return err
}

// RecordTaskUpdated records a change of a task.
func (tx *writeTx) RecordTaskUpdated(ctx context.Context, t sa.Task) error {
	return tx.record(ctx, sa.ChangeTaskUpdated, t.ParentSessionID, t.ID, t)
}

// runInputs reads the requests of a task's current run, oldest first:
// none unless the task is active.
func runInputs(ctx context.Context, q querier, taskID string) ([]sa.InputRequest, error) {
	rows, err := q.Query(ctx, `SELECT i.task_id, i.key, i.message, i.request, i.response, i.created_at, i.answered_at
		FROM task_inputs i JOIN tasks t ON t.id = i.task_id
		WHERE i.task_id = $1 AND t.status IN ($2, $3, $4) AND i.created_at >= t.started_at
		ORDER BY i.created_at, i.key`, taskID, string(sa.TaskQueued), string(sa.TaskRunning), string(sa.TaskResumed))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (sa.InputRequest, error) {
		var (
			r                          sa.InputRequest
			key, message, request, res []byte
			created                    int64
			answered                   *int64
		)
		if err := row.Scan(&r.TaskID, &key, &message, &request, &res, &created, &answered); err != nil {
			return sa.InputRequest{}, err
		}
		r.Key, r.Message, r.Request = string(key), string(message), json.RawMessage(request)
		if res != nil {
			r.Response = json.RawMessage(res)
		}
		r.CreatedAt, r.AnsweredAt = fromNanos(created), fromNullNanos(answered)
		return r, nil
	})
}
