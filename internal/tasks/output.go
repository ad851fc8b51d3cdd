package tasks

import (
	"context"

	"errors"
	"time"

	sa "github.com/superagents/superagents"
)

// List returns a parent session's tasks, newest first, optionally only
// those with one status.
func (m *Manager) List(ctx context.Context, parentSessionID string, status sa.TaskStatus) ([]sa.Task, error) {
	status, err := sa.ParseTaskStatus(string(status))
	if err != nil {
		return nil, err
	}
	return m.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: parentSessionID, Status: status})
}

// BlockTimeout is how long a blocking Output waits: the timeout asked
// for, the default when none (0 or less), never more than the maximum.
func BlockTimeout(asked time.Duration) time.Duration {
	return min(cmpDuration(asked, sa.DefaultBlockTimeout), sa.MaxBlockTimeout)
}

// Output returns a task's state: for a completed task its result (and the
// task is marked retrieved), for a running one its progress. With block
// it first waits until the task ends or the timeout (default 60 s, at most
// 600 s) passes.
func (m *Manager) Output(ctx context.Context, ref string, block bool, timeout time.Duration) (sa.TaskOutput, error) {
	t, err := m.store.ResolveTask(ctx, ref)
	if err != nil {
		return sa.TaskOutput{}, err
	}
	var out sa.TaskOutput
	if block && t.Status.Active() {
		start, limit := time.Now(), BlockTimeout(timeout)
		if t, out.TimedOut, out.Told, err = m.waitEnd(ctx, t.ID, limit); err != nil {
			return sa.TaskOutput{}, err
		}
		out.Waited = time.Since(start)
		if out.TimedOut {
			out.Waited = limit // what was asked, not how late a busy machine noticed
		}
	}
	if t.Status == sa.TaskCompleted && t.ResultRetrievedAt == nil {
		retrieved, err := m.store.UpdateTask(ctx, t.ID, func(tk *sa.Task) error {
			if tk.Status != sa.TaskCompleted || tk.ResultRetrievedAt != nil {
				return errTaskEnded // changed meanwhile: nothing to mark
			}
			now := time.Now()
			tk.ResultRetrievedAt = &now
			return nil
		})
		if err == nil {
			t = retrieved
		}
	}
	if t.Status.Active() {
		out.Partial = m.partial(ctx, t.ID)
		out.Question = m.Question(ctx, t.ID)
	}
	out.Task = t
	return out, nil
}

// waitEnd waits until a task is no longer active, or the timeout passes
// (timedOut), or the waiter is to read something at once (told): the
// task asks a question, or the task whose run waits is told something
// (see toldChange).
func (m *Manager) waitEnd(ctx context.Context, id string, timeout time.Duration) (t sa.Task, timedOut, told bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cursor := m.bus.Now() // before reading the task, so no ending is missed
	me := self(ctx)
	if me != "" {
		if n, err := m.store.WaitingTaskMessages(ctx, me); err != nil || n > 0 {
			t, terr := m.store.Task(ctx, id)
			return t, false, n > 0, cmpErr(err, terr)
		}
	}
	for {
		t, err := m.store.Task(ctx, id)
		if err != nil {
			return sa.Task{}, false, false, err
		}
		if !t.Status.Active() {
			return t, false, false, nil
		}
		ch, err := cursor.NextMatching(ctx, func(c sa.Change) bool { return c.TaskID == id || (me != "" && toldChange(c, me)) })
		if errors.Is(err, context.DeadlineExceeded) {
			t, err := m.store.Task(context.WithoutCancel(ctx), id)
			return t, t.Status.Active(), false, err
		}
		if err != nil {
			return sa.Task{}, false, false, err
		}
		// The waited task asks a question: whoever waits is to read it
		// now, not when the question is about to be given up.
		if (me != "" && toldChange(ch, me)) || (ch.Kind == sa.ChangeTaskQuestion && ch.TaskID == id) {
			t, err := m.store.Task(ctx, id)
			return t, false, true, err
		}
	}
}

// cmpErr is the first error that is not nil.
func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Question is the oldest question an active task waits to have answered,
// "" when none (or when it cannot be read: it is shown, not relied on).
func (m *Manager) Question(ctx context.Context, taskID string) string {
	pending, err := m.PendingInputs(ctx, taskID)
	if err != nil || len(pending) == 0 {
		return ""
	}
	return pending[0].Message
}
