package tasks_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/internal/tasktools"
)

// TestCancelThenResumeOfResumedTask: cancelling a resume ends that resume
// (one notification) but not the task: the answer before it stays
// readable, and the task can be resumed again.
func TestCancelThenResumeOfResumedTask(t *testing.T) {
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		switch f := facts(t, req); {
		case strings.Contains(f.LastUser, "stall"):
			return llmtest.Reply{Text: "never", Fault: llmtest.Stall}
		case strings.Contains(f.LastUser, "again"):
			return llmtest.Reply{Text: "the second answer"}
		}
		return llmtest.Reply{Text: "the first answer"}
	})
	ctx := context.Background()
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "work"})
	if done := h.wait(task.ID); done.Result != "the first answer" {
		t.Fatalf("first run = %+v", done)
	}

	if _, err := h.mgr.Resume(ctx, task.ID, "stall, please", ""); err != nil {
		t.Fatal(err)
	}
	cancelled, err := h.mgr.Cancel(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cancelled.Status != sa.TaskCancelled || cancelled.ResumeCount != 1 || cancelled.Result != "the first answer" {
		t.Fatalf("the cancelled resume = %+v: want cancelled, resume #1, the first answer kept", cancelled)
	}
	// Its ending is told once; a second cancel finds nothing to cancel.
	if _, err := h.mgr.Cancel(ctx, task.ID); !errors.Is(err, sa.ErrConflict) {
		t.Fatalf("second cancel = %v", err)
	}
	notes := h.notifications(parent.ID)
	if len(notes) != 2 || !strings.HasPrefix(notes[1].Text(), "⊘ Resume #1 cancelled") {
		t.Fatalf("notifications = %d, last %q: want one per ending", len(notes), notes[len(notes)-1].Text())
	}
	r, err := h.tools.OutputTool(ctx, parent.ID, tasktools.OutputInput{TaskID: task.ID})
	if err != nil || !strings.Contains(r.Text, "was cancelled") || !strings.Contains(r.Text, "can be resumed again") || !strings.HasSuffix(r.Text, "Result:\nthe first answer") {
		t.Fatalf("output of the cancelled resume = %q, %v", r.Text, err)
	}

	resumed, err := h.mgr.Resume(ctx, task.ID, "once again", "")
	if err != nil || resumed.ResumeCount != 2 {
		t.Fatalf("resume after the cancelled one = %+v, %v", resumed, err)
	}
	done := h.wait(task.ID)
	if done.Status != sa.TaskCompleted || done.Result != "the second answer" || done.ResumeCount != 2 {
		t.Fatalf("second resume = %+v", done)
	}
	if notes := h.notifications(parent.ID); len(notes) != 3 || !strings.HasPrefix(notes[2].Text(), "✓ Resume #2 completed") {
		t.Fatalf("notifications after the second resume = %d", len(notes))
	}
}

// TestCancelledFirstRunStaysUnresumable: a task cancelled before it ever
// answered has no answer to go on from, whatever the way in.
func TestCancelledFirstRunStaysUnresumable(t *testing.T) {
	h := newHarness(t, stalled(t))
	ctx := context.Background()
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{})
	if _, err := h.mgr.Cancel(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	// The store itself refuses it, not only Resume.
	_, err := h.store.UpdateTask(ctx, task.ID, func(tk *sa.Task) error {
		tk.Status, tk.ResumeCount = sa.TaskResumed, tk.ResumeCount+1
		return nil
	})
	if !errors.Is(err, sa.ErrConflict) {
		t.Fatalf("store update of a cancelled first run to resumed = %v, want a conflict", err)
	}
}
