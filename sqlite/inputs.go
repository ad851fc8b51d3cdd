package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/storekit"
)

var _ sa.Inputs = (*Store)(nil)

// AskInput stores a request of an active task that may ask.
func (s *Store) AskInput(ctx context.Context, r sa.InputRequest) (sa.InputRequest, error) {
	if err := r.Validate(); err != nil {
		return sa.InputRequest{}, err
	}
	r.Response, r.AnsweredAt = nil, nil
	err := s.inWrite(ctx, func(tx *writeTx) error {
		t, err := readTask(ctx, tx, r.TaskID)
		if err != nil {
			return err
		}
		if err := storekit.CheckAsk(t); err != nil {
			return err
		}
		r.CreatedAt = tx.now
		res, err := tx.ExecContext(ctx, `INSERT INTO task_inputs (task_id, key, message, request, created_at)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT (task_id, key) DO NOTHING`,
			r.TaskID, r.Key, r.Message, string(r.Request), nanos(tx.now))
		if err != nil {
			return fmt.Errorf("insert input request: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
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
	reqs, err := runInputs(ctx, s.reader, taskID)
	if err != nil {
		return nil, fmt.Errorf("read input requests: %w", err)
	}
	return reqs, nil
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

// AnswerInputs stores answers to a task's outstanding requests.
func (s *Store) AnswerInputs(ctx context.Context, taskID string, answers map[string]json.RawMessage) ([]string, error) {
	if err := storekit.ValidAnswers(answers); err != nil {
		return nil, err
	}
	var keys []string
	err := s.inWrite(ctx, func(tx *writeTx) error {
		t, err := readTask(ctx, tx, taskID)
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
			_, err := tx.ExecContext(ctx, `UPDATE task_inputs SET response = ?, answered_at = ? WHERE task_id = ? AND key = ?`,
				string(answers[k]), nanos(tx.now), taskID, k)
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
