package superagents

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// InputRequest is a question a running task asks the user who launched it
// (a decision its permissions leave open, or its agent's own question),
// kept in the store so that whichever process or node is asked about the
// task sees it, and whichever receives the answer stores it for the run
// that waits for it.
type InputRequest struct {
	TaskID string `json:"task_id"`
	// Key names the request, unique over the task's life.
	Key string `json:"key"`
	// Message says what is asked, in a sentence for the user.
	Message string `json:"message"`
	// Request is the request as the way in that asks it sends it: for
	// MCP, {"method": "elicitation/create", "params": {...}}. The store
	// keeps it as it is.
	Request json.RawMessage `json:"request"`
	// Response is the answer as it was given (for MCP, the
	// elicitation's result); nil until then.
	Response   json.RawMessage `json:"response,omitempty"`
	CreatedAt  time.Time       `json:"created_at"`
	AnsweredAt *time.Time      `json:"answered_at,omitempty"`
}

// Validate reports whether a request is fit to be stored.
func (r InputRequest) Validate() error {
	switch {
	case r.TaskID == "":
		return fmt.Errorf("%w: an input request needs its task", ErrInvalid)
	case strings.TrimSpace(r.Key) == "":
		return fmt.Errorf("%w: an input request needs a key", ErrInvalid)
	case strings.TrimSpace(r.Message) == "":
		return fmt.Errorf("%w: an input request needs a message saying what is asked", ErrInvalid)
	case !json.Valid(r.Request):
		return fmt.Errorf("%w: input request %s is not JSON", ErrInvalid, r.Key)
	}
	return nil
}

// Inputs are the requests tasks make of their users, and the answers.
// A request is outstanding while it has no answer and was made by the
// task's current run (since its latest start) of a task still active: a
// request left by a run that ended is no longer asked.
//
// Asking and answering each record a task.updated change carrying the
// task, so that followers of the change log (the run waiting for the
// answer, and status reports) hear of both at once, on any node; and a
// task.question or task.answer change carrying the request.
type Inputs interface {
	// AskInput stores a request of an active task and returns it with
	// CreatedAt set; notice, if set, makes the message that tells the
	// task's parent session of it, appended there in the same
	// transaction (when the parent is live). It refuses with ErrConflict
	// a task that has ended and a key the task used already; with
	// ErrNotFound an unknown task.
	AskInput(ctx context.Context, r InputRequest, notice func(Task) Message) (InputRequest, error)
	// InputRequests returns the requests of a task's current run, answered
	// or not, oldest first (none once the task has ended).
	InputRequests(ctx context.Context, taskID string) ([]InputRequest, error)
	// AnswerInputs stores answers to a task's outstanding requests, by key,
	// in one transaction, and returns the keys it answered. Keys that are
	// not outstanding (unknown, answered already, left by an earlier run)
	// are ignored. It refuses a task that has ended with a
	// *TaskEndedError, and an unknown one with ErrNotFound.
	AnswerInputs(ctx context.Context, taskID string, answers map[string]json.RawMessage) ([]string, error)
}

// Pending reports whether a request awaits its answer.
func (r InputRequest) Pending() bool { return r.AnsweredAt == nil }

// TaskEndedError refuses an answer to a task that has ended: nothing waits
// for it any more.
type TaskEndedError struct {
	TaskID string
	Status TaskStatus
}

func (e *TaskEndedError) Error() string {
	return fmt.Sprintf("task %s has ended (%s): it awaits no answer", ShortID(e.TaskID), e.Status)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *TaskEndedError) Is(target error) bool { return target == ErrConflict }

// Form is what a question takes as its answer, read from its request (an
// MCP elicitation whose form has one field): a yes or a no (a question
// about a command), one of Choices, or free text.
type Form struct {
	// Field is the name of the form's one field.
	Field   string
	YesNo   bool
	Choices []string
}

// Form reads what the question takes. A request that is not a form
// with one field is ErrCorrupt.
func (r InputRequest) Form() (Form, error) {
	var req struct {
		Params struct {
			RequestedSchema struct {
				Properties map[string]struct {
					Type string `json:"type"`
					Enum []any  `json:"enum"`
				} `json:"properties"`
			} `json:"requestedSchema"`
		} `json:"params"`
	}
	if err := json.Unmarshal(r.Request, &req); err != nil {
		return Form{}, fmt.Errorf("%w: question %s cannot be read: %v", ErrCorrupt, r.Key, err)
	}
	props := req.Params.RequestedSchema.Properties
	if len(props) != 1 {
		return Form{}, fmt.Errorf("%w: question %s has %d fields, not one", ErrCorrupt, r.Key, len(props))
	}
	var f Form
	for name, p := range props {
		f.Field, f.YesNo = name, p.Type == "boolean"
		for _, c := range p.Enum {
			if s, ok := c.(string); ok {
				f.Choices = append(f.Choices, s)
			}
		}
	}
	return f, nil
}

// Takes says, for the one who answers, what the form takes ("" for free
// text).
func (f Form) Takes() string {
	switch {
	case f.YesNo:
		return "yes or no"
	case len(f.Choices) > 0:
		quoted := make([]string, len(f.Choices))
		for i, c := range f.Choices {
			quoted[i] = fmt.Sprintf("%q", c)
		}
		return "one of " + strings.Join(quoted, ", ")
	}
	return ""
}

// Read turns a text into the form's value: true or false for a yes or a
// no, the choice it names (ignoring case), or the text. A text that is
// none of what the form takes is ErrInvalid, saying what it takes.
func (f Form) Read(text string) (any, error) {
	text = strings.TrimSpace(text)
	switch {
	case f.YesNo:
		switch strings.ToLower(strings.Trim(text, ".!")) {
		case "yes", "y", "true", "allow", "allow it", "ok", "okay", "go ahead", "approve", "approved":
			return true, nil
		case "no", "n", "false", "deny", "don't", "do not", "refuse", "declined", "decline":
			return false, nil
		}
	case len(f.Choices) > 0:
		for _, c := range f.Choices {
			if strings.EqualFold(text, c) {
				return c, nil
			}
		}
	default:
		return text, nil
	}
	return nil, fmt.Errorf("%w: the question takes %s", ErrInvalid, f.Takes())
}
