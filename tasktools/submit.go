package tasktools

import (
	"context"
	"fmt"
	"math"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/runtime"
)

// FieldError is a request field that is wrong, with the reason.
type FieldError = sa.FieldError

// Validate checks what can be checked of a request before anything is
// looked up: the combinations superagents_task refuses.
func (in TaskInput) Validate() error {
	switch {
	case in.Fork && in.Resume != "":
		return &FieldError{Field: "resume", Reason: "fork and resume are mutually exclusive: fork starts a new task with a digest of the parent's conversation, " +
			"resume continues an existing task in its own session; set only one"}
	case in.Timeout < 0:
		return &FieldError{Field: "timeout", Reason: "timeout cannot be negative"}
	case in.Resume != "" && in.Timeout > 0:
		return &FieldError{Field: "timeout", Reason: "timeout applies to a launch: a resumed task keeps the time limit it was launched with"}
	case !validIsolation(in.Isolation):
		return &FieldError{Field: "isolation", Reason: fmt.Sprintf("unknown isolation %q: use \"worktree\" (a git worktree of its own) or leave it out", in.Isolation)}
	case in.MaxCost < 0 || math.IsNaN(in.MaxCost) || math.IsInf(in.MaxCost, 0):
		return &FieldError{Field: "max_cost", Reason: "max_cost must be a number of dollars, more than 0 (leave it out for the configured budget)"}
	case in.MaxTokens < 0:
		return &FieldError{Field: "max_tokens", Reason: "max_tokens cannot be negative (leave it out for the configured budget)"}
	case in.Resume != "" && in.Isolation != "":
		return &FieldError{Field: "isolation", Reason: "isolation applies to a launch: a resumed task goes on where it worked (its own worktree, if it has one)"}
	case in.Resume != "" && (in.MaxCost > 0 || in.MaxTokens > 0):
		field := "max_cost"
		if in.MaxCost == 0 {
			field = "max_tokens"
		}
		return &FieldError{Field: field, Reason: field + " applies to a launch: a resumed task keeps the budget it was launched with, and its resume counts against it"}
	}
	return nil
}

func validIsolation(s string) bool {
	_, err := sa.ParseIsolation(s)
	return err == nil
}

// Submit launches, or resumes, a task for the caller's session as
// superagents_task asks, whichever way in it came from: one validation and
// one batching policy. A task launched while others of the caller are
// still active joins their batch, so each ending says how many of the
// batch are done ("Task Progress: 2/3"); otherwise it starts a batch.
func Submit(ctx context.Context, rt *runtime.Runtime, caller string, in TaskInput) (t sa.Task, resumed bool, err error) {
	return SubmitFrom(ctx, rt, caller, "", in)
}

// SubmitFrom is Submit whose fork, if asked for, is a digest of forkFrom's
// conversation instead of the caller's ("" means the caller's).
func SubmitFrom(ctx context.Context, rt *runtime.Runtime, caller, forkFrom string, in TaskInput) (t sa.Task, resumed bool, err error) {
	if err := in.Validate(); err != nil {
		return sa.Task{}, false, err
	}
	if in.Resume != "" {
		t, err = rt.ResumeTask(ctx, in.Resume, in.Prompt, in.Agent)
		return t, true, err
	}
	// A task launched while others of the caller run joins their batch,
	// chosen by the store as it creates the task.
	t, err = rt.LaunchTask(ctx, runtime.LaunchRequest{
		ParentSessionID: caller, Description: in.Description, Prompt: in.Prompt, Agent: in.Agent,
		Fork: in.Fork, ForkFrom: forkFrom, Timeout: seconds(in.Timeout, rt.TaskLimits().Timeout.Duration), JoinActiveBatch: true,
		Budget: sa.Budget{MaxCost: in.MaxCost, MaxTokens: in.MaxTokens}, Isolation: in.Isolation,
	})
	return t, false, err
}
