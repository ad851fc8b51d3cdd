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
