package tasktools

import (
	"strings"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/golden"
	"github.com/superagents/superagents/internal/tasks"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) *time.Time {
	t := t0.Add(d)
	return &t
}

func fixture(id, desc string, status sa.TaskStatus, took time.Duration) sa.Task {
	t := sa.Task{ID: id, Description: desc, Agent: "explore", Status: status, StartedAt: t0, CreatedAt: t0, BatchID: "b"}
	if status.Terminal() {
		t.CompletedAt = at(took)
	}
	return t
}

func TestToolTextsGolden(t *testing.T) {
	now := t0.Add(90 * time.Second)
	forked := fixture("aaaa111111111111", "scan the logs", sa.TaskCompleted, 12*time.Second)
	forked.IsForked, forked.ResumeCount, forked.Result = true, 1, "Found 3 errors."
	forked.Progress.ToolCalls = 4
	running := fixture("bbbb222222222222", "read the docs", sa.TaskRunning, 0)
	running.Progress = sa.TaskProgress{ToolCalls: 3, LastTools: []string{"grep", "read", "read"}}
	queued := fixture("cccc333333333333", "later", sa.TaskQueued, 0)
	plain := fixture("dddd444444444444", "plain", sa.TaskCancelled, 5*time.Second)
	plain.Progress.ToolCalls = 1
	orphan := fixture("eeee555555555555", "orphan", sa.TaskCancelled, 5*time.Second)
	orphan.Error = sa.ParentDeletedError
	resumeCancelled := fixture("ffff666666666666", "answer", sa.TaskCancelled, 5*time.Second)
	resumeCancelled.ResumeCount, resumeCancelled.Result, resumeCancelled.Error = 2, "The answer of resume #1.", "cancelled"
	resumeFailed := resumeCancelled
	resumeFailed.Status, resumeFailed.Error = sa.TaskError, "timed out after 30m 0s (the task's time limit)"

	var b strings.Builder
	asking := NewView(running, now)
	asking.Question = "Which branch should I base the fix on?"
	b.WriteString("== list\n" + formatList([]View{NewView(forked, now), asking, NewView(queued, now), NewView(plain, now)}, now) + "\n\n")
	b.WriteString("== empty list\n" + formatList(nil, now) + "\n\n")
	outputs := []struct {
		name string
		out  sa.TaskOutput
	}{
		{"completed", sa.TaskOutput{Task: forked}},
		{"running", sa.TaskOutput{Task: running, Partial: "Reading the second chapter."}},
		{"timed out", sa.TaskOutput{Task: running, TimedOut: true, Waited: 60 * time.Second, Partial: "Still reading."}},
		{"told while waiting", sa.TaskOutput{Task: running, Told: true, Waited: 3 * time.Second}},
		{"waiting for an answer", sa.TaskOutput{Task: running, Question: "Delete the old fixtures? (yes or no)"}},
		{"queued", sa.TaskOutput{Task: queued}},
		{"cancelled", sa.TaskOutput{Task: plain}},
		{"cancelled with its parent", sa.TaskOutput{Task: orphan}},
		{"resume cancelled", sa.TaskOutput{Task: resumeCancelled}},
		{"resume failed", sa.TaskOutput{Task: resumeFailed}},
	}
	for _, o := range outputs {
		b.WriteString("== output " + o.name + "\n" + formatOutput(o.out, now, sendHint) + "\n\n")
	}
	msgs := []sa.TaskMessage{
		{Seq: 1, From: FromUser, Text: "Only internal/ matters.", DeliveredAt: at(time.Second)},
		{Seq: 2, From: FromAgent, Text: "Skip\nthe tests. " + strings.Repeat("And more. ", 20)},
		{Seq: 3, From: FromHost, Text: "Stop there.", Undelivered: "the task was cancelled first"},
	}
	b.WriteString("== messages\n" + MessagesText(msgs) + "\n\n")
	b.WriteString("== no messages\n" + MessagesText(nil) + "\n\n")
	b.WriteString("== output waiting for a person's answer\n" + formatOutput(sa.TaskOutput{Task: running, Question: "Which branch?"}, now,
		func(id string) string { return "Answer it with: superagents task send " + id + " ANSWER" }) + "\n\n")
	golden.Check(t, "texts.golden", []byte(b.String()))
}

func TestBlockTimeout(t *testing.T) {
	for _, tt := range []struct {
		tool int // the seconds superagents_output was given
		want time.Duration
	}{
		{0, 60 * time.Second}, // left out: the default
		{1, time.Second},
		{600, 600 * time.Second},
		{601, 600 * time.Second},     // capped
		{1 << 62, 600 * time.Second}, // no overflow into a short wait
	} {
		if got := tasks.BlockTimeout(seconds(tt.tool, sa.MaxBlockTimeout)); got != tt.want {
			t.Errorf("superagents_output timeout %d waits %s, want %s", tt.tool, got, tt.want)
		}
	}
}
