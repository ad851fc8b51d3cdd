package repl

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/tasktools"
)

// The tasks of the chat script wait until the test creates the release
// file: each test decides when they end, and so whether their parent is
// idle or busy then.

// settle waits until the chat's background work is over.
func settle(t *testing.T, c *Chat) {
	t.Helper()
	if err := c.Settle(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// caughtUp waits until the chat has read every change stored so far.
func caughtUp(t *testing.T, c *Chat) {
	t.Helper()
	if err := c.catchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// kinds counts the events of each kind for one agent.
func kinds(evs []Event, session string) map[EventKind]int {
	n := map[EventKind]int{}
	for _, e := range evs {
		if e.Session == session {
			n[e.Kind]++
		}
	}
	return n
}

// drain returns the events that came so far.
func (l *eventLog) drain() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.queue
	l.queue = nil
	return out
}

// wakes counts the wake turns among events.
func wakes(evs []Event) int {
	n := 0
	for _, e := range evs {
		if e.Kind == TurnStart && e.Wake {
			n++
		}
	}
	return n
}

var finishedAdd = regexp.MustCompile(`^✓ Agent "add" finished in \d+s\.\nTask Progress: 1/1$`)

// TestAgentTaskWakesIdleAgent: a task the agent launched ends while the
// agent is idle: its notification is shown, then the agent is woken, once,
// and answers it.
func TestAgentTaskWakesIdleAgent(t *testing.T) {
	eng, c, e := delegated(t, "please delegate the sum", 1)
	id := c.Current().ID
	if act := c.Activity(); act.Task != "add" {
		t.Fatalf("activity after the launch: %+v", act)
	}
	eng.release(t)
	evs := e.until(t, func(ev Event) bool { return ev.Kind == TurnEnd && ev.Wake })
	notice := evs[slicesIndex(evs, TaskNotice)]
	if notice.Session != id || !finishedAdd.MatchString(notice.Text) {
		t.Fatalf("notice = %+v", notice)
	}
	start := slicesIndex(evs, TurnStart)
	if start < slicesIndex(evs, TaskNotice) || !evs[start].Wake {
		t.Fatalf("the wake did not follow the notification: %+v", evs)
	}
	var answer strings.Builder
	for _, ev := range evs[start:] {
		if ev.Kind == TurnText {
			answer.WriteString(ev.Text)
		}
	}
	if !strings.HasPrefix(answer.String(), `Noted: ✓ Agent "add" finished in`) {
		t.Fatalf("the woken agent answered %q", answer.String())
	}
	settle(t, c)
	if n := wakes(append(evs, e.drain()...)); n != 1 {
		t.Fatalf("%d wakes, want 1", n)
	}
	if act := c.Activity(); act.Busy() {
		t.Fatalf("activity after everything ended: %+v", act)
	}
	if got := blockText(mustSubmit(t, c, "/agents")); !strings.Contains(got, "idle ← current") || strings.Count(got, "agent [") != 1 {
		t.Fatalf("/agents lists the task's session or a busy agent:\n%s", got)
	}
}

// delegated opens a chat whose agent, asked line, launched n background
// tasks; they run until the test releases them.
func delegated(t *testing.T, line string, n int) (*rig, *Chat, *eventLog) {
	t.Helper()
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	if got := ask(t, c, e, line); got != "Launched." {
		t.Fatalf("the agent answered %q", got)
	}
	caughtUp(t, c)
	if act := c.Activity(); act.Tasks != n {
		t.Fatalf("activity after the launch: %+v, want %d tasks", act, n)
	}
	return eng, c, e
}

// slicesIndex returns the index of the first event of a kind, or -1.
func slicesIndex(evs []Event, kind EventKind) int {
	for i, e := range evs {
		if e.Kind == kind {
			return i
		}
	}
	return -1
}

// TestBatchWakesOnce: three tasks launched in one turn end together; the
// agent sees three notifications and is woken once.
func TestBatchWakesOnce(t *testing.T) {
	eng, c, e := delegated(t, "please delegate three sums", 3)
	id := c.Current().ID
	eng.release(t)
	settle(t, c)
	evs := e.drain()
	n := kinds(evs, id)
	if n[TaskNotice] != 3 || wakes(evs) != 1 || n[TurnEnd] != 1 {
		t.Fatalf("notices %d, wakes %d, turn ends %d: want 3, 1, 1; events %+v", n[TaskNotice], wakes(evs), n[TurnEnd], evs)
	}
	last := -1
	for i, ev := range evs {
		if ev.Kind == TaskNotice {
			last = i
		}
	}
	if start := slicesIndex(evs, TurnStart); start < last {
		t.Fatalf("the wake started before the last notification: %+v", evs)
	}
	if got := evs[last].Text; !strings.HasSuffix(got, "Task Progress: 3/3") {
		t.Fatalf("the last notification says %q", got)
	}
	history, _ := eng.Store.History(context.Background(), id)
	if got := history[len(history)-1]; got.Role != sa.RoleAssistant || !strings.HasPrefix(got.Text(), "Noted: ✓ Agent") {
		t.Fatalf("the wake answered %q", got.Text())
	}
}

// TestWakeAfterBusyTurn: a task ends while its agent is in a turn that
// then ends without answering the notification; the agent is woken when
// that turn ends, not before. The model is a fake Anthropic server; the
// agent's turn waits (in bash) until the test lets it go on.
func TestWakeAfterBusyTurn(t *testing.T) {
	srv := llmtest.NewAnthropic(t)
	var parentCalls, taskCalls atomic.Int32
	waitFor := func(file string) llmtest.ToolCall {
		return llmtest.ToolCall{Name: "bash", Input: `{"command": "while [ ! -e ` + file + ` ]; do sleep 0.02; done"}`}
	}
	srv.Handle(func(req llmtest.Request) llmtest.Reply {
		if firstText(t, req) == "child work" {
			if taskCalls.Add(1) == 1 {
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{waitFor("release")}}
			}
			return llmtest.Reply{Text: "child done"}
		}
		switch parentCalls.Add(1) {
		case 1:
			input, _ := json.Marshal(tasktools.TaskInput{Description: "child", Prompt: "child work", Agent: "general"})
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: sa.TaskTool, Input: string(input)}, waitFor("release-parent")}}
		case 2:
			return llmtest.Reply{} // ends the turn without a word
		}
		return llmtest.Reply{Text: "Noted the child."}
	})
	eng := testRig(t, t.TempDir(), map[string]string{
		"ANTHROPIC_API_KEY": "test-key", config.EnvAnthropicBaseURL: srv.BaseURL(), config.EnvModel: "anthropic/claude-test",
	})
	c := openChat(t, eng, "")
	e := collect(c)
	id := c.Current().ID
	turn := c.Submit(context.Background(), "delegate").Turn()
	turn.Start()
	e.until(t, func(ev Event) bool { return ev.Kind == TurnTool && strings.Contains(ev.Text, "release-parent") })
	eng.release(t)
	e.until(t, func(ev Event) bool { return ev.Kind == TaskNotice })
	// The chat has handled the notification: the agent was busy, so its
	// wake waits for the turn's end.
	caughtUp(t, c)
	if got := wakes(e.drain()); got != 0 {
		t.Fatal("the agent was woken while it was busy")
	}
	if err := os.WriteFile(filepath.Join(eng.ws, "release-parent"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	<-turn.Start()
	evs := e.until(t, func(ev Event) bool { return ev.Kind == TurnEnd && ev.Wake })
	ends := slicesIndex(evs, TurnEnd)
	if start := slicesIndex(evs, TurnStart); ends < 0 || evs[ends].Wake || evs[ends].Err != nil || start < ends || !evs[start].Wake {
		t.Fatalf("want the turn's end, then the wake: %+v", evs)
	}
	settle(t, c)
	if n := wakes(e.drain()); n != 0 {
		t.Fatalf("%d more wakes", n)
	}
	history, _ := eng.Store.History(context.Background(), id)
	if got := history[len(history)-1].Text(); got != "Noted the child." {
		t.Fatalf("the woken agent answered %q", got)
	}
}

// firstText is the text of the first message of an Anthropic request.
func firstText(t *testing.T, req llmtest.Request) string {
	var body struct {
		Messages []struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := req.Decode(&body); err != nil || len(body.Messages) == 0 || len(body.Messages[0].Content) == 0 {
		t.Errorf("request without a first message: %v", err)
		return ""
	}
	return body.Messages[0].Content[0].Text
}

// TestNoticeOutOfView: the notification of an agent out of view says
// which agent it is for, and that agent is woken all the same.
func TestNoticeOutOfView(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	root := c.Current().ID
	mustSubmit(t, c, "/fork")
	child := c.Current().ID
	ask(t, c, e, "please delegate the sum")
	mustSubmit(t, c, "/switch "+root)
	eng.release(t)
	settle(t, c)
	evs := e.drain()
	notice := evs[slicesIndex(evs, TaskNotice)]
	if notice.Session != child || !strings.HasPrefix(noticeText(notice, c.Current().ID), "agent ["+sa.ShortID(child)+"]: ✓ Agent \"add\"") {
		t.Fatalf("notice %+v shows as %q", notice, noticeText(notice, c.Current().ID))
	}
	if n := kinds(evs, child); wakes(evs) != 1 || n[TurnEnd] != 1 {
		t.Fatalf("the child out of view was not woken once: %+v", evs)
	}
}

// TestKillCancelsTasksAndNeverWakes: /kill cancels the tasks of the
// agents it stops, and their endings wake nobody.
func TestKillCancelsTasksAndNeverWakes(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	mustSubmit(t, c, "/fork")
	child := c.Current().ID
	ask(t, c, e, "please delegate the sum")
	mustSubmit(t, c, "/fork") // a grandchild with a task of its own
	ask(t, c, e, "please delegate three sums")
	mustSubmit(t, c, "/parent")
	r := mustSubmit(t, c, "/kill "+child)
	if got := blockText(r); !strings.Contains(got, "Stopped "+sa.ShortID(child)+" and 1 agent forked from it (4 background tasks cancelled).") {
		t.Fatalf("/kill said:\n%s", got)
	}
	settle(t, c)
	evs := e.drain()
	if n := slicesCount(evs, TaskNotice); n != 4 || wakes(evs) != 0 {
		t.Fatalf("%d notices and %d wakes after /kill, want 4 and 0: %+v", n, wakes(evs), evs)
	}
	list, err := eng.Store.ListTasks(context.Background(), sa.TaskFilter{})
	if err != nil || len(list) != 4 {
		t.Fatalf("tasks: %v %v", list, err)
	}
	for _, tk := range list {
		if tk.Status != sa.TaskCancelled {
			t.Errorf("task %s is %s, want cancelled", tk.Description, tk.Status)
		}
	}
	if got := blockText(mustSubmit(t, c, "/kill "+child)); !strings.Contains(got, "(no turn or task was running)") {
		t.Fatalf("a second /kill said %q", got)
	}
}

func slicesCount(evs []Event, kind EventKind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// TestTreeAndLatestSessionLeaveTasksOut: a forked task's session is linked
// to its parent, but it is not an agent of the chat, nor a chat to
// continue.
func TestTreeAndLatestSessionLeaveTasksOut(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	ask(t, c, e, "What is 2+2?")
	r := mustSubmit(t, c, `/task --fork general "wait for release"`)
	task := taskID(t, c, r)
	tk, err := eng.Store.Task(context.Background(), task)
	if err != nil || !tk.IsForked {
		t.Fatalf("task %+v: %v", tk, err)
	}
	// The task's session is the newest, with the newest messages.
	latest, err := LatestSession(context.Background(), eng.Store)
	if err != nil || latest.ID != c.Current().ID {
		t.Fatalf("latest session = %s (%v), want the chat's %s, not the task %s", latest.ID, err, c.Current().ID, task)
	}
	if got := blockText(mustSubmit(t, c, "/agents")); strings.Count(got, "agent [") != 1 {
		t.Fatalf("/agents:\n%s", got)
	}
	mustFail(t, c, "/switch "+task, "is not in this chat's tree")
	// The task's session is the task's: no chat opens on it.
	if _, err := Open(context.Background(), eng.options(task)); err == nil || !strings.Contains(err.Error(), "resume the task") {
		t.Fatalf("a chat on the task's session: %v", err)
	}
	eng.release(t)
	settle(t, c)
}

// taskID reads the task a /task reply names, and returns its full id.
func taskID(t *testing.T, c *Chat, r Reply) string {
	t.Helper()
	m := regexp.MustCompile(`Task ([0-9a-z]{6})\.\.\. `).FindStringSubmatch(blockText(r))
	if m == nil {
		t.Fatalf("no task id in %q", blockText(r))
	}
	tk, err := c.store.ResolveTask(context.Background(), m[1])
	if err != nil {
		t.Fatal(err)
	}
	return tk.ID
}

// TestSettleWaitsForTasksOtherProcessesRun: on a database that several
// processes share (the nodes of a cluster run every task there), the
// chat's tasks run elsewhere; a piped chat at the end of its input still
// waits for them and shows their notifications.
func TestSettleWaitsForTasksOtherProcessesRun(t *testing.T) {
	ctx := context.Background()
	r := testEngine(t, t.TempDir())
	c := openChat(t, r, "")
	// A first turn: the chat's agent at work.
	reply := c.Submit(ctx, "What is 2+2?")
	if reply.Failed || reply.Turn() == nil {
		t.Fatalf("first line: %+v", reply)
	}
	<-reply.Turn().Start()
	host, _ := os.Hostname()
	node := sa.Runner{ID: "runner-other-node", Host: host, PID: os.Getpid()}
	if err := r.Store.RegisterRunner(ctx, node); err != nil {
		t.Fatal(err)
	}
	remote, err := r.Store.CreateTask(ctx, sa.NewTask{
		Task:    sa.Task{ParentSessionID: c.root, Description: "remote", Prompt: "p", Agent: "general", Status: sa.TaskRunning, RunnerID: node.ID},
		Session: sa.NewSession{Agent: "general", Messages: []sa.Message{engineUser("p")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	settled := make(chan error, 1)
	go func() { settled <- c.Settle(ctx) }()
	select {
	case err := <-settled:
		t.Fatalf("Settle returned (%v) while a task of the chat still ran in another process", err)
	case <-time.After(300 * time.Millisecond):
	}
	if _, _, err := r.Store.FinishTask(ctx, remote.ID, func(tk *sa.Task) error {
		tk.Status, tk.Result = sa.TaskCompleted, "done"
		return nil
	}, func(sa.Task, sa.BatchState) sa.Message {
		return sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("remote finished")}}
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-settled:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Settle did not return once the task ended")
	}
}
