package tools

import (
	"context"
	"errors"
	"fmt"
)

// Question is what a tool asks the user: a sentence, and the form of the
// answer as a JSON schema object whose properties are plain values (MCP's
// elicitation form).
type Question struct {
	Message string
	Schema  map[string]any
}

// Answer is the user's answer: Action is "accept" (with Content, the
// form's values), "decline", "cancel" (dismissed without a choice) or
// "no_answer" (nobody answered in time).
type Answer struct {
	Action  string
	Content map[string]any
}

// The actions of an Answer.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
	// ActionNoAnswer is not MCP's: a question nobody answered in time.
	ActionNoAnswer = "no_answer"
)

// Asker asks the user a question on a tool's behalf and waits for the
// answer. A turn whose user can be reached (a background task: whoever
// launched it) carries one in its context.
type Asker interface {
	Ask(ctx context.Context, q Question) (Answer, error)
}

type askerKey struct{}

// WithAsker returns ctx carrying a, for the tools of the turn run in it.
func WithAsker(ctx context.Context, a Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

// AskerFrom returns the Asker ctx carries, or nil when nobody can be asked.
func AskerFrom(ctx context.Context) Asker {
	a, _ := ctx.Value(askerKey{}).(Asker)
	return a
}

// allowField is the one field of the form that asks to run a command.
const allowField = "allow"

// commandQuestion asks whether to run a command the allow list does not
// allow.
func commandQuestion(command string, na *NotAllowedError) Question {
	return Question{
		Message: fmt.Sprintf("The agent wants to run `%s`, which the permission policy does not allow (%q is not in its allow list): allow it?", command, na.Command),
		Schema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				allowField: map[string]any{"type": "boolean", "title": "Allow this command", "description": "Run `" + command + "` once.", "default": false},
			},
			"required": []string{allowField},
		},
	}
}

// askToRun asks the user whether to run command; it returns nil when the
// user allowed it, else the refusal the model reads. Only an error of ctx
// (the run stopped) is returned as the error.
func askToRun(ctx context.Context, asker Asker, command string, na *NotAllowedError) (refusal error, err error) {
	a, err := asker.Ask(ctx, commandQuestion(command, na))
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return fmt.Errorf("%v; asking the user failed: %v", na, err), nil
	case a.Action == ActionAccept && a.Content[allowField] != false:
		return nil, nil
	case a.Action == ActionAccept, a.Action == ActionDecline:
		return fmt.Errorf("%v; the user was asked and declined to run it: do not try to get around it", na), nil
	case a.Action == ActionNoAnswer:
		return fmt.Errorf("%v; the user was asked and did not answer in time: do not run it, do without it or stop", na), nil
	}
	return fmt.Errorf("%v; the user was asked and dismissed the question without allowing it: do not run it", na), nil
}

// errNobodyToAsk completes the refusal of a command the policy would ask
// about where nobody can be asked.
var errNobodyToAsk = errors.New("the policy asks the user about such commands, but nobody can be asked here: only a background task can ask (whoever launched it)")
