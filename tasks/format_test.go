package tasks

import (
	"strings"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/golden"
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

// render shows a notification as stored: the visible text, then the
// hidden hint.
func render(m sa.Message) string {
	return m.Parts[0].Text + "\n[hidden] " + m.Parts[1].Text
}

// stateOf is what a store tells of a batch whose tasks are as given.
func stateOf(batch []sa.Task) sa.BatchState {
	s := sa.BatchState{Total: len(batch)}
	for _, t := range batch {
		if t.Status.Active() {
			s.Active++
		}
	}
	if s.Active == 0 {
		for _, t := range batch {
			if t.Status == sa.TaskCompleted {
				s.Completed = append(s.Completed, t.ID)
			}
		}
	}
	return s
}

func TestNotificationsGolden(t *testing.T) {
	done := fixture("aaaa111111111111", "scan the logs", sa.TaskCompleted, 12*time.Second)
	running := fixture("bbbb222222222222", "read the docs", sa.TaskRunning, 0)
	failed := fixture("cccc333333333333", "run the tests", sa.TaskError, 3*time.Second)
	failed.Error = "model: 429 Too Many Requests"
	cancelled := fixture("dddd444444444444", "long build", sa.TaskCancelled, 5*time.Second)
	resumed := fixture("eeee555555555555", "answer", sa.TaskCompleted, 4*time.Second)
	resumed.ResumeCount, resumed.Result = 2, "The full response\nover two lines."
	resumeFailed := resumed
	resumeFailed.Status, resumeFailed.Error, resumeFailed.Result = sa.TaskError, "timed out after 30m 0s", ""
	resumeCancelled := resumed
	resumeCancelled.Status, resumeCancelled.Error = sa.TaskCancelled, "cancelled"
	long := fixture("ffff666666666666", "slow", sa.TaskCompleted, 2*time.Hour+3*time.Minute)

	cases := []struct {
		name  string
		ended sa.Task
		batch []sa.Task
	}{
		{"completed, others still running", done, []sa.Task{done, running}},
		{"completed alone", done, []sa.Task{done}},
		{"failed, all of the batch done", failed, []sa.Task{done, failed, cancelled}},
		{"cancelled", cancelled, []sa.Task{cancelled, running}},
		{"resume completed", resumed, []sa.Task{resumed}},
		{"resume failed", resumeFailed, []sa.Task{resumeFailed}},
		{"resume cancelled", resumeCancelled, []sa.Task{resumeCancelled}},
		{"took hours", long, []sa.Task{long}},
	}
	var b strings.Builder
	for _, c := range cases {
		b.WriteString("== " + c.name + "\n" + render(notification(c.ended, stateOf(c.batch))) + "\n\n")
	}
	golden.Check(t, "notifications.golden", []byte(b.String()))
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
	b.WriteString("== list\n" + formatList([]sa.Task{forked, running, queued, plain}, now) + "\n\n")
	b.WriteString("== empty list\n" + formatList(nil, now) + "\n\n")
	outputs := []struct {
		name string
		out  Output
	}{
		{"completed", Output{Task: forked}},
		{"running", Output{Task: running, Partial: "Reading the second chapter."}},
		{"timed out", Output{Task: running, TimedOut: true, Waited: 60 * time.Second, Partial: "Still reading."}},
		{"queued", Output{Task: queued}},
		{"cancelled", Output{Task: plain}},
		{"cancelled with its parent", Output{Task: orphan}},
		{"resume cancelled", Output{Task: resumeCancelled}},
		{"resume failed", Output{Task: resumeFailed}},
	}
	for _, o := range outputs {
		b.WriteString("== output " + o.name + "\n" + formatOutput(o.out, now) + "\n\n")
	}
	golden.Check(t, "texts.golden", []byte(b.String()))
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 400 * time.Millisecond: "0s", 12 * time.Second: "12s", 59*time.Second + 600*time.Millisecond: "1m 0s",
		125 * time.Second: "2m 5s", 3723 * time.Second: "1h 2m",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%s) = %q, want %q", d, got, want)
		}
	}
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
		if got := blockTimeout(seconds(tt.tool, MaxBlockTimeout)); got != tt.want {
			t.Errorf("superagents_output timeout %d waits %s, want %s", tt.tool, got, tt.want)
		}
	}
}
