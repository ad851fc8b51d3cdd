package repl

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	sa "github.com/superagents/superagents"
)

func TestDescribe(t *testing.T) {
	tests := map[string]string{
		"What is 2+2?":                                 "What is 2+2?",
		"  find   the\nport  ":                         "find the port",
		"one two three four five six seven eight":      "one two three four five six…",
		strings.Repeat("x", 100):                       strings.Repeat("x", 59) + "…",
		"naïve café résumé über straße señor and more": "naïve café résumé über straße señor…",
	}
	for prompt, want := range tests {
		if got := describe(prompt); got != want || utf8.RuneCountInString(got) > 60 {
			t.Errorf("describe(%q) = %q, want %q", prompt, got, want)
		}
	}
}

// TestTaskCommands: /task, /tasks, /output (with and without --block),
// /cancel and /resume, on the agent in view.
func TestTaskCommands(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	ctx := context.Background()
	id := c.Current().ID

	r := mustSubmit(t, c, `/task --desc "the waiter" general wait for release`)
	waiter := taskID(t, c, r)
	if got := blockText(r); !regexp.MustCompile(`^Task [0-9a-z]{6}\.\.\. "the waiter" launched in the background \(agent general\)\. /output [0-9a-z]{6}\.\.\. shows its progress`).MatchString(got) {
		t.Fatalf("/task said %q", got)
	}
	tk, _ := eng.Store.Task(ctx, waiter)
	if tk.ParentSessionID != id || tk.Prompt != "wait for release" || tk.IsForked || tk.Agent != "general" {
		t.Fatalf("task %+v", tk)
	}
	if act := c.Activity(); act.Tasks != 1 || act.Task != "the waiter" {
		t.Fatalf("activity right after /task: %+v", act)
	}
	r = mustSubmit(t, c, "/task --fork general What is 2+2?")
	adder := taskID(t, c, r)
	if got := blockText(r); !strings.Contains(got, `"What is 2+2?" launched in the background (agent general, forked with this conversation)`) {
		t.Fatalf("/task --fork said %q", got)
	}
	// The adder ends on its own: its notification shows; the waiter still
	// runs, so the agent is not woken yet.
	e.until(t, func(ev Event) bool { return ev.Kind == TaskNotice })
	waitActivity(t, c, e, func(act Activity) bool { return act.Tasks == 1 && act.ToolCalls == 1 })
	list := blockText(mustSubmit(t, c, "/tasks"))
	for _, want := range []string{"Background tasks (2):", waiter + " [running] \"the waiter\"", adder + " (forked) [completed] \"What is 2+2?\""} {
		if !strings.Contains(list, want) {
			t.Fatalf("/tasks lacks %q:\n%s", want, list)
		}
	}
	if got := blockText(mustSubmit(t, c, "/output "+sa.ShortID(waiter))); !strings.Contains(got, `"the waiter") is running:`) || !strings.Contains(got, "1 tool call (last: bash)") {
		t.Fatalf("/output of the running task: %q", got)
	}
	if got := blockText(mustSubmit(t, c, "/output "+adder[:5])); !strings.Contains(got, "completed in") || !strings.HasSuffix(got, "Result:\n2+2 equals 4.") {
		t.Fatalf("/output of the completed task: %q", got)
	}

	// /output --block waits for the end, in the background.
	r = mustSubmit(t, c, "/output --block "+waiter)
	if got := blockText(r); !strings.Contains(got, `Waiting for task `+sa.ShortID(waiter)+` "the waiter" to end (Ctrl+C stops waiting)`) || r.Turn() == nil {
		t.Fatalf("/output --block said %q", got)
	}
	done := r.Turn().Start()
	if !c.Activity().Waiting {
		t.Fatal("the wait does not show in the activity")
	}
	eng.release(t)
	<-done
	evs := e.until(t, func(ev Event) bool { return ev.Kind == TaskOutput })
	if out := evs[len(evs)-1]; out.Err != nil || out.Cancelled || !strings.Contains(out.Text, "Result:\nThe bash tool returned:\nreleased") {
		t.Fatalf("the wait ended with %+v", out)
	}
	settle(t, c)
	if n := wakes(append(evs, e.drain()...)); n != 1 {
		t.Fatalf("%d wakes once both tasks ended, want 1", n)
	}

	// /resume sends a follow-up; its notification comes when it answers.
	r = mustSubmit(t, c, `/resume `+sa.ShortID(adder)+` "What is 3+3?"`)
	if got := blockText(r); !strings.Contains(got, "is resumed (resume #1)") {
		t.Fatalf("/resume said %q", got)
	}
	evs = e.until(t, func(ev Event) bool { return ev.Kind == TaskNotice })
	if got := evs[len(evs)-1].Text; !strings.HasPrefix(got, "✓ Resume #1 completed in") {
		t.Fatalf("the resume's notification: %q", got)
	}
	settle(t, c)
	if got := blockText(mustSubmit(t, c, "/output "+adder)); !strings.HasSuffix(got, "3+3 equals 6.") || !strings.Contains(got, "resume #1") {
		t.Fatalf("/output after the resume: %q", got)
	}
	if got := blockText(mustSubmit(t, c, "/tasks")); !strings.Contains(got, adder+" (forked) (resumed) [completed]") {
		t.Fatalf("/tasks after the resume:\n%s", got)
	}

	// /cancel stops a running task.
	// (Named so that its notification does not ask the model to sleep.)
	sleeper := taskID(t, c, mustSubmit(t, c, "/task --desc snooze general please sleep"))
	if got := blockText(mustSubmit(t, c, "/cancel "+sleeper)); !strings.Contains(got, `("snooze") is cancelled`) {
		t.Fatalf("/cancel said %q", got)
	}
	if tk, _ := eng.Store.Task(ctx, sleeper); tk.Status != sa.TaskCancelled {
		t.Fatalf("the cancelled task is %s", tk.Status)
	}
	settle(t, c)
}

// TestTaskCommandErrors: refusals are one line and change nothing.
func TestTaskCommandErrors(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	ask(t, c, e, "What is 2+2?")
	done := taskID(t, c, mustSubmit(t, c, "/task general What is 1+1?"))
	settle(t, c)
	tests := []struct{ line, want string }{
		{"/task nobody do it", `unknown agent "nobody": available agents are`},
		{"/task general", "the prompt is required: say what the task should do"},
		{"/task --timeout=-1 general go", "--timeout cannot be negative"},
		{"/task --max-cost=x general go", `/task: --max-cost must be a number of dollars, not "x"`},
		{"/task --fork", "/task: missing AGENT"},
		{"/output zzzzzz", "no task with id zzzzzz"},
		{"/output ab", `id prefix "ab" is too short`},
		{"/cancel ab", `id prefix "ab" is too short`},
		{"/cancel " + strings.Repeat("z", 100), `id "` + strings.Repeat("z", 40) + `…" is longer than any id`},
		{"/task " + strings.Repeat("n", 100) + " go", `unknown agent "` + strings.Repeat("n", 40) + `…"`},
		{"/output --block zzzzzz", "no task with id zzzzzz"},
		{"/cancel zzzzzz", "no task with id zzzzzz"},
		{"/cancel " + done, "is completed already: there is nothing to cancel"},
		{"/resume zzzzzz more", "no task with id zzzzzz"},
		{"/resume " + done, `/resume: missing "prompt"`},
	}
	before, _ := eng.Store.ListTasks(context.Background(), sa.TaskFilter{})
	for _, tt := range tests {
		mustFail(t, c, tt.line, tt.want)
	}
	after, _ := eng.Store.ListTasks(context.Background(), sa.TaskFilter{})
	if len(after) != len(before) || after[0].Status != sa.TaskCompleted {
		t.Fatalf("a refused command changed the tasks: %+v", after)
	}
	// A task that is not completed cannot be resumed.
	sleeper := taskID(t, c, mustSubmit(t, c, "/task --desc snooze general please sleep"))
	mustFail(t, c, "/resume "+sleeper+" more", "only completed tasks can be resumed, and task "+sa.ShortID(sleeper)+" is running")
	mustSubmit(t, c, "/cancel "+sleeper)
}

// TestOutputBlockInterrupted: Ctrl+C (Interrupt) stops waiting for a
// task, not the task.
func TestOutputBlockInterrupted(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	task := taskID(t, c, mustSubmit(t, c, "/task general wait for release"))
	r := mustSubmit(t, c, "/output --block "+task)
	done := r.Turn().Start()
	if !c.Interrupt() {
		t.Fatal("Interrupt found nothing to stop")
	}
	<-done
	evs := e.until(t, func(ev Event) bool { return ev.Kind == TaskOutput })
	if out := evs[len(evs)-1]; !out.Cancelled {
		t.Fatalf("the wait ended with %+v", out)
	}
	if got := waitResult(evs[len(evs)-1]); got.Text != "Stopped waiting." {
		t.Fatalf("the wait's end shows %q", got.Text)
	}
	if tk, _ := eng.Store.Task(context.Background(), task); tk.Status != sa.TaskRunning {
		t.Fatalf("the task is %s after the wait stopped", tk.Status)
	}
	if c.Activity().Waiting || c.Interrupt() {
		t.Fatal("the wait is still there")
	}
	eng.release(t)
	settle(t, c)
}

// waitActivity waits until the chat's activity satisfies ok; every change
// of it comes with an event.
func waitActivity(t *testing.T, c *Chat, e *eventLog, ok func(Activity) bool) {
	t.Helper()
	for !ok(c.Activity()) {
		e.next(t)
	}
}
