package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tools"
)

type userInputKey struct{}

// WithUserInput marks ctx as that of a launch whose launcher can answer
// the task's questions (an MCP client that declared the Tasks
// extension): the task launched in it may ask (sa.Task.MayAsk).
func WithUserInput(ctx context.Context) context.Context {
	return context.WithValue(ctx, userInputKey{}, true)
}

// userInput reports whether a launch's launcher can answer.
func userInput(ctx context.Context) bool {
	ok, _ := ctx.Value(userInputKey{}).(bool)
	return ok
}

// withAsker gives the run's tools a way to ask whoever launched the
// task: every task may ask. Its launcher answers through the Tasks
// extension (Task.MayAsk: the request is reported as input_required), or
// else reads the question as a notice in its conversation and answers
// with a message (Send). Waiting for the answer holds a tool call open,
// so the inactivity clock stops meanwhile; the task's time limit keeps
// running, and a question nobody answers within tasks.ask_timeout gets
// no answer.
func (m *Manager) withAsker(ctx context.Context, r *run) context.Context {
	return tools.WithAsker(ctx, &taskAsker{m: m, task: r.task})
}

// taskAsker asks through the store: the request is stored with the task,
// whichever node reports the task shows it, whichever node receives the
// answer stores it, and the change log wakes the run here.
type taskAsker struct {
	m    *Manager
	task sa.Task
}

// elicitation is a request as MCP's input requests carry it.
type elicitation struct {
	Method string            `json:"method"`
	Params elicitationParams `json:"params"`
}

type elicitationParams struct {
	Mode            string         `json:"mode"`
	Message         string         `json:"message"`
	RequestedSchema map[string]any `json:"requestedSchema"`
}

// ElicitMethod is the method of the requests tasks store.
const ElicitMethod = "elicitation/create"

// noAnswer is the answer stored for a question nobody answered in time.
var noAnswer = json.RawMessage(`{"action":"` + tools.ActionNoAnswer + `"}`)

func (a *taskAsker) Ask(ctx context.Context, q tools.Question) (tools.Answer, error) {
	raw, err := json.Marshal(elicitation{Method: ElicitMethod, Params: elicitationParams{Mode: "form", Message: q.Message, RequestedSchema: q.Schema}})
	if err != nil {
		return tools.Answer{}, fmt.Errorf("encode the question: %w", err)
	}
	key := sa.NewID()
	cursor := a.m.bus.Now() // before asking, so that no answer is missed
	req := sa.InputRequest{TaskID: a.task.ID, Key: key, Message: q.Message, Request: raw}
	var notice func(sa.Task) sa.Message
	if !a.task.MayAsk {
		form, err := req.Form()
		if err != nil {
			return tools.Answer{}, err
		}
		limit := a.m.limits.AskTimeout.Duration
		notice = func(t sa.Task) sa.Message { return questionNotice(t, q.Message, form, limit) }
	}
	if _, err := a.m.store.AskInput(ctx, req, notice); err != nil {
		return tools.Answer{}, err
	}
	wait, stop := context.WithTimeout(ctx, a.m.limits.AskTimeout.Duration)
	defer stop()
	for {
		reqs, err := a.m.store.InputRequests(ctx, a.task.ID)
		if err != nil {
			return tools.Answer{}, err
		}
		i := indexOf(reqs, key)
		if i < 0 {
			return tools.Answer{}, fmt.Errorf("the question is no longer asked: task %s has ended", sa.ShortID(a.task.ID))
		}
		if !reqs[i].Pending() {
			return readAnswer(reqs[i])
		}
		_, err = cursor.NextMatching(wait, func(c sa.Change) bool { return c.TaskID == a.task.ID })
		if err != nil && ctx.Err() == nil && wait.Err() != nil {
			// Nobody answered in time: the question is given up (an
			// answer that came first wins).
			if _, err := a.m.store.AnswerInputs(ctx, a.task.ID, map[string]json.RawMessage{key: noAnswer}); err != nil {
				return tools.Answer{}, err
			}
			wait, stop = context.WithCancel(ctx)
			defer stop()
			continue
		}
		if err != nil {
			return tools.Answer{}, err
		}
	}
}

// readAnswer reads a stored answer.
func readAnswer(r sa.InputRequest) (tools.Answer, error) {
	var wire struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(r.Response, &wire); err != nil {
		return tools.Answer{}, fmt.Errorf("the answer cannot be read: %w", err)
	}
	return tools.Answer{Action: wire.Action, Content: wire.Content}, nil
}

// questionNotice is the notice a task's question leaves in its parent's
// conversation, for a launcher that answers with a message: a visible
// line for people and a hint for the model.
func questionNotice(t sa.Task, question string, form sa.Form, limit time.Duration) sa.Message {
	answer := "your answer"
	if takes := form.Takes(); takes != "" {
		answer += ", " + takes
	}
	return sa.Message{
		Role: sa.RoleUser,
		Kind: sa.KindNotification,
		Parts: []sa.Part{
			sa.TextPart(fmt.Sprintf("? Agent %q asks: %s\nAnswer it with a message to task %s (in the chat: /send %s <answer>); it waits %s, then goes on without", t.Description, question, sa.ShortID(t.ID), sa.ShortID(t.ID), sa.FormatDuration(limit))),
			{Type: sa.PartText, Hidden: true, Text: fmt.Sprintf(
				"Background task %s (%q) is waiting for an answer to its question:\n%s\nAnswer it with superagents_send (task_id %q, message: %s). If nobody answers within %s it goes on without one.",
				t.ID, t.Description, question, t.ID, answer, sa.FormatDuration(limit))},
		},
	}
}

func indexOf(reqs []sa.InputRequest, key string) int {
	for i, r := range reqs {
		if r.Key == key {
			return i
		}
	}
	return -1
}

// PendingInputs returns the questions a task's current run waits to have
// answered, oldest first (none once it has ended).
func (m *Manager) PendingInputs(ctx context.Context, taskID string) ([]sa.InputRequest, error) {
	reqs, err := m.store.InputRequests(ctx, taskID)
	if err != nil {
		return nil, err
	}
	pending := reqs[:0]
	for _, r := range reqs {
		if r.Pending() {
			pending = append(pending, r)
		}
	}
	return pending, nil
}

// AnswerInputs stores a user's answers to a task's questions, by key, for
// its run to pick up wherever it runs. Keys not outstanding are ignored;
// a task that has ended is refused with a *sa.TaskEndedError.
func (m *Manager) AnswerInputs(ctx context.Context, taskID string, answers map[string]json.RawMessage) ([]string, error) {
	return m.store.AnswerInputs(ctx, taskID, answers)
}
