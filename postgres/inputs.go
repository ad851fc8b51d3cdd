package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

var _ sa.Inputs = (*Store)(nil)

// AskInput stores a request of an active task that may ask. The task's
// row is locked, so that its ending, on any node, comes before or after.
func (s *Store) AskInput(ctx context.Context, r sa.InputRequest) (sa.InputRequest, error) {
	if err := r.Validate(); err != nil {
		return sa.InputRequest{}, err
	}
	if !storekit.Storable(r.TaskID) {
		return sa.InputRequest{}, fmt.Errorf("ask for input: task %s: %w", r.TaskID, sa.ErrNotFound)
	}
	r.Response, r.AnsweredAt = nil, nil
	err := s.inWrite(ctx, func(tx *writeTx) error {
		t, err := readTask(ctx, tx, r.TaskID, true)
		if err != nil {
			return err
		}
		if err := storekit.CheckAsk(t); err != nil {
			return err
		}
		r.CreatedAt = tx.now
		tag, err := tx.Exec(ctx, `INSERT INTO task_inputs (task_id, key, message, request, created_at)
			VALUES ($1, $2, $3, $4, $5) ON CONFLICT (task_id, key) DO NOTHING`,
			r.TaskID, []byte(r.Key), []byte(r.Message), []byte(r.Request), nanos(tx.now))
		if err != nil {
			return fmt.Errorf("insert input request: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w: task %s asked %q already", sa.ErrConflict, sa.ShortID(r.TaskID), r.Key)
		}
		return tx.record(ctx, sa.ChangeTaskUpdated, t.ParentSessionID, t.ID, t)
	})
	if err != nil {
		return sa.InputRequest{}, fmt.Errorf("ask for input: %w", err)
	}
	return r, nil
}

// InputRequests returns the requests of a task's current run.
func (s *Store) InputRequests(ctx context.Context, taskID string) ([]sa.InputRequest, error) {
	if !storekit.Storable(taskID) {
		return nil, nil
	}
	reqs, err := runInputs(ctx, s.pool, taskID)
	if err != nil {
		return nil, fmt.Errorf("read input requests: %w", err)
	}
	return reqs, nil
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

// AnswerInputs stores answers to a task's outstanding requests, with the
// task's row locked: two nodes answering at once answer each request
// once.
func (s *Store) AnswerInputs(ctx context.Context, taskID string, answers map[string]json.RawMessage) ([]string, error) {
	if err := storekit.ValidAnswers(answers); err != nil {
		return nil, err
	}
	if !storekit.Storable(taskID) {
		return nil, fmt.Errorf("answer task %s: %w", taskID, sa.ErrNotFound)
	}
	var keys []string
	err := s.inWrite(ctx, func(tx *writeTx) error {
		t, err := readTask(ctx, tx, taskID, true)
		if err != nil {
			return err
		}
		if err := storekit.CheckAnswer(t); err != nil {
			return err
		}
		reqs, err := runInputs(ctx, tx, taskID)
		if err != nil {
			return fmt.Errorf("read input requests: %w", err)
		}
		if keys = storekit.Outstanding(reqs, answers); len(keys) == 0 {
			return nil
		}
		for _, k := range keys {
			_, err := tx.Exec(ctx, `UPDATE task_inputs SET response = $1, answered_at = $2 WHERE task_id = $3 AND key = $4`,
				[]byte(answers[k]), nanos(tx.now), taskID, []byte(k))
			if err != nil {
				return fmt.Errorf("store answer: %w", err)
			}
		}
		return tx.record(ctx, sa.ChangeTaskUpdated, t.ParentSessionID, t.ID, t)
	})
	if err != nil {
		return nil, fmt.Errorf("answer task %s: %w", sa.ShortID(taskID), err)
	}
	return keys, nil
}
