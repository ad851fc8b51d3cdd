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
