package superagents_test

import (
	"errors"
	"testing"

	sa "github.com/superagents/superagents"
)

func TestParseTaskStatus(t *testing.T) {
	tests := []struct {
		in   string
		want sa.TaskStatus
		ok   bool
	}{
		{"", "", true},
		{"completed", sa.TaskCompleted, true},
		{"Completed", sa.TaskCompleted, true},
		{" RUNNING ", sa.TaskRunning, true},
		{"Resumed", sa.TaskResumed, true},
		{"sleeping", "", false},
		{"complete", "", false},
	}
	for _, tt := range tests {
		got, err := sa.ParseTaskStatus(tt.in)
		if tt.ok && (err != nil || got != tt.want) {
			t.Errorf("ParseTaskStatus(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if !tt.ok && (!errors.Is(err, sa.ErrInvalid) || got != "") {
			t.Errorf("ParseTaskStatus(%q) = %q, %v; want an invalid-input error", tt.in, got, err)
		}
	}
}

// TestTaskCanBecomeResumed: a task leaves a terminal state only for a
// resume, and only with an answer to go on from.
func TestTaskCanBecomeResumed(t *testing.T) {
	tests := []struct {
		status  sa.TaskStatus
		resumes int
		next    sa.TaskStatus
		want    bool
	}{
		{sa.TaskCompleted, 0, sa.TaskResumed, true},
		{sa.TaskCancelled, 0, sa.TaskResumed, false}, // never answered
		{sa.TaskError, 0, sa.TaskResumed, false},
		{sa.TaskCancelled, 1, sa.TaskResumed, true}, // its resume was cancelled
		{sa.TaskError, 2, sa.TaskResumed, true},     // its resume failed
		{sa.TaskCancelled, 1, sa.TaskCompleted, false},
		{sa.TaskError, 1, sa.TaskRunning, false},
		{sa.TaskResumed, 1, sa.TaskCancelled, true},
		{sa.TaskQueued, 0, sa.TaskResumed, false},
		{sa.TaskRunning, 0, sa.TaskResumed, false},
	}
	for _, tt := range tests {
		task := sa.Task{Status: tt.status, ResumeCount: tt.resumes}
		if got := task.CanBecome(tt.next); got != tt.want {
			t.Errorf("%s after %d resume(s) → %s: CanBecome = %v, want %v", tt.status, tt.resumes, tt.next, got, tt.want)
		}
		if tt.next == sa.TaskResumed && task.Resumable() != tt.want {
			t.Errorf("%s after %d resume(s): Resumable = %v, want %v", tt.status, tt.resumes, !tt.want, tt.want)
		}
	}
}
