package tasktools

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/superagents/superagents/internal/tools"
)

// AskToolName is the tool a task whose user can be asked asks with.
const AskToolName = "superagents_ask"

// AskInput is the input of superagents_ask.
type AskInput struct {
	Question string   `json:"question" jsonschema:"The question for the user, complete on its own: they see only it, not your conversation."`
	Choices  []string `json:"choices,omitempty" jsonschema:"The answers the user may pick from; leave it out for a free answer."`
}

const askDescription = `Ask whoever launched this task (a user, or the agent that launched you) a question, and wait for the answer. Use it for a decision that is theirs (which of two approaches, whether to go ahead with something risky), not for what you can find out yourself. The answer may take minutes; the user may also decline to answer, and then decide yourself or stop.`

// The field of the form superagents_ask sends.
const answerField = "answer"

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
		case a.Action == tools.ActionNoAnswer:
			return tools.Result{Output: "Nobody answered in time. Decide yourself and go on, or stop if you cannot."}, nil
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
