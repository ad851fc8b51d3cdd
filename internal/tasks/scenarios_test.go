package tasks_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/internal/tasktools"
)

var taskIDRE = regexp.MustCompile(`Task ([0-9a-z]{16})`)

// TestForkedTaskEndToEnd: a parent model calls superagents_task with fork,
// then superagents_output with block; the child's request holds the
// preamble, the digest and the prompt (and none of the parent's
// reasoning), and the parent receives the child's answer.
func TestForkedTaskEndToEnd(t *testing.T) {
	var mu sync.Mutex
	var childReqs []requestFacts
	h := newHarness(t, nil)
	h.srv.Handle(func(req llmtest.Request) llmtest.Reply {
		f := facts(t, req)
		if f.isChild() {
			mu.Lock()
			childReqs = append(childReqs, f)
			mu.Unlock()
			return llmtest.Reply{Text: "The port is 8080."}
		}
		switch f.LastName {
		case sa.TaskTool:
			id := taskIDRE.FindStringSubmatch(f.LastTool)
			if id == nil {
				return llmtest.Reply{Text: "launch failed: " + f.LastTool}
			}
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(sa.OutputTool, map[string]any{"task_id": id[1], "block": true, "timeout": 60})}}
		case sa.OutputTool:
			return llmtest.Reply{Text: "The child found: " + f.LastTool[strings.Index(f.LastTool, "Result:\n")+8:]}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(sa.TaskTool, map[string]any{
			"description": "find the port", "prompt": "Find the port in config.go", "agent": "explore", "fork": true})}}
	})
	parent := h.parent(
		user("parent: What is in config.go?"),
		sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{
			{Type: sa.PartReasoning, Text: "secret parent reasoning"},
			sa.TextPart("Let me read it."),
			{Type: sa.PartToolCall, CallID: "r1", Name: "read", Input: []byte(`{"path":"config.go"}`)},
		}},
		sa.Message{Role: sa.RoleTool, Parts: []sa.Part{{Type: sa.PartToolResult, CallID: "r1", Name: "read", Output: "port := 8080"}}},
		assistant("It sets the port."),
	)
	out, err := h.eng.Run(context.Background(), parent.ID, engine.TurnOptions{}, user("Find it again in the background."))
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "The child found: The port is 8080." {
		t.Fatalf("parent's answer = %q", out.Text)
	}
	if len(childReqs) != 1 {
		t.Fatalf("the child model was called %d times, want 1", len(childReqs))
	}
	child := childReqs[0]
	for _, want := range []string{"forked from a parent agent", "User: parent: What is in config.go?", `[Tool: read] {"path":"config.go"}`, "port := 8080", "Agent: It sets the port."} {
		if !strings.Contains(child.System, want) {
			t.Errorf("the child's context lacks %q:\n%s", want, child.System)
		}
	}
	if child.LastUser != "Find the port in config.go" {
		t.Errorf("the child's prompt = %q", child.LastUser)
	}
	if strings.Contains(child.System+strings.Join(child.Texts, "\n"), "secret parent reasoning") {
		t.Error("the parent's reasoning reached the child")
	}
	list, err := h.mgr.List(context.Background(), parent.ID, "")
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %v, %v", list, err)
	}
	task := list[0]
	if !task.IsForked || task.Status != sa.TaskCompleted || task.ResultRetrievedAt == nil || task.Result != "The port is 8080." {
		t.Fatalf("task = %+v", task)
	}
	sess, err := h.store.Session(context.Background(), task.ID)
	if err != nil || sess.ParentID != parent.ID {
		t.Fatalf("the task's session %+v is not linked to the parent as a fork (%v)", sess, err)
	}
}

// stalled answers every child request by stalling, so tasks stay running
// until cancelled; parent requests get plain text.
func stalled(t *testing.T) func(req llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		if facts(t, req).isChild() {
			return llmtest.Reply{Text: "never", Fault: llmtest.Stall}
		}
		return llmtest.Reply{Text: "ok"}
	}
}

// echo answers a child with its prompt, at once.
func echo(t *testing.T) func(req llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		f := facts(t, req)
		return llmtest.Reply{Text: "done: " + f.LastUser}
	}
}

// TestLaunchForkedBackgroundTask (TASK-LAUNCH-1, FORK-PIPE-1,
// FORK-PREAMBLE-1): a forked launch returns at once; the child's session
// opens with the preamble and digest, then the prompt.
func TestLaunchForkedBackgroundTask(t *testing.T) {
	h := newHarness(t, stalled(t))
	parent := h.parent(user("parent: Q1"), assistant("A1"))
	start := time.Now()
	task := h.launch(parent.ID, tasks.LaunchRequest{Fork: true, Prompt: "look around"})
	if !task.IsForked || !task.Status.Active() || task.ID == "" {
		t.Fatalf("task = %+v", task)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("Launch did not return at once")
	}
	// The child session: linked to the parent (one row), its context
	// starting at the preamble and digest, then the prompt.
	hist, err := h.store.History(context.Background(), task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) < 2 || hist[0].Role != sa.RoleSystem || !strings.Contains(hist[0].Text(), "User: parent: Q1") || hist[1].Text() != "look around" {
		t.Fatalf("child history = %+v", hist)
	}
	if _, err := h.mgr.Cancel(context.Background(), task.ID); err != nil {
		t.Fatal(err)
	}
}

// TestForkWithContextTruncation (FORK-PIPE-3): a cut result keeps
// its call's structure and says its original length.
func TestForkWithContextTruncation(t *testing.T) {
	h := newHarness(t, echo(t))
	big := strings.Repeat("log line that goes on\n", 400) // ~8,800 characters
	msgs := []sa.Message{user("parent: check the logs")}
	// Six results: the oldest falls in tier 2 and is cut to 3,000.
	for i := range 6 {
		id := string(rune('a' + i))
		msgs = append(msgs,
			sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{{Type: sa.PartToolCall, CallID: id, Name: "read", Input: []byte(`{"path":"app.log"}`)}}},
			sa.Message{Role: sa.RoleTool, Parts: []sa.Part{{Type: sa.PartToolResult, CallID: id, Name: "read", Output: big}}})
	}
	parent := h.parent(msgs...)
	task := h.launch(parent.ID, tasks.LaunchRequest{Fork: true})
	h.wait(task.ID)
	hist, _ := h.store.History(context.Background(), task.ID)
	digest := hist[0].Text()
	if !strings.Contains(digest, `[Tool: read] {"path":"app.log"}`) {
		t.Fatal("the tool call's structure is not kept")
	}
	if !strings.Contains(digest, "of 8800 characters") {
		t.Fatalf("no original-length indicator in the digest:\n%.3000s", digest)
	}
}

// TestForkWithTokenLimitEnforcement (FORK-PIPE-8): over the token
// cap the oldest messages go, the newest stays.
func TestForkWithTokenLimitEnforcement(t *testing.T) {
	h := newHarness(t, echo(t), withFork(func(c *config.Config) { c.Fork.MaxTokens = 300 }))
	var msgs []sa.Message
	for i := range 40 {
		msgs = append(msgs, user("parent: question number "+strings.Repeat("x", 40)+string(rune('A'+i%26))), assistant("answer"))
	}
	msgs = append(msgs, user("parent: the most recent question"))
	parent := h.parent(msgs...)
	task := h.launch(parent.ID, tasks.LaunchRequest{Fork: true})
	h.wait(task.ID)
	hist, _ := h.store.History(context.Background(), task.ID)
	digest := hist[0].Text()
	if !strings.Contains(digest, "the most recent question") {
		t.Fatal("the most recent message was not kept")
	}
	if strings.Count(digest, "question number") >= 40 {
		t.Fatal("no old message was removed")
	}
	if !strings.Contains(digest, "Removed messages:") || !strings.Contains(digest, "300 tokens") {
		t.Fatalf("the preamble does not say what was removed and why:\n%s", digest)
	}
}

// TestRejectForkWithResume (TASK-LAUNCH-3): fork with resume is
// refused and changes nothing.
func TestRejectForkWithResume(t *testing.T) {
	h := newHarness(t, echo(t))
	parent := h.parent(user("parent: hi"))
	done := h.launch(parent.ID, tasks.LaunchRequest{})
	h.wait(done.ID)
	sessionsBefore, _ := h.store.ListSessions(context.Background(), sa.SessionFilter{})
	_, err := h.tools.TaskTool(context.Background(), parent.ID, tasktools.TaskInput{Prompt: "x", Fork: true, Resume: done.ID})
	if !errors.Is(err, sa.ErrInvalid) || !strings.Contains(err.Error(), "mutually exclusive") {
		t.Fatalf("fork with resume = %v", err)
	}
	sessionsAfter, _ := h.store.ListSessions(context.Background(), sa.SessionFilter{})
	list, _ := h.mgr.List(context.Background(), parent.ID, "")
	if len(sessionsAfter) != len(sessionsBefore) || len(list) != 1 || list[0].ResumeCount != 0 {
		t.Fatal("a rejected fork+resume created or changed something")
	}
}

// TestPreambleAndPipeline (FORK-PIPE-2, FORK-PREAMBLE-1): a forked
// task's digest starts at the latest compaction summary.
func TestPreambleAndPipeline(t *testing.T) {
	h := newHarness(t, echo(t))
	parent := h.parent(
		user("parent: old question"),
		assistant("old answer"),
		sa.Message{Role: sa.RoleUser, Parts: []sa.Part{{Type: sa.PartCompaction}}},
		sa.Message{Role: sa.RoleAssistant, Summary: true, Parts: []sa.Part{sa.TextPart("Summary: we looked at the old question.")}},
		user("parent: new question"),
	)
	task := h.launch(parent.ID, tasks.LaunchRequest{Fork: true})
	h.wait(task.ID)
	hist, _ := h.store.History(context.Background(), task.ID)
	digest := hist[0].Text()
	for _, want := range []string{"compacted", "Summary: we looked at the old question.", "User: parent: new question", "read the file", "Tool results"} {
		if !strings.Contains(digest, want) {
			t.Errorf("the child's first message lacks %q", want)
		}
	}
	if strings.Contains(digest, "old answer") {
		t.Error("messages before the compaction boundary reached the child")
	}
}

// TestRetrieveCompletedTaskResults (TASK-OUTPUT-1): a completed
// task's result, at once, marked as read.
func TestRetrieveCompletedTaskResults(t *testing.T) {
	h := newHarness(t, echo(t))
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "count to three"})
	h.wait(task.ID)
	out, err := h.mgr.Output(context.Background(), task.ID, false, 0)
	if err != nil {
		t.Fatal(err)
	}
	if out.Task.Status != sa.TaskCompleted || out.Task.Result != "done: count to three" || out.Task.ResultRetrievedAt == nil {
		t.Fatalf("output = %+v", out.Task)
	}
	r, _ := h.tools.OutputTool(context.Background(), parent.ID, tasktools.OutputInput{TaskID: task.ID[:6]})
	if !strings.Contains(r.Text, "completed") || !strings.Contains(r.Text, "done: count to three") {
		t.Fatalf("output text = %q", r.Text)
	}
}

// TestCheckRunningTaskStatus (TASK-OUTPUT-2): a running task's
// status and progress, at once.
func TestCheckRunningTaskStatus(t *testing.T) {
	h := newHarness(t, stalled(t))
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Description: "slow one"})
	start := time.Now()
	r, err := h.tools.OutputTool(context.Background(), parent.ID, tasktools.OutputInput{TaskID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("a non-blocking output waited")
	}
	if !strings.Contains(r.Text, `"slow one"`) || !strings.Contains(r.Text, "elapsed") || !strings.Contains(r.Text, "tool call") {
		t.Fatalf("running status = %q: want status, elapsed time and tool calls", r.Text)
	}
	if _, err := h.mgr.Cancel(context.Background(), task.ID); err != nil {
		t.Fatal(err)
	}
}

// TestTaskPersistence (TASK-PERSIST-1, TASK-CLEAR-1): tasks last
// across restarts until cleared or their parent is deleted.
func TestTaskPersistence(t *testing.T) {
	h := newHarness(t, echo(t))
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{})
	h.wait(task.ID)
	// Persists across a restart...
	h.close()
	h.open()
	list, err := h.mgr.List(context.Background(), parent.ID, "")
	if err != nil || len(list) != 1 || list[0].ID != task.ID {
		t.Fatalf("after a restart: %v, %v", list, err)
	}
	// ...until cleared...
	r, err := h.tools.ClearTool(context.Background(), parent.ID)
	if err != nil || !strings.Contains(r.Text, "Cleared 1 task") {
		t.Fatalf("clear = %q, %v", r.Text, err)
	}
	if r, _ := h.tools.ListTool(context.Background(), parent.ID, tasktools.ListInput{}); r.Text != "No background tasks found" {
		t.Fatalf("list after clear = %q", r.Text)
	}
	if _, err := h.store.Session(context.Background(), task.ID); err != nil {
		t.Fatal("clearing removed the task's session")
	}
	// ...or until the parent session is deleted.
	other := h.parent(user("parent: again"))
	t2 := h.launch(other.ID, tasks.LaunchRequest{})
	h.wait(t2.ID)
	if err := h.store.DeleteSession(context.Background(), other.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := h.store.ListTasks(context.Background(), sa.TaskFilter{ParentSessionID: other.ID}); len(list) != 0 {
		t.Fatal("tasks of a deleted parent are still listed")
	}
}

// resumable launches a task whose model remembers what it was told.
func resumable(t *testing.T) func(req llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		f := facts(t, req)
		return llmtest.Reply{Text: "I have seen: " + strings.Join(f.Texts, " | ")}
	}
}

// TestResumeCompletedTask (TASK-RESUME-1): a resume sees the task's
// whole conversation, then the follow-up.
func TestResumeCompletedTask(t *testing.T) {
	h := newHarness(t, resumable(t))
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "first instruction"})
	h.wait(task.ID)
	r, err := h.tools.TaskTool(context.Background(), parent.ID, tasktools.TaskInput{Resume: task.ID[:8], Prompt: "the follow-up"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Text, "resume #1") {
		t.Fatalf("resume reply = %q", r.Text)
	}
	ended := h.wait(task.ID)
	if ended.Status != sa.TaskCompleted || ended.ResumeCount != 1 {
		t.Fatalf("after resume: %+v", ended)
	}
	// The child saw its whole conversation, then the follow-up.
	for _, want := range []string{"first instruction", "I have seen: first instruction", "the follow-up"} {
		if !strings.Contains(ended.Result, want) {
			t.Fatalf("the resumed child saw %q: lacks %q", ended.Result, want)
		}
	}
}

// TestResumeCompletionNotification (TASK-RESUME-2): a resume's
// ending notifies the parent with the full response.
func TestResumeCompletionNotification(t *testing.T) {
	h := newHarness(t, resumable(t))
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{})
	h.wait(task.ID)
	// The first launch began an hour ago: the resume's duration counts
	// from the resume, not from then.
	_, err := h.store.UpdateTask(context.Background(), task.ID, func(tk *sa.Task) error {
		tk.StartedAt = tk.StartedAt.Add(-time.Hour)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.mgr.Resume(context.Background(), task.ID, "more please", ""); err != nil {
		t.Fatal(err)
	}
	ended := h.wait(task.ID)
	notes := h.notifications(parent.ID)
	if len(notes) != 2 {
		t.Fatalf("%d notifications, want 2 (launch and resume)", len(notes))
	}
	last := notes[1]
	if !regexp.MustCompile(`^✓ Resume #1 completed in \d+s\.`).MatchString(last.Text()) {
		t.Fatalf("resume notification = %q: want the resume's own duration, seconds", last.Text())
	}
	if !strings.Contains(last.Parts[1].Text, ended.Result) || !last.Parts[1].Hidden {
		t.Fatalf("the resume notification's hidden part does not carry the full response: %q", last.Parts[1].Text)
	}
}

// TestWaitForResumeResponse (TASK-OUTPUT-3): a blocking output waits
// for a resume's answer.
func TestWaitForResumeResponse(t *testing.T) {
	var mu sync.Mutex
	release := make(chan struct{})
	calls := 0
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 2 {
			<-release // the resume's answer comes late
		}
		return llmtest.Reply{Text: "answer " + string(rune('0'+n))}
	})
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{})
	h.wait(task.ID)
	if _, err := h.mgr.Resume(context.Background(), task.ID, "again", ""); err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(200 * time.Millisecond); close(release) }()
	r, err := h.tools.OutputTool(context.Background(), parent.ID, tasktools.OutputInput{TaskID: task.ID, Block: true, Timeout: 60})
	if err != nil || !strings.Contains(r.Text, "answer 2") || !strings.Contains(r.Text, "resume #1") {
		t.Fatalf("blocking output = %q, %v", r.Text, err)
	}
}

// TestRejectResumeOfNonCompletedTask (TASK-RESUME-3): only completed
// tasks can be resumed.
func TestRejectResumeOfNonCompletedTask(t *testing.T) {
	h := newHarness(t, stalled(t))
	parent := h.parent(user("parent: hi"))
	running := h.launch(parent.ID, tasks.LaunchRequest{})
	_, err := h.mgr.Resume(context.Background(), running.ID, "more", "")
	if !errors.Is(err, sa.ErrConflict) || !strings.Contains(err.Error(), "only completed tasks can be resumed") {
		t.Fatalf("resume of a running task = %v", err)
	}
	h.mgr.Cancel(context.Background(), running.ID)
	_, err = h.mgr.Resume(context.Background(), running.ID, "more", "")
	if err == nil || !strings.Contains(err.Error(), "only completed tasks can be resumed") {
		t.Fatalf("resume of a cancelled task = %v", err)
	}
}

// TestRejectConcurrentResume (TASK-RESUME-4): a task being resumed
// refuses a second resume.
func TestRejectConcurrentResume(t *testing.T) {
	calls := 0
	var mu sync.Mutex
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n > 1 {
			return llmtest.Reply{Text: "slow", Fault: llmtest.Stall}
		}
		return llmtest.Reply{Text: "first"}
	})
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{})
	h.wait(task.ID)
	if _, err := h.mgr.Resume(context.Background(), task.ID, "one", ""); err != nil {
		t.Fatal(err)
	}
	_, err := h.mgr.Resume(context.Background(), task.ID, "two", "")
	if !errors.Is(err, sa.ErrConflict) || !strings.Contains(err.Error(), "currently being resumed") {
		t.Fatalf("second resume = %v", err)
	}
	h.mgr.Cancel(context.Background(), task.ID)
}

// TestHandleExpiredSessionOnResume (TASK-RESUME-5): an expired task
// says to start a new superagents_task.
func TestHandleExpiredSessionOnResume(t *testing.T) {
	tests := []struct {
		name   string
		expire func(h *harness, parent sa.Session, task sa.Task)
		want   string
	}{
		{"the task's session deleted", func(h *harness, _ sa.Session, task sa.Task) {
			if err := h.store.DeleteSession(context.Background(), task.ID); err != nil {
				t.Fatal(err)
			}
		}, "no longer exists"},
		// TASK-PERSIST-1: a task lasts until cleared or
		// until its parent session is deleted.
		{"cleared by its parent", func(h *harness, parent sa.Session, _ sa.Task) {
			if _, _, _, err := h.mgr.Clear(context.Background(), parent.ID); err != nil {
				t.Fatal(err)
			}
		}, "was cleared"},
		{"the parent session deleted", func(h *harness, parent sa.Session, _ sa.Task) {
			if err := h.store.DeleteSession(context.Background(), parent.ID); err != nil {
				t.Fatal(err)
			}
		}, "was cleared"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, echo(t))
			parent := h.parent(user("parent: hi"))
			task := h.launch(parent.ID, tasks.LaunchRequest{})
			h.wait(task.ID)
			tt.expire(h, parent, task)
			_, err := h.mgr.Resume(context.Background(), task.ID, "more", "")
			if !errors.Is(err, sa.ErrExpired) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "start a new superagents_task") {
				t.Fatalf("resume = %v: want an expired-task error saying %q and to start a new superagents_task", err, tt.want)
			}
			if strings.Contains(err.Error(), "update task") {
				t.Fatalf("resume = %q: want the reason alone", err)
			}
			if got, _ := h.store.Task(context.Background(), task.ID); got.Status != sa.TaskCompleted || got.ResumeCount != 0 {
				t.Fatalf("after a refused resume the task is %s, resumed %d times: want it unchanged", got.Status, got.ResumeCount)
			}
		})
	}
}

// TestListIndicatorsAndFilter (TASK-LIST-1, TASK-LIST-2,
// TASK-LAUNCH-6): the session's own tasks, with their indicators.
func TestListIndicatorsAndFilter(t *testing.T) {
	h := newHarness(t, echo(t))
	parent := h.parent(user("parent: hi"))
	plain := h.launch(parent.ID, tasks.LaunchRequest{Description: "plain"})
	forked := h.launch(parent.ID, tasks.LaunchRequest{Description: "forked", Fork: true})
	h.wait(plain.ID)
	h.wait(forked.ID)
	if _, err := h.mgr.Resume(context.Background(), forked.ID, "again", ""); err != nil {
		t.Fatal(err)
	}
	h.wait(forked.ID)
	other := h.parent(user("parent: elsewhere"))
	h.wait(h.launch(other.ID, tasks.LaunchRequest{Description: "not mine"}).ID)

	r, err := h.tools.ListTool(context.Background(), parent.ID, tasktools.ListInput{})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(r.Text, "\n")
	if len(lines) != 3 || lines[0] != "Background tasks (2):" {
		t.Fatalf("list =\n%s", r.Text)
	}
	// Newest first: the forked, resumed one, then the plain one.
	if !strings.HasPrefix(lines[1], "- "+forked.ID+" (forked) (resumed) [completed]") {
		t.Errorf("forked line = %q", lines[1])
	}
	if !strings.HasPrefix(lines[2], "- "+plain.ID+" [completed]") {
		t.Errorf("plain line = %q: a new task gets no indicator", lines[2])
	}
	if strings.Contains(r.Text, "not mine") {
		t.Error("another session's task is listed")
	}
	if r, _ := h.tools.ListTool(context.Background(), h.parent(user("parent: empty")).ID, tasktools.ListInput{}); r.Text != "No background tasks found" {
		t.Fatalf("empty list = %q", r.Text)
	}
	if r, _ := h.tools.ListTool(context.Background(), parent.ID, tasktools.ListInput{Status: "running"}); r.Text != "No background tasks found" {
		t.Fatalf("status filter = %q", r.Text)
	}
	// The filter ignores case, as people type it.
	if r, _ := h.tools.ListTool(context.Background(), parent.ID, tasktools.ListInput{Status: "Completed"}); !strings.HasPrefix(r.Text, "Background tasks (2):") {
		t.Fatalf("status filter Completed = %q", r.Text)
	}
	if _, err := h.tools.ListTool(context.Background(), parent.ID, tasktools.ListInput{Status: "sleeping"}); !errors.Is(err, sa.ErrInvalid) {
		t.Fatalf("unknown status = %v", err)
	}
}
