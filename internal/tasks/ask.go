package tasks

import (
	"context"
	"encoding/json"
	"fmt"

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

// withAsker gives the run's tools a way to ask its user, when the task
// may ask. Waiting for the answer holds a tool call open, so the
// inactivity clock stops meanwhile; the task's time limit keeps running.
func (m *Manager) withAsker(ctx context.Context, r *run) context.Context {
	if !r.task.MayAsk {
		return ctx
	}
	return tools.WithAsker(ctx, &taskAsker{m: m, taskID: r.task.ID})
}

// taskAsker asks through the store: the request is stored with the task,
// whichever node reports the task shows it, whichever node receives the
// answer stores it, and the change log wakes the run here.
type taskAsker struct {
	m      *Manager
	taskID string
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

func (a *taskAsker) Ask(ctx context.Context, q tools.Question) (tools.Answer, error) {
	raw, err := json.Marshal(elicitation{Method: ElicitMethod, Params: elicitationParams{Mode: "form", Message: q.Message, RequestedSchema: q.Schema}})
	if err != nil {
		return tools.Answer{}, fmt.Errorf("encode the question: %w", err)
	}
	key := sa.NewID()
	cursor := a.m.bus.Now() // before asking, so that no answer is missed
	if _, err := a.m.store.AskInput(ctx, sa.InputRequest{TaskID: a.taskID, Key: key, Message: q.Message, Request: raw}); err != nil {
		return tools.Answer{}, err
	}
	for {
		reqs, err := a.m.store.InputRequests(ctx, a.taskID)
		if err != nil {
			return tools.Answer{}, err
		}
		i := indexOf(reqs, key)
		if i < 0 {
			return tools.Answer{}, fmt.Errorf("the question is no longer asked: task %s has ended", sa.ShortID(a.taskID))
		}
		if !reqs[i].Pending() {
			var ans tools.Answer
			var wire struct {
				Action  string         `json:"action"`
				Content map[string]any `json:"content"`
			}
			if err := json.Unmarshal(reqs[i].Response, &wire); err != nil {
				return tools.Answer{}, fmt.Errorf("the answer cannot be read: %w", err)
			}
			ans.Action, ans.Content = wire.Action, wire.Content
			return ans, nil
		}
		if _, err := cursor.NextMatching(ctx, func(c sa.Change) bool { return c.TaskID == a.taskID }); err != nil {
			return tools.Answer{}, err
		}
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
