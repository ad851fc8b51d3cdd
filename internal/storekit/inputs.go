package storekit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	sa "github.com/superagents/superagents"
)

// CheckAsk refuses a request of a task that has ended.
func CheckAsk(t sa.Task) error {
	if !t.Status.Active() {
		return fmt.Errorf("%w: task %s has ended (%s): it can ask nothing", sa.ErrConflict, sa.ShortID(t.ID), t.Status)
	}
	return nil
}

// CheckAnswer refuses answers to a task that has ended.
func CheckAnswer(t sa.Task) error {
	if !t.Status.Active() {
		return &sa.TaskEndedError{TaskID: t.ID, Status: t.Status}
	}
	return nil
}

// ValidAnswers refuses answers that are not JSON, before anything is read.
func ValidAnswers(answers map[string]json.RawMessage) error {
	for k, v := range answers {
		if !json.Valid(v) {
			return fmt.Errorf("%w: the answer to %q is not JSON", sa.ErrInvalid, k)
		}
	}
	return nil
}

// Outstanding picks, among a run's requests, those answers names that
// still await one: the keys to answer, in the requests' order.
func Outstanding(requests []sa.InputRequest, answers map[string]json.RawMessage) []string {
	var keys []string
	for _, r := range requests {
		if _, ok := answers[r.Key]; ok && r.Pending() {
			keys = append(keys, r.Key)
		}
	}
	return keys
}

// InputTx is what a store's write transaction offers AskInput and
// AnswerInputs, each in the store's SQL.
type InputTx interface {
	Clock
	// LockTask reads a task, holding its row where the store locks rows,
	// so that its ending, on any process, comes before or after.
	LockTask(ctx context.Context, id string) (sa.Task, error)
	// InsertInput stores a request of the task's run number run (its
	// resume count), reporting false when its task asked its key already.
	InsertInput(ctx context.Context, r sa.InputRequest, run int) (bool, error)
	// RunInputs reads the requests of a task's current run (see
	// InputRequests).
	RunInputs(ctx context.Context, taskID string) ([]sa.InputRequest, error)
	// StoreAnswer writes the answer to one request, answered at now
	// (nanoseconds).
	StoreAnswer(ctx context.Context, taskID, key string, answer json.RawMessage, now int64) error
	// RecordTaskUpdated records a change of task t in the log.
	RecordTaskUpdated(ctx context.Context, t sa.Task) error
	// RecordTaskChange: see InboxTx.
	RecordTaskChange(ctx context.Context, kind sa.ChangeKind, t sa.Task, data any) error
	// ParentLive and InsertMessages: see FinishTx.
	ParentLive(ctx context.Context, taskID string) (bool, error)
	InsertMessages(ctx context.Context, sessionID, taskID string, msgs []sa.Message) ([]sa.Message, error)
}

// AskInput stores a request of an active task, with notice's message in
// its parent session. A task id no store can hold names no task.
func (o Ops[T]) AskInput(ctx context.Context, r sa.InputRequest, notice func(sa.Task) sa.Message) (sa.InputRequest, error) {
	if err := r.Validate(); err != nil {
		return sa.InputRequest{}, err
	}
	if !Storable(r.TaskID) {
		return sa.InputRequest{}, fmt.Errorf("ask for input: task %s: %w", r.TaskID, sa.ErrNotFound)
	}
	r.Response, r.AnsweredAt = nil, nil
	err := o.write(ctx, func(tx T) error {
		live, err := tx.ParentLive(ctx, r.TaskID)
		if err != nil {
			return err
		}
		t, err := tx.LockTask(ctx, r.TaskID)
		if err != nil {
			return err
		}
		if err := CheckAsk(t); err != nil {
			return err
		}
		r.CreatedAt = tx.Now()
		added, err := tx.InsertInput(ctx, r, t.ResumeCount)
		if err != nil {
			return fmt.Errorf("insert input request: %w", err)
		}
		if !added {
			return fmt.Errorf("%w: task %s asked %q already", sa.ErrConflict, sa.ShortID(r.TaskID), r.Key)
		}
		if err := tx.RecordTaskUpdated(ctx, t); err != nil {
			return err
		}
		if err := tx.RecordTaskChange(ctx, sa.ChangeTaskQuestion, t, r); err != nil {
			return err
		}
		if notice == nil || !live {
			return nil
		}
		msg := notice(t)
		if err := msg.Validate(); err != nil {
			return fmt.Errorf("notice: %w", err)
		}
		_, err = tx.InsertMessages(ctx, t.ParentSessionID, t.ID, []sa.Message{msg})
		return err
	})
	if err != nil {
		return sa.InputRequest{}, fmt.Errorf("ask for input: %w", err)
	}
	return r, nil
}

// InputRequests returns the requests of a task's current run, read by
// read; a task id no store can hold has none.
func InputRequests(ctx context.Context, read func(ctx context.Context, taskID string) ([]sa.InputRequest, error), taskID string) ([]sa.InputRequest, error) {
	if !Storable(taskID) {
		return nil, nil
	}
	reqs, err := read(ctx, taskID)
	if err != nil {
		return nil, fmt.Errorf("read input requests: %w", err)
	}
	return reqs, nil
}

// AnswerInputs stores answers to a task's outstanding requests, with the
// task held: two processes answering at once answer each request once.
// It returns the keys answered.
func (o Ops[T]) AnswerInputs(ctx context.Context, taskID string, answers map[string]json.RawMessage) ([]string, error) {
	if err := ValidAnswers(answers); err != nil {
		return nil, err
	}
	if !Storable(taskID) {
		return nil, fmt.Errorf("answer task %s: %w", taskID, sa.ErrNotFound)
	}
	var keys []string
	err := o.write(ctx, func(tx T) error {
		t, err := tx.LockTask(ctx, taskID)
		if err != nil {
			return err
		}
		if err := CheckAnswer(t); err != nil {
			return err
		}
		reqs, err := tx.RunInputs(ctx, taskID)
		if err != nil {
			return fmt.Errorf("read input requests: %w", err)
		}
		if keys = Outstanding(reqs, answers); len(keys) == 0 {
			return nil
		}
		now := tx.Now()
		for _, k := range keys {
			if err := tx.StoreAnswer(ctx, taskID, k, answers[k], now.UnixNano()); err != nil {
				return fmt.Errorf("store answer: %w", err)
			}
		}
		if err := tx.RecordTaskUpdated(ctx, t); err != nil {
			return err
		}
		for _, r := range reqs {
			if slices.Contains(keys, r.Key) {
				r.Response, r.AnsweredAt = answers[r.Key], &now
				if err := tx.RecordTaskChange(ctx, sa.ChangeTaskAnswer, t, r); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("answer task %s: %w", sa.ShortID(taskID), err)
	}
	return keys, nil
}

// RunInputs reads the requests of a task's current run.
func (tx SharedTx) RunInputs(ctx context.Context, taskID string) ([]sa.InputRequest, error) {
	return runInputs(ctx, tx.c, taskID)
}

// InputRequests returns the requests of a task's current run.
func (s SharedReads) InputRequests(ctx context.Context, taskID string) ([]sa.InputRequest, error) {
	return InputRequests(ctx, func(ctx context.Context, id string) ([]sa.InputRequest, error) {
		return runInputs(ctx, s.db, id)
	}, taskID)
}

// runInputs reads the requests of a task's current run, oldest first:
// none unless the task is active.
func runInputs(ctx context.Context, r Reader, taskID string) ([]sa.InputRequest, error) {
	var (
		out               []sa.InputRequest
		in                sa.InputRequest
		request, response string
		created           int64
		answered          *int64
	)
	// An answer is JSON, never empty: empty is none.
	err := r.EachShared(ctx, `SELECT i.task_id, i.key, i.message, i.request, COALESCE(i.response, ''), i.created_at, i.answered_at
		FROM task_inputs i JOIN tasks t ON t.id = i.task_id
		WHERE i.task_id = $1 AND t.status IN ($2, $3, $4) AND i.task_run = t.resume_count
		ORDER BY i.created_at, i.key`, []any{taskID, string(sa.TaskQueued), string(sa.TaskRunning), string(sa.TaskResumed)},
		[]any{&in.TaskID, r.RawDest(&in.Key), r.RawDest(&in.Message), r.RawDest(&request), r.RawDest(&response), &created, &answered},
		func() error {
			in.Request, in.Response = json.RawMessage(request), nil
			if response != "" {
				in.Response = json.RawMessage(response)
			}
			in.CreatedAt, in.AnsweredAt = time.Unix(0, created).UTC(), nanosTime(answered)
			out = append(out, in)
			return nil
		})
	return out, err
}
