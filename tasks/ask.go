package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/tools"
)

// AskToolName is the tool a task whose user can be asked asks with.
const AskToolName = "superagents_ask"

// AskInput is the input of superagents_ask.
type AskInput struct {
	Question string   `json:"question" jsonschema:"The question for the user, complete on its own: they see only it, not your conversation."`
	Choices  []string `json:"choices,omitempty" jsonschema:"The answers the user may pick from; leave it out for a free answer."`
}

const askDescription = `Ask the user who launched this task a question, and wait for the answer. Use it for a decision that is theirs (which of two approaches, whether to go ahead with something risky), not for what you can find out yourself. The answer may take minutes; the user may also decline to answer, and then decide yourself or stop.`

// The field of the form superagents_ask sends.
const answerField = "answer"

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

// askTool is superagents_ask, for a turn that can ask its user.
func askTool(asker tools.Asker) (tools.Tool, error) {
	def, err := tools.Define[AskInput](AskToolName, askDescription, false)
	if err != nil {
		return nil, err
	}
	return def.Bind(func(ctx context.Context, in AskInput) (tools.Result, error) {
		question := strings.TrimSpace(in.Question)
		if question == "" {
			return tools.Errorf("question is empty: say what you want to know"), nil
		}
		field := map[string]any{"type": "string", "title": "Answer"}
		if len(in.Choices) > 0 {
			field["enum"] = in.Choices
		}
		a, err := asker.Ask(ctx, tools.Question{Message: question, Schema: map[string]any{
			"type": "object", "properties": map[string]any{answerField: field}, "required": []string{answerField},
		}})
		switch {
		case err != nil && ctx.Err() != nil:
			return tools.Result{}, ctx.Err()
		case err != nil:
			return tools.Errorf("the question could not be asked: %v", err), nil
		case a.Action == tools.ActionDecline:
			return tools.Result{Output: "The user declined to answer."}, nil
		case a.Action != tools.ActionAccept:
			return tools.Result{Output: "The user dismissed the question without answering."}, nil
		}
		answer, ok := a.Content[answerField]
		if !ok {
			return tools.Result{Output: "The user accepted without giving an answer."}, nil
		}
		if s, ok := answer.(string); ok {
			return tools.Result{Output: "The user answered: " + s}, nil
		}
		b, err := json.Marshal(answer)
		if err != nil {
			return tools.Errorf("the answer cannot be read: %v", err), nil
		}
		return tools.Result{Output: "The user answered: " + string(b)}, nil
	}), nil
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
