package taskqueue_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/stacktest"
)

// TestWorktreeTaskOnAnotherNode: a task launched with worktree isolation
// on one node and run by another on the same machine works in the
// worktree recorded with it, not in the workspace the other node was
// started in, and a resume there goes on in the same worktree.
func TestWorktreeTaskOnAnotherNode(t *testing.T) {
	c := newCluster(t)
	for _, args := range [][]string{{"init", "--quiet"}, {"add", "a.txt"}, {"commit", "--quiet", "-m", "first"}} {
		if args[0] == "add" {
			if err := os.WriteFile(filepath.Join(c.workspace, "a.txt"), []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("git", append([]string{"-C", c.workspace, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// Each prompt "write NAME" writes NAME with the write tool.
	c.model.Handle(func(req llmtest.Request) llmtest.Reply {
		body := string(req.Body)
		if strings.Count(body, `"tool_result"`) > strings.Count(body, "write second") {
			return llmtest.Reply{Text: "written"}
		}
		name := "first.txt"
		if strings.Contains(body, "write second") {
			name = "second.txt"
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{stacktest.ToolCall("write", map[string]string{"path": name, "content": "x\n"})}}
	})
	launcher := c.open(t, false)
	elsewhere := *c
	elsewhere.workspace = t.TempDir() // a node started in another directory
	elsewhere.open(t, true)           // the only node that works the queue: it runs the task

	ctx := context.Background()
	parent := launcher.session(t)
	task, _, err := launcher.rt.Tasks().Submit(ctx, runtime.TaskRequest{Parent: parent.ID, Description: "apart",
		Prompt: "write first", Agent: "general", Isolation: sa.IsolationWorktree})
	if err != nil {
		t.Fatal(err)
	}
	if task.Worktree == nil {
		t.Fatal("launched without its worktree")
	}
	out, err := launcher.rt.Tasks().Output(ctx, task.ID, true, time.Minute)
	if err != nil || out.Task.Status != sa.TaskCompleted {
		t.Fatalf("task: %+v, %v", out.Task, err)
	}
	if out.Task.Worktree == nil || !strings.Contains(out.Task.Worktree.Changes, "first.txt") {
		t.Fatalf("ended task's worktree = %+v, want first.txt among its changes", out.Task.Worktree)
	}
	if _, _, err := launcher.rt.Tasks().Submit(ctx, runtime.TaskRequest{Resume: task.ID, Prompt: "write second"}); err != nil {
		t.Fatal(err)
	}
	out, err = launcher.rt.Tasks().Output(ctx, task.ID, true, time.Minute)
	if err != nil || out.Task.Status != sa.TaskCompleted {
		t.Fatalf("resumed task: %+v, %v", out.Task, err)
	}
	for _, name := range []string{"first.txt", "second.txt"} {
		if _, err := os.Stat(filepath.Join(task.Worktree.Path, name)); err != nil {
			t.Fatalf("%s not in the recorded worktree: %v", name, err)
		}
		for _, dir := range []string{c.workspace, elsewhere.workspace} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Fatalf("%s written in %s, not in the task's worktree", name, dir)
			}
		}
	}
}
