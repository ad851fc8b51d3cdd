package tasktools

import (
	"github.com/superagents/superagents/internal/runtime"
)

// Request is the task request superagents_task asks for: its input as
// the runtime's policy takes it (runtime.Tasks.Check), for the caller's
// session, with a fork's digest made of forkFrom's conversation ("": the
// caller's).
func (in TaskInput) Request(caller, forkFrom string) runtime.TaskRequest {
	return runtime.TaskRequest{
		Parent: caller, ForkFrom: forkFrom, Description: in.Description, Prompt: in.Prompt, Agent: in.Agent,
		Fork: in.Fork, Resume: in.Resume, Timeout: int64(in.Timeout), MaxCost: in.MaxCost, MaxTokens: in.MaxTokens,
		Isolation: in.Isolation,
	}
}
