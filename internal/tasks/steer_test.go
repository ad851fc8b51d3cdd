package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/internal/tasktools"
	"github.com/superagents/superagents/internal/tools"
)

// steerMark starts every message sent to a task, as its model reads it.
const steerMark = "[Message from "

// stepper is a task's model that works in short steps (a bash sleep
// each, so that a message comes while a tool runs) until it reads a
// message sent to it, and then answers with it. Its own prompt starts
// "C:"; another session's requests get "parent".
func stepper(steps int) func(llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		body := string(req.Body)
		if !strings.Contains(body, "C: work in steps") {
			return llmtest.Reply{Text: "parent"}
		}
		if i := strings.LastIndex(body, "sent while you work."); i >= 0 {
			return llmtest.Reply{Text: "Got: " + firstLine(body[i:])}
		}
		n := strings.Count(body, `"tool_result"`)
		if n >= steps {
			return llmtest.Reply{Text: "finished without a message"}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall("bash", map[string]any{"command": fmt.Sprintf("sleep 0.2 # step %d", n)})}}
	}
}

// firstLine is the message's text after its heading: the words up to the
// next quote, as the JSON body holds it.
func firstLine(s string) string {
	s = strings.TrimPrefix(s, "sent while you work.")
	if i := strings.Index(s, `\n\n`); i >= 0 {
		s = s[i+4:]
	}
	if i := strings.IndexByte(s, '"'); i >= 0 {
		s = s[:i]
	}
	return s
}

// waitFor polls cond for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// steeredOnce reports how many times a message's text is in a task's
// history.
func (h *harness) steeredOnce(taskID, text string) int {
	h.t.Helper()
	hist, err := h.store.History(context.Background(), taskID)
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, m := range hist {
		if m.Role == sa.RoleUser && strings.Contains(m.Text(), steerMark) && strings.Contains(m.Text(), text) {
			n++
		}
	}
	return n
}

// TestSendSteersARunningTask: TASK-STEER-1. A message sent to a running
// task is stored, in its session once, and read by its model before its
// next request, a tool running meanwhile not interrupted; sent to a
// queued task, it is read when the task starts.
func TestSendSteersARunningTask(t *testing.T) {
	h := newHarness(t, stepper(200), withLimits(func(l *config.Tasks) { l.Concurrency = 1 }))
	parent := h.parent(user("parent: hi"))
	ctx := context.Background()
	running := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "C: work in steps"})
	queued := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "C: work in steps"})
	waitFor(t, "the first task's first tool call", func() bool {
		tk, _ := h.store.Task(ctx, running.ID)
		return tk.Progress.ToolCalls > 0
	})
	if tk, _ := h.store.Task(ctx, queued.ID); tk.Status != sa.TaskQueued {
		t.Fatalf("the second task is %s, want queued", tk.Status)
	}
	sent, err := h.mgr.Send(ctx, queued.ID[:8], tasktools.FromUser, "  use the blue bucket  ")
	if err != nil || sent.Message == nil || sent.Answered != nil || sent.Message.Text != "use the blue bucket" {
		t.Fatalf("Send to a queued task: %+v, %v", sent, err)
	}
	if _, err := h.mgr.Send(ctx, running.ID, tasktools.FromUser, "stop at the red line"); err != nil {
		t.Fatal(err)
	}
	if done := h.wait(running.ID); done.Status != sa.TaskCompleted || done.Result != "Got: stop at the red line" {
		t.Fatalf("the running task ended %s with %q", done.Status, done.Result)
	}
	if done := h.wait(queued.ID); done.Status != sa.TaskCompleted || done.Result != "Got: use the blue bucket" {
		t.Fatalf("the queued task ended %s with %q", done.Status, done.Result)
	}
	for _, c := range []struct{ id, text string }{{running.ID, "stop at the red line"}, {queued.ID, "use the blue bucket"}} {
		if n := h.steeredOnce(c.id, c.text); n != 1 {
			t.Errorf("task %s has its message %d times in its session, want once", c.id, n)
		}
		msgs, err := h.mgr.Messages(ctx, c.id)
		if err != nil || len(msgs) != 1 || msgs[0].DeliveredAt == nil || msgs[0].From != tasktools.FromUser {
			t.Errorf("the messages of task %s: %+v, %v", c.id, msgs, err)
		}
	}
}

// TestSendRefusals: TASK-STEER-2. What cannot be delivered is refused
// with what to do instead: a completed task is resumed; a cancelled,
// failed or cleared task says so; an empty message and an unknown task
// are refused too.
func TestSendRefusals(t *testing.T) {
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		switch body := string(req.Body); {
		case strings.Contains(body, "please fail"):
			return llmtest.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "bad request"}
		case strings.Contains(body, "please hang"):
			return llmtest.Reply{Text: "thinking", Fault: llmtest.Stall}
		}
		return llmtest.Reply{Text: "done"}
	})
	ctx := context.Background()
	parent := h.parent(user("parent: hi"))
	completed := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "quick"})
	h.wait(completed.ID)
	failed := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "please fail"})
	h.wait(failed.ID)
	cancelled := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "please hang"})
	if _, err := h.mgr.Cancel(ctx, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	other := h.parent(user("parent: another"))
	cleared := h.launch(other.ID, tasks.LaunchRequest{Prompt: "quick"})
	h.wait(cleared.ID)
	if _, _, _, err := h.mgr.Clear(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, ref, text string
		is              error
		says            string
	}{
		{"completed", completed.ID, "more", sa.ErrConflict, "resume it to send a follow-up"},
		{"failed", failed.ID, "more", sa.ErrConflict, "failed: nothing can be sent to it"},
		{"cancelled", cancelled.ID, "more", sa.ErrConflict, "was cancelled: nothing can be sent to it"},
		{"cleared", cleared.ID, "more", sa.ErrExpired, "was cleared"},
		{"empty", completed.ID, " \n ", sa.ErrInvalid, "message is empty"},
		{"unknown", "zzzzzzzzzzzz", "more", sa.ErrNotFound, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.mgr.Send(ctx, c.ref, tasktools.FromUser, c.text)
			if !errors.Is(err, c.is) || !strings.Contains(fmt.Sprint(err), c.says) {
				t.Fatalf("Send: %v, want %v saying %q", err, c.is, c.says)
			}
		})
	}
}

// taskIDIn finds the id superagents_task answered with in a request.
var taskIDIn = regexp.MustCompile(`Task (\w{16}) launched`)

// TestAParentTaskIsToldAtOnce: TASK-STEER-3. A task blocked in
// superagents_output on its own task stops waiting when it is sent a
// message and reads it at once; it steers its own task with
// superagents_send, which only it may do.
func TestAParentTaskIsToldAtOnce(t *testing.T) {
	var childRequests atomic.Int32
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		body, first := string(req.Body), firstText(t, req)
		switch {
		case first == "C: work in steps":
			childRequests.Add(1)
			if strings.Contains(body, "wrap it up") {
				return llmtest.Reply{Text: "child wrapped up"}
			}
			n := strings.Count(body, `"tool_result"`)
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall("bash", map[string]any{"command": fmt.Sprintf("sleep 0.2 # step %d", n)})}}
		case first != "P: lead":
			return llmtest.Reply{Text: "top"}
		case strings.Contains(body, "child wrapped up") || strings.Contains(body, "finished in"):
			return llmtest.Reply{Text: "parent done"}
		case strings.Contains(body, "Message 1 sent to task"):
			return llmtest.Reply{Text: "told the child"}
		case strings.Contains(body, "sent while you work"):
			id := taskIDIn.FindStringSubmatch(body)
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(sa.SendTool, map[string]any{"task_id": id[1], "message": "wrap it up"})}}
		case taskIDIn.MatchString(body):
			id := taskIDIn.FindStringSubmatch(body)
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(sa.OutputTool, map[string]any{"task_id": id[1], "block": true, "timeout": 600})}}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(sa.TaskTool, map[string]any{"description": "child", "prompt": "C: work in steps", "agent": "general"})}}
	})
	ctx := context.Background()
	top := h.parent(user("parent: hi"))
	lead := h.launch(top.ID, tasks.LaunchRequest{Prompt: "P: lead"})
	var child sa.Task
	waitFor(t, "the lead blocked in superagents_output, its child working", func() bool {
		list, _ := h.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: lead.ID})
		if len(list) == 1 {
			child = list[0]
		}
		tk, _ := h.store.Task(ctx, lead.ID)
		return childRequests.Load() >= 2 && tk.Progress.Phase == "tool: "+sa.OutputTool
	})
	// Only the task that launched it may steer it with the tool.
	if _, err := h.tools.SendTool(ctx, top.ID, tasktools.FromAgent, tasktools.SendInput{TaskID: child.ID, Message: "hijack"}); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("another session's agent sends to the child: %v, want not found", err)
	}
	if _, err := h.mgr.Send(ctx, lead.ID, tasktools.FromUser, "the deadline moved"); err != nil {
		t.Fatal(err)
	}
	if done := h.wait(lead.ID); done.Status != sa.TaskCompleted || done.Result != "parent done" {
		t.Fatalf("the lead ended %s with %q (%s)", done.Status, done.Result, done.Error)
	}
	if done := h.wait(child.ID); done.Result != "child wrapped up" {
		t.Fatalf("the child ended with %q", done.Result)
	}
	if n := h.steeredOnce(child.ID, "wrap it up"); n != 1 {
		t.Fatalf("the child read its parent's message %d times", n)
	}
	msgs, _ := h.mgr.Messages(ctx, child.ID)
	if len(msgs) != 1 || msgs[0].From != tasktools.FromAgent {
		t.Fatalf("the child's messages %+v", msgs)
	}
	var told bool
	hist, _ := h.store.History(ctx, lead.ID)
	for _, m := range hist {
		for _, p := range m.Parts {
			told = told || (p.Type == sa.PartToolResult && strings.Contains(p.Output, "Stopped waiting after"))
		}
	}
	if !told {
		t.Fatal("the lead's blocking superagents_output did not stop for its message")
	}
}

// TestATaskAsksTheTaskThatLaunchedIt: TASK-ASK-2. A task of a task asks
// its question; its parent agent, waiting for it, is told at once (a
// notice it reads), answers with superagents_send, and the child goes on
// with the answer.
func TestATaskAsksTheTaskThatLaunchedIt(t *testing.T) {
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		body, first := string(req.Body), firstText(t, req)
		switch {
		case first == "C: ask":
			if i := strings.Index(body, "The user answered: "); i >= 0 {
				return llmtest.Reply{Text: "child picked " + strings.TrimSuffix(firstWord(body[i+len("The user answered: "):]), `"`)}
			}
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(tasktools.AskToolName, map[string]any{"question": "Which colour?", "choices": []string{"red", "blue"}})}}
		case first != "P: lead":
			return llmtest.Reply{Text: "top"}
		case strings.Contains(body, `\"asker\" finished in`):
			return llmtest.Reply{Text: "parent done"}
		case strings.Contains(body, "was given to it"):
			return llmtest.Reply{Text: "answered it"}
		case strings.Contains(body, `asks: Which colour?`):
			id := taskIDIn.FindStringSubmatch(body)
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(sa.SendTool, map[string]any{"task_id": id[1], "message": "blue"})}}
		case taskIDIn.MatchString(body):
			return llmtest.Reply{Text: "launched; waiting"}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(sa.TaskTool, map[string]any{"description": "asker", "prompt": "C: ask", "agent": "general"})}}
	})
	ctx := context.Background()
	top := h.parent(user("parent: hi"))
	lead := h.launch(top.ID, tasks.LaunchRequest{Prompt: "P: lead"})
	if done := h.wait(lead.ID); done.Status != sa.TaskCompleted || done.Result != "parent done" {
		t.Fatalf("the lead ended %s with %q", done.Status, done.Result)
	}
	list, err := h.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: lead.ID})
	if err != nil || len(list) != 1 || list[0].Result != "child picked blue" {
		t.Fatalf("the child: %+v, %v", list, err)
	}
	var notice bool
	for _, m := range h.notifications(lead.ID) {
		notice = notice || strings.Contains(m.Text(), `asks: Which colour?`)
	}
	if !notice {
		t.Fatal("the lead's session has no notice of its child's question")
	}
}

// firstText is the first text of a request's messages: a task's prompt.
func firstText(t *testing.T, req llmtest.Request) string {
	if f := facts(t, req); len(f.Texts) > 0 {
		return f.Texts[0]
	}
	return ""
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, " .\\\""); i >= 0 {
		return s[:i]
	}
	return s
}

// TestAQuestionNobodyAnswers: TASK-ASK-3. A question nobody answers
// within tasks.ask_timeout gets "no answer", and the task goes on; the
// question is no longer outstanding.
func TestAQuestionNobodyAnswers(t *testing.T) {
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		body := string(req.Body)
		switch {
		case strings.Contains(body, "Nobody answered in time"):
			return llmtest.Reply{Text: "went on alone"}
		case strings.Contains(body, "C: ask"):
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(tasktools.AskToolName, map[string]any{"question": "Proceed?"})}}
		}
		return llmtest.Reply{Text: "parent"}
	}, withLimits(func(l *config.Tasks) { l.AskTimeout.Duration = 300 * time.Millisecond }))
	ctx := context.Background()
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "C: ask"})
	if done := h.wait(task.ID); done.Result != "went on alone" {
		t.Fatalf("the task ended %s with %q", done.Status, done.Result)
	}
	if q := h.mgr.Question(ctx, task.ID); q != "" {
		t.Fatalf("the question %q is still outstanding", q)
	}
}

// TestAnAgentCannotAllowACommand: TASK-ASK-4. A command a task's policy
// leaves to a person (unlisted = "ask") is not allowed by the agent that
// launched the task: its yes is refused, its no would stand; a person's
// yes runs it.
func TestAnAgentCannotAllowACommand(t *testing.T) {
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		body := string(req.Body)
		switch {
		case strings.Contains(body, "marker-42"):
			return llmtest.Reply{Text: "ran it"}
		case firstText(t, req) == "C: run":
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall("bash", map[string]any{"command": "echo marker-$((6*7))"})}}
		}
		return llmtest.Reply{Text: "parent"}
	}, withFork(func(c *config.Config) {
		c.Permissions.Bash = tools.BashRules{Allow: []string{"ls"}, Unlisted: tools.UnlistedAsk}
	}))
	ctx := context.Background()
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "C: run"})
	waitFor(t, "the command's question", func() bool { return h.mgr.Question(ctx, task.ID) != "" })
	_, err := h.tools.SendTool(ctx, parent.ID, tasktools.FromAgent, tasktools.SendInput{TaskID: task.ID, Message: "yes"})
	if !errors.Is(err, sa.ErrInvalid) || !strings.Contains(err.Error(), "an agent may only answer no") {
		t.Fatalf("the agent's yes: %v, want it refused", err)
	}
	r, err := h.tools.SendTool(ctx, "", tasktools.FromUser, tasktools.SendInput{TaskID: task.ID, Message: "yes"})
	if err != nil || !strings.Contains(r.Text, "was given to it") {
		t.Fatalf("the user's yes: %q, %v", r.Text, err)
	}
	if done := h.wait(task.ID); done.Result != "ran it" {
		t.Fatalf("the task ended %s with %q", done.Status, done.Result)
	}
}

// TestSendReachesAResumedRun: TASK-STEER-1. A task being resumed reads a
// message sent to it in that run.
func TestSendReachesAResumedRun(t *testing.T) {
	h := newHarness(t, stepper(200))
	ctx := context.Background()
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Prompt: "answer at once"})
	h.wait(task.ID)
	if _, err := h.mgr.Resume(ctx, task.ID, "C: work in steps", ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the resumed run's first tool call", func() bool {
		tk, _ := h.store.Task(ctx, task.ID)
		return tk.Status == sa.TaskResumed && tk.Progress.ToolCalls > 0
	})
	if _, err := h.mgr.Send(ctx, task.ID, tasktools.FromUser, "mind the gap"); err != nil {
		t.Fatal(err)
	}
	if done := h.wait(task.ID); done.Result != "Got: mind the gap" || done.ResumeCount != 1 {
		t.Fatalf("the resumed task ended %s with %q", done.Status, done.Result)
	}
}
