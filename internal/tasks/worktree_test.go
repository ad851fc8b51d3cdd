package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/internal/tasktools"
)

// gitIn runs git in dir and returns its output, trimmed.
func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// initRepo makes the workspace a repository whose one commit holds
// shared.txt.
func initRepo(t testing.TB, dir string) {
	t.Helper()
	gitIn(t, dir, "init", "--quiet", "--initial-branch=main")
	if err := os.WriteFile(filepath.Join(dir, "shared.txt"), []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "shared.txt")
	gitIn(t, dir, "commit", "--quiet", "-m", "first")
}

// writer is a model whose tasks write what their prompt says: "write
// PATH TEXT" writes TEXT to PATH with the write tool, anything else
// answers at once.
func writer(t testing.TB) func(llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		f := facts(t, req)
		if !f.isChild() {
			return llmtest.Reply{Text: "parent"}
		}
		if f.LastTool != "" {
			return llmtest.Reply{Text: "done: " + f.LastTool}
		}
		fields := strings.Fields(f.LastUser)
		if len(fields) == 3 && fields[0] == "commit" {
			cmd := fmt.Sprintf("echo %s > %s && git add -A && git -c user.name=t -c user.email=t@example.com commit -q -m %s && echo committed", fields[2], fields[1], fields[2])
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall("bash", map[string]string{"command": cmd})}}
		}
		if len(fields) == 3 && fields[0] == "write" {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall("write", map[string]string{"path": fields[1], "content": fields[2] + "\n"})}}
		}
		return llmtest.Reply{Text: "nothing to do"}
	}
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// branches lists the workspace's task branches.
func branches(t testing.TB, ws string) string {
	return gitIn(t, ws, "branch", "--list", tasks.BranchPrefix+"*", "--format=%(refname:short)")
}

// TestWorktreeTasksWriteTheSameFile: two tasks launched at once (one of
// them forked) write the same file, each in its own worktree, and the
// user's checkout is untouched; each answer and notice names its branch
// and the file it changed.
func TestWorktreeTasksWriteTheSameFile(t *testing.T) {
	h := newHarness(t, writer(t))
	initRepo(t, h.ws)
	parent := h.parent(user("parent: hi"))
	a := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "write shared.txt from-a", Isolation: sa.IsolationWorktree})
	b := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "write shared.txt from-b", Isolation: sa.IsolationWorktree, Fork: true})
	for _, tc := range []struct {
		task sa.Task
		want string
	}{{a, "from-a\n"}, {b, "from-b\n"}} {
		w := tc.task.Worktree
		if w == nil || w.Branch != tasks.BranchPrefix+tc.task.ID[:sa.ShortIDLength] {
			t.Fatalf("task %s launched with worktree %+v, want a branch named after it", tc.task.ID, w)
		}
		ended := h.wait(tc.task.ID)
		if ended.Status != sa.TaskCompleted {
			t.Fatalf("task %s ended %s: %s", ended.ID, ended.Status, ended.Error)
		}
		if got := readFile(t, filepath.Join(w.Path, "shared.txt")); got != tc.want {
			t.Fatalf("worktree of %s holds %q, want %q", ended.ID, got, tc.want)
		}
		if ended.Worktree == nil || !strings.Contains(ended.Worktree.Changes, "shared.txt") || ended.Worktree.Removed {
			t.Fatalf("ended task's worktree record = %+v, want shared.txt among its changes", ended.Worktree)
		}
		out, err := h.tools.OutputTool(context.Background(), parent.ID, tasktools.OutputInput{TaskID: ended.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{w.Branch, w.Path, "shared.txt | 2 +-"} {
			if !strings.Contains(out.Text, want) {
				t.Fatalf("answer lacks %q:\n%s", want, out.Text)
			}
		}
	}
	if got := readFile(t, filepath.Join(h.ws, "shared.txt")); got != "original\n" {
		t.Fatalf("the user's checkout changed: shared.txt = %q", got)
	}
	if st := gitIn(t, h.ws, "status", "--porcelain"); st != "" {
		t.Fatalf("the user's checkout has changes:\n%s", st)
	}
	if a.Worktree.Path == b.Worktree.Path {
		t.Fatalf("both tasks work in %s", a.Worktree.Path)
	}
	var notices string
	for _, n := range h.notifications(parent.ID) {
		for _, p := range n.Parts {
			notices += p.Text + "\n"
		}
	}
	for _, want := range []string{a.Worktree.Branch, b.Worktree.Branch, "Branch " + a.Worktree.Branch + ", worktree " + a.Worktree.Path} {
		if !strings.Contains(notices, want) {
			t.Fatalf("notifications lack %q:\n%s", want, notices)
		}
	}
}

// TestWorktreeNothingChanged: a task that changed nothing leaves no
// worktree and no branch; a resume makes them again, at the same path.
func TestWorktreeNothingChanged(t *testing.T) {
	h := newHarness(t, writer(t))
	initRepo(t, h.ws)
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "look around", Isolation: sa.IsolationWorktree})
	ended := h.wait(task.ID)
	if ended.Worktree == nil || !ended.Worktree.Removed {
		t.Fatalf("worktree record = %+v, want it removed", ended.Worktree)
	}
	if exists(task.Worktree.Path) {
		t.Fatalf("worktree %s is still there", task.Worktree.Path)
	}
	if got := branches(t, h.ws); got != "" {
		t.Fatalf("branches left: %q", got)
	}
	out, err := h.tools.OutputTool(context.Background(), parent.ID, tasktools.OutputInput{TaskID: task.ID})
	if err != nil || !strings.Contains(out.Text, "changed no files") {
		t.Fatalf("answer = %q, %v; want it to say no files changed", out.Text, err)
	}

	if _, err := h.mgr.Resume(context.Background(), task.ID, "write later.txt now", ""); err != nil {
		t.Fatal(err)
	}
	ended = h.wait(task.ID)
	if got := readFile(t, filepath.Join(task.Worktree.Path, "later.txt")); got != "now\n" {
		t.Fatalf("resumed task wrote %q in its worktree", got)
	}
	if ended.Worktree.Removed || !strings.Contains(ended.Worktree.Changes, "later.txt") {
		t.Fatalf("worktree record after the resume = %+v", ended.Worktree)
	}
	if got := branches(t, h.ws); got != task.Worktree.Branch {
		t.Fatalf("branches = %q, want %s made again", got, task.Worktree.Branch)
	}
}

// TestWorktreeCommit: a task's commands run in its worktree, and git can
// commit there (the sandbox lets git write what a commit needs of the
// repository); the commit is on the task's branch, not the user's.
func TestWorktreeCommit(t *testing.T) {
	h := newHarness(t, writer(t))
	initRepo(t, h.ws)
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "commit done.txt finished", Isolation: sa.IsolationWorktree})
	ended := h.wait(task.ID)
	if ended.Status != sa.TaskCompleted || !strings.Contains(ended.Result, "committed") {
		t.Fatalf("task ended %s with %q, want its commit made", ended.Status, ended.Result)
	}
	if ended.Worktree.Commits != 1 || !strings.Contains(ended.Worktree.Changes, "done.txt") {
		t.Fatalf("worktree record = %+v, want one commit with done.txt", ended.Worktree)
	}
	if got := gitIn(t, h.ws, "log", "-1", "--format=%s", task.Worktree.Branch); got != "finished" {
		t.Fatalf("the branch's last commit is %q", got)
	}
	if got := gitIn(t, h.ws, "log", "-1", "--format=%s", "main"); got != "first" {
		t.Fatalf("the user's branch moved: its last commit is %q", got)
	}
}

// TestWorktreeResumeKeepsIt: a resumed task goes on in the worktree it
// left, with what it wrote there.
func TestWorktreeResumeKeepsIt(t *testing.T) {
	h := newHarness(t, writer(t))
	initRepo(t, h.ws)
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "write one.txt first", Isolation: sa.IsolationWorktree})
	h.wait(task.ID)
	if _, err := h.mgr.Resume(context.Background(), task.ID, "write two.txt second", ""); err != nil {
		t.Fatal(err)
	}
	ended := h.wait(task.ID)
	if ended.Worktree.Path != task.Worktree.Path || ended.Worktree.Branch != task.Worktree.Branch {
		t.Fatalf("worktree moved: %+v, was %+v", ended.Worktree, task.Worktree)
	}
	for _, name := range []string{"one.txt", "two.txt"} {
		if !exists(filepath.Join(task.Worktree.Path, name)) || !strings.Contains(ended.Worktree.Changes, name) {
			t.Fatalf("%s missing from the worktree or its changes: %+v", name, ended.Worktree)
		}
	}
}

// TestWorktreeClearAndDelete: superagents_clear and the deletion of the
// parent session remove the worktrees; a branch with work is kept, its
// uncommitted files in a work-in-progress commit, and one without is
// removed.
func TestWorktreeClearAndDelete(t *testing.T) {
	tests := []struct {
		name  string
		letGo func(h *harness, parent string) string // the clear's answer, if any
	}{
		{"clear", func(h *harness, parent string) string {
			r, err := h.tools.ClearTool(context.Background(), parent)
			if err != nil {
				h.t.Fatal(err)
			}
			return r.Text
		}},
		{"delete", func(h *harness, parent string) string {
			if err := h.stack.Runtime.Sessions().Delete(context.Background(), parent); err != nil {
				h.t.Fatal(err)
			}
			return ""
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, writer(t))
			initRepo(t, h.ws)
			parent := h.parent(user("parent: hi"))
			worked := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "write result.txt kept", Isolation: sa.IsolationWorktree})
			h.wait(worked.ID)
			// Still there after the run, unlike an idle task's.
			if !exists(worked.Worktree.Path) {
				t.Fatalf("worktree of a task that wrote is gone")
			}
			// One whose files are its base's again, with the branch left by
			// hand: let go, it leaves nothing.
			idle := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "write shared.txt original", Isolation: sa.IsolationWorktree})
			h.wait(idle.ID)
			answer := tt.letGo(h, parent.ID)
			if tt.name == "clear" && !strings.Contains(answer, worked.Worktree.Branch) {
				t.Fatalf("clear's answer does not name the kept branch:\n%s", answer)
			}
			for _, w := range []*sa.TaskWorktree{worked.Worktree, idle.Worktree} {
				if exists(w.Path) {
					t.Fatalf("worktree %s is still there", w.Path)
				}
			}
			if got := branches(t, h.ws); got != worked.Worktree.Branch {
				t.Fatalf("branches = %q, want only %s", got, worked.Worktree.Branch)
			}
			if got := gitIn(t, h.ws, "show", worked.Worktree.Branch+":result.txt"); got != "kept" {
				t.Fatalf("the kept branch holds %q", got)
			}
			if msg := gitIn(t, h.ws, "log", "-1", "--format=%s", worked.Worktree.Branch); !strings.Contains(msg, "work in progress") {
				t.Fatalf("the branch's last commit is %q, want a work-in-progress commit", msg)
			}
			if wts := gitIn(t, h.ws, "worktree", "list"); strings.Count(wts, "\n") != 0 {
				t.Fatalf("git still lists worktrees:\n%s", wts)
			}
		})
	}
}

// TestWorktreeRefused: a launch with worktree isolation where there is no
// repository, or an isolation nobody knows, is refused with a clear error
// and leaves nothing.
func TestWorktreeRefused(t *testing.T) {
	h := newHarness(t, writer(t))
	parent := h.parent(user("parent: hi"))
	tests := []struct {
		name string
		in   tasktools.TaskInput
		want string
	}{
		{"not a repository", tasktools.TaskInput{Isolation: "worktree"}, "is not inside a git repository"},
		{"unknown isolation", tasktools.TaskInput{Isolation: "container"}, `isolation "container" is unknown`},
		{"with a resume", tasktools.TaskInput{Isolation: "worktree", Resume: "abcd"}, "isolation applies to a launch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Description, in.Prompt, in.Agent = "isolated", "write a.txt x", "general"
			_, err := h.tools.TaskTool(context.Background(), parent.ID, in)
			if !errors.Is(err, sa.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want an invalid-input error saying %q", err, tt.want)
			}
		})
	}
	list, err := h.store.ListTasks(context.Background(), sa.TaskFilter{ParentSessionID: parent.ID})
	if err != nil || len(list) != 0 {
		t.Fatalf("refused launches left tasks: %v %v", list, err)
	}
}

// TestWorktreeProfileDefault: an agent profile that asks for worktree
// isolation gets it for the tasks launched without one, and the tasks its
// task launches without isolation work in that worktree too.
func TestWorktreeProfileDefault(t *testing.T) {
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		f := facts(t, req)
		if strings.HasPrefix(f.LastUser, "delegate") && f.LastTool == "" {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(sa.TaskTool, tasktools.TaskInput{
				Description: "nested", Prompt: "write nested.txt inner", Agent: "general"})}}
		}
		if f.LastName == sa.TaskTool {
			return llmtest.Reply{Text: "launched"}
		}
		return writer(t)(req)
	}, func(h *harness) {
		dir := filepath.Join(h.ws, ".superagents", "agents")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		profile := "---\ndescription: Works apart.\nisolation: worktree\n---\nYou work apart.\n"
		if err := os.WriteFile(filepath.Join(dir, "apart.md"), []byte(profile), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	initRepo(t, h.ws)
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Agent: "apart", Prompt: "delegate"})
	if task.Worktree == nil {
		t.Fatal("a task of an agent whose profile asks for a worktree has none")
	}
	ended := h.wait(task.ID)
	nested, err := h.store.ListTasks(context.Background(), sa.TaskFilter{ParentSessionID: task.ID, IncludeCleared: true})
	if err != nil || len(nested) != 1 {
		t.Fatalf("nested tasks = %v, %v", nested, err)
	}
	if nested[0].Worktree != nil {
		t.Fatalf("the nested task got a worktree of its own: %+v", nested[0].Worktree)
	}
	if got := readFile(t, filepath.Join(task.Worktree.Path, "nested.txt")); got != "inner\n" {
		t.Fatalf("nested task wrote %q in its launcher's worktree", got)
	}
	if exists(filepath.Join(h.ws, "nested.txt")) {
		t.Fatal("the nested task wrote in the user's checkout")
	}
	if !strings.Contains(ended.Worktree.Changes, "nested.txt") {
		t.Fatalf("the worktree's changes lack the nested task's file: %+v", ended.Worktree)
	}
}

// TestWorktreeFromWorktree: a task in a worktree that launches one with a
// worktree of its own gives it one from its own HEAD, in the same
// repository.
func TestWorktreeFromWorktree(t *testing.T) {
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		f := facts(t, req)
		if strings.HasPrefix(f.LastUser, "delegate") && f.LastTool == "" {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(sa.TaskTool, tasktools.TaskInput{
				Description: "nested", Prompt: "write inner.txt inner", Agent: "general", Isolation: sa.IsolationWorktree})}}
		}
		if f.LastName == sa.TaskTool {
			return llmtest.Reply{Text: "launched"}
		}
		return writer(t)(req)
	})
	initRepo(t, h.ws)
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "delegate", Isolation: sa.IsolationWorktree})
	h.wait(task.ID)
	nested, err := h.store.ListTasks(context.Background(), sa.TaskFilter{ParentSessionID: task.ID, IncludeCleared: true})
	if err != nil || len(nested) != 1 {
		t.Fatalf("nested tasks = %v, %v", nested, err)
	}
	inner := h.wait(nested[0].ID)
	w := inner.Worktree
	if w == nil || w.Repo != task.Worktree.Repo || w.Base != task.Worktree.Base || w.Path == task.Worktree.Path {
		t.Fatalf("the nested task's worktree is %+v, want one of its own in %s from %s", w, task.Worktree.Repo, task.Worktree.Base)
	}
	if got := readFile(t, filepath.Join(w.Path, "inner.txt")); got != "inner\n" {
		t.Fatalf("nested task wrote %q in its worktree", got)
	}
	if exists(filepath.Join(task.Worktree.Path, "inner.txt")) || exists(filepath.Join(h.ws, "inner.txt")) {
		t.Fatal("the nested task wrote outside its worktree")
	}
}
