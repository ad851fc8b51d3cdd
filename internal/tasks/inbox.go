package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sa "github.com/superagents/superagents"
)

// Send tells an active task something while it works: the answer to the
// question it waits on, if it asks one, else a message that enters its
// session before its next model request (wherever it runs: delivery goes
// through the store). from says who sends it, in words its model reads.
// A task that has ended is refused with what can be done instead.
func (m *Manager) Send(ctx context.Context, ref, from, text string) (sa.SendResult, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return sa.SendResult{}, fmt.Errorf("%w: message is empty: say what the task should know", sa.ErrInvalid)
	}
	t, err := m.store.ResolveTask(ctx, ref)
	if err != nil {
		return sa.SendResult{}, err
	}
	if t.ClearedAt != nil {
		return sa.SendResult{}, fmt.Errorf("%w: task %s (%q) was cleared: nothing can be sent to it", sa.ErrExpired, sa.ShortID(t.ID), t.Description)
	}
	if !t.Status.Active() {
		return sa.SendResult{}, endedRefusal(t)
	}
	if sent, ok, err := m.answer(ctx, t, text); ok || err != nil {
		return sent, err
	}
	msg, err := m.store.SendTaskMessage(ctx, sa.TaskMessage{TaskID: t.ID, From: from, Text: text})
	var ended *sa.TaskEndedError
	if errors.As(err, &ended) {
		t.Status = ended.Status
		return sa.SendResult{}, endedRefusal(t)
	}
	if err != nil {
		return sa.SendResult{}, err
	}
	return sa.SendResult{Task: t, Message: &msg}, nil
}

// endedRefusal says why nothing can be sent to a task that ended, and
// what can be done instead: only a completed task is resumed.
func endedRefusal(t sa.Task) error {
	id := sa.ShortID(t.ID)
	switch t.Status {
	case sa.TaskCompleted:
		return fmt.Errorf("%w: task %s (%q) has ended (completed): resume it to send a follow-up (superagents_task with resume %q)",
			sa.ErrConflict, id, t.Description, t.ID)
	case sa.TaskCancelled:
		return fmt.Errorf("%w: task %s (%q) was cancelled: nothing can be sent to it; launch a new task instead", sa.ErrConflict, id, t.Description)
	}
	return fmt.Errorf("%w: task %s (%q) failed: nothing can be sent to it, and a failed task is not resumed; launch a new task instead",
		sa.ErrConflict, id, t.Description)
}

// answer answers the oldest question the task waits on with text,
// reporting false when it waits on none (or another answer came first:
// then text is a message).
func (m *Manager) answer(ctx context.Context, t sa.Task, text string) (sa.SendResult, bool, error) {
	pending, err := m.PendingInputs(ctx, t.ID)
	if err != nil || len(pending) == 0 {
		return sa.SendResult{}, false, err
	}
	q := pending[0]
	raw, said, err := formAnswer(q, text)
	if err != nil {
		return sa.SendResult{}, false, err
	}
	keys, err := m.store.AnswerInputs(ctx, t.ID, map[string]json.RawMessage{q.Key: raw})
	if err != nil || len(keys) == 0 {
		return sa.SendResult{}, false, err
	}
	return sa.SendResult{Task: t, Answered: &q, Answer: said}, true, nil
}

// formAnswer turns a text into the answer a question's form takes (see
// sa.Form.Read), as the stored answer and how it reads.
func formAnswer(q sa.InputRequest, text string) (json.RawMessage, string, error) {
	form, err := q.Form()
	if err != nil {
		return nil, "", err
	}
	value, err := form.Read(text)
	if err != nil {
		return nil, "", fmt.Errorf("%w: the task asks %q: answer %s", sa.ErrInvalid, q.Message, form.Takes())
	}
	raw, err := json.Marshal(map[string]any{"action": "accept", "content": map[string]any{form.Field: value}})
	return raw, fmt.Sprint(value), err
}

// steering is how a message sent to a task reads in its session.
func steering(m sa.TaskMessage) sa.Message {
	return sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(fmt.Sprintf(
		"[Message from %s, sent while you work. It does not stop what you are doing: take it into account from here on.]\n\n%s", m.From, m.Text))}}
}

// inbox is a run's Inbox (engine.TurnOptions.Inbox): a read before each
// model request, and the delivery, one transaction, only when a message
// waits.
func (m *Manager) inbox(taskID string) func(ctx context.Context) ([]sa.Message, error) {
	return func(ctx context.Context) ([]sa.Message, error) {
		n, err := m.store.WaitingTaskMessages(ctx, taskID)
		if err != nil || n == 0 {
			return nil, err
		}
		return m.store.DeliverTaskMessages(ctx, taskID, steering)
	}
}

// Messages returns what was sent to a task, oldest first.
func (m *Manager) Messages(ctx context.Context, taskID string) ([]sa.TaskMessage, error) {
	return m.store.TaskMessages(ctx, taskID)
}

type selfKey struct{}

// withSelf marks ctx as that of a task's run: the blocking waits its
// tools make return when the task is told something (toldChange).
func withSelf(ctx context.Context, taskID string) context.Context {
	return context.WithValue(ctx, selfKey{}, taskID)
}

// self is the task whose run ctx is, "" for none.
func self(ctx context.Context) string {
	id, _ := ctx.Value(selfKey{}).(string)
	return id
}
