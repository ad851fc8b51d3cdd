package mcpserver

import (
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tasktools"
)

// The tools' structured content. Claude Code and Codex show their model a
// result's structured content when it has one, and drop its text: so each
// answer carries, compactly, all that its text says — the message with
// its hints and the fork note, and the notices of the tasks that ended —
// and a task as a short entry, not its whole prompt. Each type is also
// the tool's declared output schema.

// entry is a task in a few fields: what a listing shows of it.
type entry struct {
	ID          string        `json:"id" jsonschema:"The task id (a unique prefix of 4 or more characters also names it)."`
	Description string        `json:"description"`
	Agent       string        `json:"agent"`
	Status      sa.TaskStatus `json:"status" jsonschema:"queued, running, resumed, completed, error or cancelled."`
	Indicators  string        `json:"indicators,omitempty" jsonschema:"(forked) and (resumed), as listings show them."`
	DurationMS  int64         `json:"duration_ms" jsonschema:"How long the latest launch or resume has run, or ran."`
	ToolCalls   int           `json:"tool_calls,omitempty"`
	ResumeCount int           `json:"resume_count,omitempty"`
	Unread      bool          `json:"unread,omitempty" jsonschema:"A completed task whose result was not read yet."`
	Branch      string        `json:"branch,omitempty" jsonschema:"The git branch of the task's own worktree, when it works in one."`
	Question    string        `json:"question,omitempty" jsonschema:"The question the task is waiting for you to answer (with superagents_send)."`
}

func newEntry(t sa.Task, now time.Time) entry {
	e := entry{
		ID: t.ID, Description: t.Description, Agent: t.Agent, Status: t.Status,
		Indicators: tasktools.Indicators(t), DurationMS: t.Duration(now).Milliseconds(),
		ToolCalls: t.Progress.ToolCalls, ResumeCount: t.ResumeCount,
		Unread: t.Status == sa.TaskCompleted && t.ResultRetrievedAt == nil,
	}
	if w := t.Worktree; w != nil && !w.Removed {
		e.Branch = w.Branch
	}
	return e
}

// taskAnswer is superagents_task's and superagents_cancel's structured
// content.
type taskAnswer struct {
	entry
	Message string   `json:"message" jsonschema:"What was done and what to do next, with what a fork carries."`
	Notices []string `json:"notices,omitempty" jsonschema:"What happened to your background tasks since your last superagents call: each ending (which task, how it ended, what to do next) and each question a task waits for you to answer."`
}

// outputAnswer is superagents_output's structured content. The message
// holds the result (once), so the entry does not.
type outputAnswer struct {
	entry
	Message  string   `json:"message" jsonschema:"The task's result once it completed, else its status and progress."`
	TimedOut bool     `json:"timed_out" jsonschema:"A blocking call stopped waiting before the task ended."`
	Notices  []string `json:"notices,omitempty" jsonschema:"What happened to your background tasks since your last superagents call: each ending (which task, how it ended, what to do next) and each question a task waits for you to answer."`
}

// sendAnswer is superagents_send's structured content.
type sendAnswer struct {
	entry
	Message  string   `json:"message" jsonschema:"What was done: a message sent, or the task's question answered."`
	Answered bool     `json:"answered" jsonschema:"The message answered the question the task was waiting on."`
	Notices  []string `json:"notices,omitempty" jsonschema:"What happened to your background tasks since your last superagents call: each ending (which task, how it ended, what to do next) and each question a task waits for you to answer."`
}

// listAnswer is superagents_list's structured content.
type listAnswer struct {
	Tasks   []entry  `json:"tasks" jsonschema:"Your tasks, newest first."`
	Notices []string `json:"notices,omitempty" jsonschema:"What happened to your background tasks since your last superagents call: each ending (which task, how it ended, what to do next) and each question a task waits for you to answer."`
}

// clearAnswer is superagents_clear's structured content.
type clearAnswer struct {
	Message   string   `json:"message"`
	Cleared   int      `json:"cleared"`
	Cancelled int      `json:"cancelled"`
	Notices   []string `json:"notices,omitempty" jsonschema:"What happened to your background tasks since your last superagents call: each ending (which task, how it ended, what to do next) and each question a task waits for you to answer."`
}
