package tasks_test

import (
	"context"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/internal/tasktools"
)

// TestResumeAgent: a resume that names an agent is refused unless it is
// the task's own, instead of running the task's agent without a word.
func TestResumeAgent(t *testing.T) {
	h := newHarness(t, resumable(t))
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "first instruction"}) // agent general
	h.wait(task.ID)
	tests := []struct {
		agent string
		want  string // a piece of the error; empty: resumed
	}{
		{"wizard", `unknown agent "wizard": available agents are explore, general`},
		{"explore", "runs agent general, and a resumed task keeps its agent"},
		{"general", ""},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			_, err := h.tools.TaskTool(context.Background(), parent.ID, tasktools.TaskInput{Resume: task.ID, Agent: tt.agent, Prompt: "the follow-up"})
			got, _ := h.store.Task(context.Background(), task.ID)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error = %v, want %q", err, tt.want)
				}
				if got.Status != sa.TaskCompleted || got.ResumeCount != 0 {
					t.Fatalf("a refused resume changed the task: %+v", got)
				}
				return
			}
			if err != nil || got.ResumeCount != 1 {
				t.Fatalf("resume with the task's own agent = %v, task %+v", err, got)
			}
			h.wait(task.ID)
		})
	}
}
