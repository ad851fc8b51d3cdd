package tasktools

import (
	"time"

	sa "github.com/superagents/superagents"
)

// View is a task as every way in shows it to programs (the HTTP API, the
// tools' structured content over MCP, the commands' --json): the stored
// record, whose JSON names it "id", with what listings work out from it.
type View struct {
	sa.Task
	// Indicators are "(forked)" and "(resumed)", as listings show them.
	Indicators string `json:"indicators,omitempty"`
	// DurationMS is the latest run's time so far, or its length once it
	// ended (see Duration).
	DurationMS int64 `json:"duration_ms"`
	// Question is what an active task waits to have answered (answer
	// it by sending it a message), where the listing looked.
	Question string `json:"question,omitempty"`
}

// NewView is the view of a task at time now.
func NewView(t sa.Task, now time.Time) View {
	return View{Task: t, Indicators: Indicators(t), DurationMS: t.Duration(now).Milliseconds()}
}

// NewViews is the views of tasks at time now; never nil, so that an empty
// list is [] in JSON.
func NewViews(list []sa.Task, now time.Time) []View {
	out := make([]View, len(list))
	for i, t := range list {
		out[i] = NewView(t, now)
	}
	return out
}

// OutputView is superagents_output's structured content: the task, and
// what the call found.
type OutputView struct {
	View
	// TimedOut is set when a blocking call stopped waiting before the
	// task ended.
	TimedOut bool `json:"timed_out"`
	// Told is set when a blocking call of a task stopped waiting early
	// because the task was sent a message (see sa.TaskOutput.Told).
	Told bool `json:"told,omitempty"`
	// Partial is the latest answer text of a task that has not ended.
	Partial string `json:"partial,omitempty"`
}

// Duration is how long a task's latest launch or resume has run: until it
// ended, or until now (sa.Task.Duration).
func Duration(t sa.Task, now time.Time) time.Duration { return t.Duration(now) }
