package runtime

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tasks"
)

// TaskRequest is a request to launch a task, or to resume one, whichever
// way in it came from: the chat's /task and /resume, `superagents task
// launch` and `task resume`, POST /v1/tasks, superagents_task (an
// agent's, or an MCP client's). Each way in translates its input into a
// TaskRequest and hands it to Tasks.Submit; the rules, the defaults and the
// words of the refusals are Tasks.Check's.
type TaskRequest struct {
	// Parent is the session that launches the task (its id): it is
	// notified when the task ends, and a fork inherits its context. A
	// resume needs none.
	Parent string
	// ForkFrom, with Fork, is the session whose conversation the fork's
	// digest is made of instead of Parent's (an MCP host's own, imported).
	ForkFrom string
	// Description is a few words naming the task; Prompt what it should
	// do (with Resume: the follow-up); Agent the agent profile to run
	// (with Resume: empty, or the task's own).
	Description, Prompt, Agent string
	// Fork gives the task a digest of the parent's conversation.
	Fork bool
	// Resume is the task (an id or a unique prefix) to send Prompt to as
	// a follow-up, instead of launching one.
	Resume string
	// Timeout is in seconds: 0 for the configured task time limit
	// (tasks.timeout), which it may not exceed.
	Timeout int64
	// MaxCost (dollars) and MaxTokens are the task tree's budget: 0 for
	// the configured one (tasks.max_cost, tasks.max_tokens).
	MaxCost   float64
	MaxTokens int64
	// Isolation is sa.IsolationWorktree for a git worktree of its own;
	// empty for the agent profile's.
	Isolation string
}

// The fields of a task request, as superagents_task and the HTTP API
// name them. A RequestError names one of these; a way in whose fields are
// spelled otherwise (the command line's flags) renames it.
const (
	FieldDescription = "description"
	FieldPrompt      = "prompt"
	FieldAgent       = "agent"
	FieldResume      = "resume"
	FieldTimeout     = "timeout"
	FieldMaxCost     = "max_cost"
	FieldMaxTokens   = "max_tokens"
	FieldIsolation   = "isolation"
)

// RequestError is a task request that Tasks.Check refuses: the field at
// fault and the rule it breaks, the rest of a sentence that starts with
// the field's name. Error names the field as superagents_task does;
// Named lets a way in spell it its own way ("--max-cost"), the rest of
// the sentence staying the same everywhere.
type RequestError struct {
	Field string
	Rule  string
}

func (e *RequestError) Error() string { return e.Named(e.Field) }

// Named is the sentence with the field spelled as name.
func (e *RequestError) Named(name string) string { return name + " " + e.Rule }

// Is makes errors.Is(err, sa.ErrInvalid) true.
func (e *RequestError) Is(target error) bool { return target == sa.ErrInvalid }

func refuse(field, format string, args ...any) error {
	return &RequestError{Field: field, Rule: fmt.Sprintf(format, args...)}
}

// Check is the one policy of a task request: what it must hold, what
// goes together, the bounds of its time limit and budget, the agent it
// names. It looks nothing up in the store; Tasks.Submit calls it, and a way
// in that wants to refuse a request before it does anything else (the
// command line, before it starts a background worker) may too.
func (ts Tasks) Check(req TaskRequest) error {
	resume := req.Resume != ""
	switch {
	case req.Fork && resume:
		return refuse(FieldResume, "and fork are mutually exclusive: fork starts a new task with a digest of the parent's conversation, "+
			"resume continues an existing task in its own session; set only one")
	case resume && strings.TrimSpace(req.Prompt) == "":
		return refuse(FieldPrompt, "is required: the follow-up to send to the task")
	case resume && req.Timeout != 0:
		return refuse(FieldTimeout, "applies to a launch: a resumed task keeps the time limit it was launched with")
	case resume && req.Isolation != "":
		return refuse(FieldIsolation, "applies to a launch: a resumed task goes on where it worked (its own worktree, if it has one)")
	case resume && req.MaxCost != 0:
		return refuse(FieldMaxCost, "applies to a launch: a resumed task keeps the budget it was launched with, and its resume counts against it")
	case resume && req.MaxTokens != 0:
		return refuse(FieldMaxTokens, "applies to a launch: a resumed task keeps the budget it was launched with, and its resume counts against it")
	case resume:
		return nil
	case req.Timeout < 0:
		return refuse(FieldTimeout, "cannot be negative (leave it out for the task time limit)")
	case req.Timeout > int64(ts.rt.timeoutLimit()/time.Second):
		return refuse(FieldTimeout, "must be at most %d seconds, the task time limit (tasks.timeout); leave it out for that limit",
			int64(ts.rt.timeoutLimit()/time.Second))
	case req.MaxCost < 0 || math.IsNaN(req.MaxCost) || math.IsInf(req.MaxCost, 0):
		return refuse(FieldMaxCost, "must be a number of dollars, not negative (leave it out for the configured budget)")
	case req.MaxTokens < 0:
		return refuse(FieldMaxTokens, "cannot be negative (leave it out for the configured budget)")
	}
	if _, err := sa.ParseIsolation(req.Isolation); err != nil {
		return refuse(FieldIsolation, "%q is unknown: use %q (a git worktree of its own) or leave it out", req.Isolation, sa.IsolationWorktree)
	}
	switch {
	case strings.TrimSpace(req.Prompt) == "":
		return refuse(FieldPrompt, "is required: say what the task should do")
	case strings.TrimSpace(req.Description) == "":
		return refuse(FieldDescription, "is required: a few words naming the task")
	case strings.TrimSpace(req.Agent) == "":
		return refuse(FieldAgent, "is required: available agents are %s", strings.Join(ts.rt.Agents().Names(), ", "))
	}
	// An agent no profile defines: the profiles' own error, which lists
	// the ones there are.
	_, err := ts.rt.Agents().Profile(req.Agent)
	return err
}

// timeoutLimit is the longest a task may run, and the time limit of one
// launched without its own (the configured tasks.timeout, defaults
// filled in).
func (rt *Runtime) timeoutLimit() time.Duration { return rt.Tasks().Limits().Timeout.Duration }

// Submit launches a task, or resumes one (req.Resume), once Tasks.Check
// accepts the request. It returns at once; the task runs in the
// background, here or on a node of the cluster. A launch takes the
// configured time limit and budget for what it leaves out, and joins the
// batch of its parent's active tasks if it has any, so that each ending
// says how many of the batch are done ("Task Progress: 2/3"); otherwise
// it starts a batch.
func (ts Tasks) Submit(ctx context.Context, req TaskRequest) (t sa.Task, resumed bool, err error) {
	if err := ts.rt.Tasks().Check(req); err != nil {
		return sa.Task{}, false, err
	}
	if req.Resume != "" {
		t, err = ts.rt.tasks.Resume(ctx, req.Resume, req.Prompt, req.Agent)
		return t, true, err
	}
	timeout := cmp.Or(time.Duration(req.Timeout)*time.Second, ts.rt.timeoutLimit())
	t, err = ts.rt.tasks.Launch(ctx, tasks.LaunchRequest{
		ParentSessionID: req.Parent, Description: req.Description, Prompt: req.Prompt, Agent: req.Agent,
		Fork: req.Fork, ForkFrom: req.ForkFrom, Timeout: timeout, JoinActiveBatch: true,
		Budget: sa.Budget{MaxCost: req.MaxCost, MaxTokens: req.MaxTokens}, Isolation: req.Isolation,
	})
	return t, false, err
}
