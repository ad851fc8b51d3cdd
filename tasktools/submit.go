package tasktools

import (
	"context"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/runtime"
)

// Request is the task request superagents_task asks for: its input as
// the runtime's policy takes it (runtime.CheckTask), for the caller's
// session, with a fork's digest made of forkFrom's conversation ("": the
// caller's).
func (in TaskInput) Request(caller, forkFrom string) runtime.TaskRequest {
	return runtime.TaskRequest{
		Parent: caller, ForkFrom: forkFrom, Description: in.Description, Prompt: in.Prompt, Agent: in.Agent,
		Fork: in.Fork, Resume: in.Resume, Timeout: int64(in.Timeout), MaxCost: in.MaxCost, MaxTokens: in.MaxTokens,
		Isolation: in.Isolation,
	}
}

// Submit launches, or resumes, a task for the caller's session as
// superagents_task asks (runtime.SubmitTask: the one policy of a task
// request, whichever way in it came from).
func Submit(ctx context.Context, rt *runtime.Runtime, caller string, in TaskInput) (t sa.Task, resumed bool, err error) {
	return SubmitFrom(ctx, rt, caller, "", in)
}

// SubmitFrom is Submit whose fork, if asked for, is a digest of forkFrom's
// conversation instead of the caller's ("" means the caller's).
func SubmitFrom(ctx context.Context, rt *runtime.Runtime, caller, forkFrom string, in TaskInput) (t sa.Task, resumed bool, err error) {
	return rt.Tasks().Submit(ctx, in.Request(caller, forkFrom))
}
