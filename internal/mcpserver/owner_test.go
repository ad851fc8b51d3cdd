package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/tasks"
)

// TestClientCannotReachAnothersTasks: a client finds only the tasks it
// launched, and those they launched. Another client's task, by id or by
// prefix, is not found, whatever the tool (output, cancel or resume), and
// is left untouched; the answer says that it belongs to another
// conversation or connection and where it can be read, which an id that
// no task has does not.
func TestClientCannotReachAnothersTasks(t *testing.T) {
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			h := newHarness(t, fakeModel)
			alpha := h.connect(transport, "alpha", "1.0")
			beta := h.connect(transport, "beta", "2.0")
			done := alpha.launch(map[string]any{"description": "sum", "prompt": "What is 2+2?"})
			alpha.notification()
			slow := alpha.launch(map[string]any{"description": "slow", "prompt": "please stall"})
			// A task that alpha's first task launched is alpha's too.
			sub, err := h.mgr.Launch(context.Background(), tasks.LaunchRequest{ParentSessionID: done, Description: "sub", Prompt: "What is 2+2?", Agent: "general"})
			if err != nil {
				t.Fatal(err)
			}
			h.stack.WaitTask(t, sub.ID) // reads its result

			for _, ref := range []string{done, done[:8], slow, sub.ID, sub.ID[:6] + "..."} {
				unknown := strings.Repeat("z", len(strings.TrimSuffix(ref, "..."))) + ref[len(strings.TrimSuffix(ref, "...")):]
				for _, call := range []struct {
					tool string
					args func(ref string) map[string]any
				}{
					{"superagents_output", func(ref string) map[string]any { return map[string]any{"task_id": ref} }},
					{"superagents_cancel", func(ref string) map[string]any { return map[string]any{"task_id": ref} }},
					{"superagents_task", func(ref string) map[string]any { return map[string]any{"resume": ref, "prompt": "What is 3+3?"} }},
				} {
					got := beta.fails(call.tool, call.args(ref))
					if !strings.HasPrefix(got, "no task with id "+ref+" in this conversation") || !strings.Contains(got, "another conversation") ||
						!strings.Contains(got, "superagents task output ") {
						t.Errorf("%s of alpha's %s by beta = %q, want not found in this conversation, and where to read it", call.tool, ref, got)
					}
					if none := beta.fails(call.tool, call.args(unknown)); none != "no task with id "+unknown {
						t.Errorf("%s of unknown %s = %q", call.tool, unknown, none)
					}
				}
			}
			for id, want := range map[string]sa.TaskStatus{done: sa.TaskCompleted, slow: sa.TaskRunning, sub.ID: sa.TaskCompleted} {
				if got, err := h.store.Task(context.Background(), id); err != nil || got.Status != want || got.ResumeCount != 0 || id == done && got.ResultRetrievedAt != nil {
					t.Errorf("after beta's calls task %s = %+v, %v; want it %s and untouched", id, got, err, want)
				}
			}

			// Alpha reaches all three.
			if text, _ := alpha.ok("superagents_output", map[string]any{"task_id": sub.ID[:8]}); !strings.HasSuffix(text, "2+2 equals 4.") {
				t.Errorf("alpha's output of its task's task = %q", text)
			}
			if _, data := alpha.ok("superagents_cancel", map[string]any{"task_id": slow}); data["status"] != "cancelled" {
				t.Errorf("alpha's cancel = %v", data)
			}
			alpha.notification()
			if text, _ := alpha.ok("superagents_task", map[string]any{"resume": done, "prompt": "What is 3+3?"}); !strings.Contains(text, "resume #1") {
				t.Errorf("alpha's resume = %q", text)
			}
			alpha.notification()
		})
	}
}

// TestOwnedPrefix: a prefix several clients' tasks share finds the
// client's own task when only one of its tasks has it, and is ambiguous
// among the client's tasks alone when several do.
func TestOwnedPrefix(t *testing.T) {
	n := 0
	h := newHarness(t, fakeModel, sqlite.WithIDGenerator(func() string {
		n++
		return fmt.Sprintf("abcd%012d", n)
	}))
	alpha := h.connect(inMemory, "alpha", "1.0")
	beta := h.connect(inMemory, "beta", "1.0")
	a1 := alpha.launch(map[string]any{"description": "a1", "prompt": "What is 2+2?"})
	alpha.notification()
	b1 := beta.launch(map[string]any{"description": "b1", "prompt": "What is 2+2?"})
	beta.notification()
	if _, data := beta.ok("superagents_output", map[string]any{"task_id": "abcd"}); data["id"] != b1 {
		t.Fatalf("beta's output of abcd = %v, want its one task %s", data, b1)
	}
	a2 := alpha.launch(map[string]any{"description": "a2", "prompt": "What is 2+2?"})
	alpha.notification()
	msg := alpha.fails("superagents_output", map[string]any{"task_id": "abcd"})
	if !strings.Contains(msg, "ambiguous") || !strings.Contains(msg, a1) || !strings.Contains(msg, a2) || strings.Contains(msg, b1) {
		t.Fatalf("alpha's output of abcd = %q: want ambiguous among %s and %s only", msg, a1, a2)
	}
}
