package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/proctest"
	"github.com/superagents/superagents/internal/runner"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/internal/tasktools"
)

// eventually polls cond until it holds or 30 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func status(t *testing.T, h *harness, id string) sa.TaskStatus {
	t.Helper()
	task, err := h.store.Task(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return task.Status
}

// sleeper is a model whose task runs a long bash command in its own
// process group, then finishes once the command returns. The command
// writes its sleep's duration (proctest.SleepArg), which marks both the
// sleep and the shell in the process list: in the sandbox, the pids the
// command sees are its PID namespace's.
func sleeper(t *testing.T) func(req llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		if facts(t, req).LastName == "bash" {
			return llmtest.Reply{Text: "finished"}
		}
		arg := proctest.SleepArg(t)
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall("bash", map[string]any{
			"command": "sleep " + arg + " & echo " + arg + " > marker; wait", "timeout_seconds": 600})}}
	}
}

// sleeperProcs marks the processes of a sleeper's command.
type sleeperProcs struct{ marker string }

// startSleeper launches a sleeper task and returns it with its processes
// once the command runs.
func startSleeper(t *testing.T, h *harness, parentID string) (sa.Task, sleeperProcs) {
	t.Helper()
	task := h.launch(parentID, tasks.LaunchRequest{Description: "sleeper"})
	return task, sleeperPIDs(t, h)
}

// sleeperPIDs waits until a sleeper's command runs and returns its
// processes.
func sleeperPIDs(t *testing.T, h *harness) sleeperProcs {
	t.Helper()
	var procs sleeperProcs
	eventually(t, "the command to start", func() bool {
		b, err := os.ReadFile(filepath.Join(h.ws, "marker"))
		procs.marker = strings.TrimSpace(string(b))
		return err == nil && strings.HasSuffix(string(b), "\n")
	})
	proctest.WaitFound(t, procs.marker)
	return procs
}

// wantGone fails unless the shell and its sleep are gone: killed with
// the shell's process group (or PID namespace).
func wantGone(t *testing.T, procs sleeperProcs) {
	t.Helper()
	proctest.WaitNoneFound(t, procs.marker)
}

func TestCancelStopsTheBashProcessGroup(t *testing.T) {
	h := newHarness(t, sleeper(t))
	parent := h.parent(user("parent: hi"))
	task, pid := startSleeper(t, h, parent.ID)
	ended, err := h.mgr.Cancel(context.Background(), task.ID)
	if err != nil || ended.Status != sa.TaskCancelled {
		t.Fatalf("Cancel = %+v, %v", ended, err)
	}
	// Cancel returns once the run stopped: the shell and its sleep are
	// gone (the tool killed the process group).
	wantGone(t, pid)
	notes := h.notifications(parent.ID)
	if len(notes) != 1 || !strings.HasPrefix(notes[0].Text(), `⊘ Agent "sleeper" cancelled after `) {
		t.Fatalf("notifications = %v", notes)
	}
	if got := status(t, h, task.ID); got != sa.TaskCancelled {
		t.Fatalf("status after the run stopped = %s: a late event turned cancelled into something else", got)
	}
	// Cancelling again says it has ended.
	if _, err := h.mgr.Cancel(context.Background(), task.ID); !errors.Is(err, sa.ErrConflict) {
		t.Fatalf("second cancel = %v", err)
	}
}

func TestClearCancelsRunningTasks(t *testing.T) {
	h := newHarness(t, sleeper(t))
	parent := h.parent(user("parent: hi"))
	task, pid := startSleeper(t, h, parent.ID)
	r, err := h.tools.ClearTool(context.Background(), parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Cleared 1 task(s) from your list (1 running one(s) cancelled)."; !strings.HasPrefix(r.Text, want) {
		t.Fatalf("clear said %q, want %q", r.Text, want)
	}
	wantGone(t, pid)
	got, err := h.store.Task(context.Background(), task.ID)
	if err != nil || got.Status != sa.TaskCancelled || got.ClearedAt == nil {
		t.Fatalf("task after clear = %s, cleared at %v, %v: want cancelled and cleared", got.Status, got.ClearedAt, err)
	}
	if notes := h.notifications(parent.ID); len(notes) != 1 || !strings.HasPrefix(notes[0].Text(), `⊘ Agent "sleeper" cancelled after `) {
		t.Fatalf("notifications = %v, want one cancellation", notes)
	}
	if r, _ := h.tools.ListTool(context.Background(), parent.ID, tasktools.ListInput{}); r.Text != "No background tasks found" {
		t.Fatalf("list after clear = %q", r.Text)
	}
	// Its session stays in the store.
	if _, err := h.store.Session(context.Background(), task.ID); err != nil {
		t.Fatalf("the cleared task's session: %v", err)
	}
}

func TestDeletingTheParentStopsItsRunningTasks(t *testing.T) {
	h := newHarness(t, sleeper(t))
	parent := h.parent(user("parent: hi"))
	task, pid := startSleeper(t, h, parent.ID)
	if err := h.store.DeleteSession(context.Background(), parent.ID); err != nil {
		t.Fatal(err)
	}
	// The run learns of it from the change log and stops: its tools die
	// and its run slot is free again.
	eventually(t, "the run to stop", func() bool { return h.mgr.Active(parent.ID) == 0 })
	wantGone(t, pid)
	got, err := h.store.Task(context.Background(), task.ID)
	if err != nil || got.Status != sa.TaskCancelled || got.Error != sa.ParentDeletedError {
		t.Fatalf("task of the deleted parent = %s %q, %v: want cancelled, %q", got.Status, got.Error, err, sa.ParentDeletedError)
	}
	if list, _ := h.store.ListTasks(context.Background(), sa.TaskFilter{Status: sa.TaskRunning}); len(list) != 0 {
		t.Fatalf("%d tasks still listed as running", len(list))
	}
}

func TestATaskThatEndsFirstCancelsTheTasksItLaunched(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration // the top task's own limit
		end     func(h *harness, top sa.Task)
		want    string // the start of the top parent's notification
	}{
		{"cancelled", 0, func(h *harness, top sa.Task) {
			if _, err := h.mgr.Cancel(context.Background(), top.ID); err != nil {
				t.Fatal(err)
			}
		}, `⊘ Agent "level one" cancelled`},
		{"timed out", 2 * time.Second, func(h *harness, top sa.Task) { h.wait(top.ID) }, `✗ Agent "level one" failed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
				f := facts(t, req)
				all := strings.Join(f.Texts, "\n")
				switch {
				case strings.Contains(all, "level2"):
					return sleeper(t)(req)
				case f.LastName == sa.TaskTool:
					return llmtest.Reply{Text: "level1 waiting"}
				}
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(sa.TaskTool, map[string]any{
					"description": "level two", "prompt": "level2 work", "agent": "general"})}}
			})
			parent := h.parent(user("parent: hi"))
			top := h.launch(parent.ID, tasks.LaunchRequest{Description: "level one", Prompt: "level1 spawn", Timeout: tt.timeout})
			pid := sleeperPIDs(t, h)
			tt.end(h, top)
			// The top task's run ends once the whole tree has stopped.
			eventually(t, "the tree to stop", func() bool { return h.mgr.Active(parent.ID) == 0 })
			wantGone(t, pid)
			subs, err := h.store.ListTasks(context.Background(), sa.TaskFilter{ParentSessionID: top.ID})
			if err != nil || len(subs) != 1 {
				t.Fatalf("sub-tasks = %v, %v", subs, err)
			}
			if subs[0].Status != sa.TaskCancelled || !strings.Contains(subs[0].Error, "the task that launched it ended") {
				t.Fatalf("sub-task = %s %q: want it cancelled with its parent", subs[0].Status, subs[0].Error)
			}
			if notes := h.notifications(parent.ID); len(notes) != 1 || !strings.HasPrefix(notes[0].Text(), tt.want) {
				t.Fatalf("the top parent's notifications = %v, want one starting %q", notes, tt.want)
			}
		})
	}
}

// gatedModel answers each task once the test opens its gate: the test
// decides when a completion happens. gates maps a task's prompt to its gate.
type gatedModel struct {
	mu    sync.Mutex
	gates map[string]*gate
}

type gate struct {
	arrived, release chan struct{}
	once             sync.Once
}

func (g *gatedModel) gate(prompt string) *gate {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gates[prompt] == nil {
		g.gates[prompt] = &gate{arrived: make(chan struct{}), release: make(chan struct{})}
	}
	return g.gates[prompt]
}

func (g *gatedModel) reply(t *testing.T) func(req llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		prompt := facts(t, req).LastUser
		gt := g.gate(prompt)
		gt.once.Do(func() { close(gt.arrived) })
		<-gt.release
		return llmtest.Reply{Text: "done: " + prompt}
	}
}

func TestCompletionRacingCancel(t *testing.T) {
	model := &gatedModel{gates: map[string]*gate{}}
	h := newHarness(t, model.reply(t))
	var released []*gate
	t.Cleanup(func() { // before the harness stops its model server
		for _, g := range released {
			select {
			case <-g.release:
			default:
				close(g.release)
			}
		}
	})
	parent := h.parent(user("parent: hi"))
	// start launches a task and returns once its model request is in flight.
	start := func(prompt string) (sa.Task, *gate) {
		g := model.gate(prompt)
		released = append(released, g)
		task := h.launch(parent.ID, tasks.LaunchRequest{Description: prompt, Prompt: prompt})
		select {
		case <-g.arrived:
		case <-time.After(30 * time.Second):
			t.Fatalf("task %q never called its model", prompt)
		}
		return task, g
	}

	// The two orders, each made certain...
	first, g := start("completes first")
	close(g.release)
	if ended := h.wait(first.ID); ended.Status != sa.TaskCompleted {
		t.Fatalf("released task ended %s %q", ended.Status, ended.Error)
	}
	if _, err := h.mgr.Cancel(context.Background(), first.ID); !errors.Is(err, sa.ErrConflict) {
		t.Fatalf("cancelling a completed task = %v, want a conflict", err)
	}
	second, g := start("cancelled first")
	if ended, err := h.mgr.Cancel(context.Background(), second.ID); err != nil || ended.Status != sa.TaskCancelled {
		t.Fatalf("Cancel = %s, %v", ended.Status, err)
	}
	close(g.release) // the model answers after all: too late

	// ...then both at once, many times.
	ids := []string{first.ID, second.ID}
	for i := range 30 {
		task, g := start(fmt.Sprintf("race %d", i))
		ids = append(ids, task.ID)
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); close(g.release) }()
		go func() {
			defer wg.Done()
			// Spread the cancels over the time a completion takes, so that
			// both sides win some of the races.
			time.Sleep(time.Duration(i%8) * time.Millisecond)
			_, _ = h.mgr.Cancel(context.Background(), task.ID)
		}()
		wg.Wait()
		h.wait(task.ID)
	}

	// Once everything has settled, each task has one terminal state and
	// one notification, and the notification says that state.
	h.bus.Sync()
	eventually(t, "every run to stop", func() bool { return h.mgr.Active(parent.ID) == 0 })
	notes := map[string][]string{}
	for _, n := range h.notifications(parent.ID) {
		for _, id := range ids {
			if strings.Contains(n.Parts[1].Text, id) {
				notes[id] = append(notes[id], n.Text())
			}
		}
	}
	outcomes := map[sa.TaskStatus]int{}
	for i, id := range ids {
		st := status(t, h, id)
		outcomes[st]++
		want := map[sa.TaskStatus]string{sa.TaskCompleted: "✓", sa.TaskCancelled: "⊘"}[st]
		if want == "" || (i == 0 && st != sa.TaskCompleted) || (i == 1 && st != sa.TaskCancelled) {
			t.Fatalf("task %d (%s) ended %s", i, id, st)
		}
		if len(notes[id]) != 1 || !strings.HasPrefix(notes[id][0], want) {
			t.Fatalf("task %d (%s, %s) has notifications %q, want exactly one starting with %s", i, id, st, notes[id], want)
		}
	}
	t.Logf("outcomes: %v", outcomes)
}

func TestHundredConcurrentResumes(t *testing.T) {
	// The resume's answer never comes: every other resume meets a task
	// that is being resumed.
	var calls atomic.Int32
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		if calls.Add(1) > 1 {
			return llmtest.Reply{Text: "x", Fault: llmtest.Stall}
		}
		return llmtest.Reply{Text: "first answer"}
	})
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{})
	h.wait(task.ID)
	var accepted atomic.Int32
	var wg sync.WaitGroup
	for i := range 100 {
		wg.Go(func() {
			_, err := h.mgr.Resume(context.Background(), task.ID, "follow-up "+strconv.Itoa(i), "")
			switch {
			case err == nil:
				accepted.Add(1)
			case errors.Is(err, sa.ErrConflict):
			default:
				t.Errorf("resume: %v", err)
			}
		})
	}
	wg.Wait()
	got, _ := h.store.Task(context.Background(), task.ID)
	if accepted.Load() != 1 || got.ResumeCount != 1 || got.Status != sa.TaskResumed {
		t.Fatalf("%d resumes accepted, resume count %d, status %s: want exactly 1", accepted.Load(), got.ResumeCount, got.Status)
	}
	if _, err := h.mgr.Cancel(context.Background(), task.ID); err != nil {
		t.Fatal(err)
	}
}

// TestResumeAfterResume: a task resumed again once its resume completed
// runs again and ends again; the first resume's ending cannot stop the
// second.
func TestResumeAfterResume(t *testing.T) {
	h := newHarness(t, echo(t))
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{})
	h.wait(task.ID)
	for i := 1; i <= 5; i++ {
		if _, err := h.mgr.Resume(context.Background(), task.ID, "again "+strconv.Itoa(i), ""); err != nil {
			t.Fatal(err)
		}
		ended := h.wait(task.ID)
		if ended.Status != sa.TaskCompleted || ended.ResumeCount != i || ended.Result != "done: again "+strconv.Itoa(i) {
			t.Fatalf("resume %d ended %+v", i, ended)
		}
	}
	if notes := h.notifications(parent.ID); len(notes) != 6 {
		t.Fatalf("%d notifications, want 6", len(notes))
	}
}

func TestConcurrencyLimitQueues(t *testing.T) {
	h := newHarness(t, stalled(t), withLimits(func(l *config.Tasks) { l.Concurrency = 2 }))
	parent := h.parent(user("parent: hi"))
	var list []sa.Task
	for range 4 {
		list = append(list, h.launch(parent.ID, tasks.LaunchRequest{}))
	}
	count := func(s sa.TaskStatus) int {
		n := 0
		for _, task := range list {
			if status(t, h, task.ID) == s {
				n++
			}
		}
		return n
	}
	if count(sa.TaskRunning) != 2 || count(sa.TaskQueued) != 2 {
		t.Fatalf("running %d, queued %d: want 2 and 2", count(sa.TaskRunning), count(sa.TaskQueued))
	}
	r, _ := h.tools.OutputTool(context.Background(), parent.ID, tasktools.OutputInput{TaskID: list[3].ID})
	if !strings.Contains(r.Text, "queued") {
		t.Fatalf("output of a queued task = %q", r.Text)
	}
	// A queued task starts when a slot frees.
	if _, err := h.mgr.Cancel(context.Background(), list[0].ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a queued task to start", func() bool { return count(sa.TaskRunning) == 2 && count(sa.TaskQueued) == 1 })
	// A queued task can be cancelled too.
	if _, err := h.mgr.Cancel(context.Background(), list[3].ID); err != nil {
		t.Fatal(err)
	}
	if got := status(t, h, list[3].ID); got != sa.TaskCancelled {
		t.Fatalf("cancelled queued task is %s", got)
	}
}

func TestSpawnDepthLimit(t *testing.T) {
	h := newHarness(t, echo(t), withLimits(func(l *config.Tasks) { l.SpawnDepth = 1 }))
	parent := h.parent(user("parent: hi"))
	top, err := h.tools.ToolsFor(context.Background(), parent.ID)
	if err != nil || len(top) != 6 {
		t.Fatalf("a top-level session gets %d task tools (%v), want 6", len(top), err)
	}
	child := h.launch(parent.ID, tasks.LaunchRequest{})
	h.wait(child.ID)
	nested, err := h.tools.ToolsFor(context.Background(), child.ID)
	if err != nil || len(nested) != 0 {
		t.Fatalf("a session at the depth limit gets %d task tools (%v), want none", len(nested), err)
	}
	_, err = h.mgr.Launch(context.Background(), tasks.LaunchRequest{ParentSessionID: child.ID, Description: "d", Prompt: "p", Agent: "general"})
	if !errors.Is(err, sa.ErrLimit) || !strings.Contains(err.Error(), "spawn_depth") {
		t.Fatalf("launch beyond the depth = %v", err)
	}
}

func TestTimeouts(t *testing.T) {
	tests := []struct {
		name   string
		limits func(*config.Tasks)
		want   string
	}{
		{"task timeout", func(l *config.Tasks) { l.Timeout = config.Duration{Duration: 300 * time.Millisecond} }, "timed out after"},
		{"inactivity timeout", func(l *config.Tasks) { l.InactivityTimeout = config.Duration{Duration: 300 * time.Millisecond} }, "without progress"},
		// Shorter than the watch's tick: still a tick, never a panic.
		{"tiny inactivity timeout", func(l *config.Tasks) { l.InactivityTimeout = config.Duration{Duration: 3} }, "without progress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, stalled(t), withLimits(tt.limits))
			parent := h.parent(user("parent: hi"))
			task := h.launch(parent.ID, tasks.LaunchRequest{Description: "stuck"})
			ended := h.wait(task.ID)
			if ended.Status != sa.TaskError || !strings.Contains(ended.Error, tt.want) {
				t.Fatalf("ended %s with %q, want error containing %q", ended.Status, ended.Error, tt.want)
			}
			notes := h.notifications(parent.ID)
			if len(notes) != 1 || !strings.HasPrefix(notes[0].Text(), `✗ Agent "stuck" failed in `) || !strings.Contains(notes[0].Parts[1].Text, tt.want) {
				t.Fatalf("notifications = %+v", notes)
			}
		})
	}
	// A tool call's own timeout shorter than the limit is honoured.
	h := newHarness(t, stalled(t))
	parent := h.parent(user("parent: hi"))
	r, err := h.tools.TaskTool(context.Background(), parent.ID, tasktools.TaskInput{Description: "d", Prompt: "p", Agent: "general", Timeout: 1})
	if err != nil {
		t.Fatal(err)
	}
	id := taskIDRE.FindStringSubmatch(r.Text)[1]
	if ended := h.wait(id); !strings.Contains(ended.Error, "timed out after 1s") {
		t.Fatalf("ended with %q", ended.Error)
	}
	// One longer than the limit is refused, however large (no overflow
	// into a short one); none gets the limit.
	for _, secs := range []int64{7200, 18446744074, math.MaxInt64} {
		_, err := h.tools.TaskTool(context.Background(), parent.ID, tasktools.TaskInput{Description: "d", Prompt: "p", Agent: "general", Timeout: secs})
		want := fmt.Sprintf("timeout must be at most %d seconds, the task time limit (tasks.timeout)", int64(config.DefaultTaskTimeout/time.Second))
		if !errors.Is(err, sa.ErrInvalid) || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("timeout %d s: %v, want %q", secs, err, want)
		}
	}
	r, err = h.tools.TaskTool(context.Background(), parent.ID, tasktools.TaskInput{Description: "d", Prompt: "p", Agent: "general"})
	if err != nil {
		t.Fatal(err)
	}
	task, _ := h.store.Task(context.Background(), taskIDRE.FindStringSubmatch(r.Text)[1])
	if task.Timeout.Duration() != config.DefaultTaskTimeout {
		t.Fatalf("no timeout gave a task timeout of %s, want the limit %s", task.Timeout, config.DefaultTaskTimeout)
	}
	if _, err := h.mgr.Cancel(context.Background(), task.ID); err != nil {
		t.Fatal(err)
	}
}

func TestProviderFailureEndsInError(t *testing.T) {
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Status: 400, ErrorType: "invalid_request_error", ErrorMessage: "prompt is too long"}
	})
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{})
	ended := h.wait(task.ID)
	if ended.Status != sa.TaskError || !strings.Contains(ended.Error, "prompt is too long") {
		t.Fatalf("ended %s with %q", ended.Status, ended.Error)
	}
	r, _ := h.tools.OutputTool(context.Background(), parent.ID, tasktools.OutputInput{TaskID: task.ID})
	if !strings.Contains(r.Text, "failed") || !strings.Contains(r.Text, "prompt is too long") {
		t.Fatalf("output = %q", r.Text)
	}
}

func TestTaskToolValidation(t *testing.T) {
	h := newHarness(t, echo(t))
	parent := h.parent(user("parent: hi"))
	tests := []struct {
		name string
		in   tasktools.TaskInput
		want string
	}{
		{"unknown agent", tasktools.TaskInput{Description: "d", Prompt: "p", Agent: "wizard"}, `unknown agent "wizard": available agents are explore, general`},
		{"no agent", tasktools.TaskInput{Description: "d", Prompt: "p"}, "agent is required: available agents are explore, general"},
		{"no description", tasktools.TaskInput{Prompt: "p", Agent: "general"}, "description is required"},
		{"no prompt", tasktools.TaskInput{Description: "d", Agent: "general"}, "prompt is required"},
		{"negative timeout", tasktools.TaskInput{Description: "d", Prompt: "p", Agent: "general", Timeout: -1}, "timeout cannot be negative"},
		{"resume unknown", tasktools.TaskInput{Resume: "zzzzzz", Prompt: "p"}, "no task with id zzzzzz"},
		{"resume without prompt", tasktools.TaskInput{Resume: "zzzzzz"}, "prompt is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.tools.TaskTool(context.Background(), parent.ID, tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
		})
	}
	if list, _ := h.mgr.List(context.Background(), parent.ID, ""); len(list) != 0 {
		t.Fatal("a rejected call created a task")
	}
	// Through the agent's tools the failure is an error result, with the
	// same sentence and no category prefix.
	toolList, _ := h.tools.ToolsFor(context.Background(), parent.ID)
	res, err := toolList[0].Run(context.Background(), []byte(`{"prompt":"p","agent":"general","fork":true,"resume":"abcd"}`))
	if err != nil || !res.IsError || !strings.HasPrefix(res.Output, "resume and fork are mutually exclusive") {
		t.Fatalf("tool result = %+v, %v", res, err)
	}
}

// TestBatchNotifications: the tasks of a batch each say how many of the
// batch are done, and the last one that all are.
func TestBatchNotifications(t *testing.T) {
	h := newHarness(t, echo(t))
	parent := h.parent(user("parent: hi"))
	var ids []string
	for range 3 {
		ids = append(ids, h.launch(parent.ID, tasks.LaunchRequest{BatchID: "batch"}).ID)
	}
	for _, id := range ids {
		h.wait(id)
	}
	if due, err := h.mgr.WakeDue(context.Background(), parent.ID); err != nil || !due {
		t.Fatalf("WakeDue once all ended = %v, %v", due, err)
	}
	// The last notification of the batch says all are done.
	notes := h.notifications(parent.ID)
	last := notes[len(notes)-1]
	if !strings.HasSuffix(last.Text(), "Task Progress: 3/3") || !strings.Contains(last.Parts[1].Text, "All 3 tasks finished.") {
		t.Fatalf("last notification = %q / %q", last.Text(), last.Parts[1].Text)
	}
	// The first ending counts the tasks launched by then: a task may end
	// before the next is launched.
	first := notes[0]
	if text := first.Text(); !strings.HasSuffix(text, "Task Progress: 1/1") && !strings.HasSuffix(text, "Task Progress: 1/2") &&
		!strings.HasSuffix(text, "Task Progress: 1/3") && !strings.HasSuffix(text, "Task Progress: 2/3") {
		t.Fatalf("first notification = %q", text)
	}
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestRestartReconcilesRunningTasks(t *testing.T) {
	h := newHarness(t, stalled(t))
	parent := h.parent(user("parent: hi"))
	// As a crash leaves them: tasks running and queued, their runner's
	// process gone.
	host, _ := os.Hostname()
	dead := sa.Runner{ID: "runner-crashed", Host: host, PID: deadPID(t)}
	if err := h.store.RegisterRunner(context.Background(), dead); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range []sa.TaskStatus{sa.TaskRunning, sa.TaskQueued, sa.TaskRunning} {
		task, err := h.store.CreateTask(context.Background(), sa.NewTask{
			Task:    sa.Task{ParentSessionID: parent.ID, Description: "orphan", Prompt: "p", Agent: "general", Status: s, RunnerID: dead.ID, BatchID: "b"},
			Session: sa.NewSession{Agent: "general", Messages: []sa.Message{user("p")}},
		})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	h.close()
	h.open() // a new process: its manager reconciles at start
	for _, id := range ids {
		task, err := h.store.Task(context.Background(), id)
		if err != nil || task.Status != sa.TaskError || !strings.Contains(task.Error, "interrupted by restart") {
			t.Fatalf("task after restart = %+v, %v", task, err)
		}
	}
	notes := h.notifications(parent.ID)
	if len(notes) != 3 || !strings.HasSuffix(notes[2].Text(), "Task Progress: 3/3") {
		t.Fatalf("notifications after restart = %v", notes)
	}
	if runners, _ := h.store.Runners(context.Background()); len(runners) != 1 || runners[0].ID != h.mgr.RunnerID() {
		t.Fatalf("runners = %+v: the dead one must be removed", runners)
	}
	// List and output work across the restart.
	r, err := h.tools.OutputTool(context.Background(), parent.ID, tasktools.OutputInput{TaskID: ids[0]})
	if err != nil || !strings.Contains(r.Text, "interrupted by restart") {
		t.Fatalf("output = %q, %v", r.Text, err)
	}

	// A live runner's tasks are left alone.
	live := sa.Runner{ID: "runner-live", Host: host, PID: os.Getpid()}
	if err := h.store.RegisterRunner(context.Background(), live); err != nil {
		t.Fatal(err)
	}
	kept, err := h.store.CreateTask(context.Background(), sa.NewTask{
		Task:    sa.Task{ParentSessionID: parent.ID, Description: "kept", Prompt: "p", Agent: "general", Status: sa.TaskRunning, RunnerID: live.ID},
		Session: sa.NewSession{Messages: []sa.Message{user("p")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := h.mgr.Reconcile(context.Background()); err != nil || n != 0 || status(t, h, kept.ID) != sa.TaskRunning {
		t.Fatalf("reconcile ended %d tasks (%v): a live runner's task must stay running", n, err)
	}

	// So are tasks that wait in a job queue for a node to take them: no
	// process holds them yet.
	for _, st := range []sa.TaskStatus{sa.TaskQueued, sa.TaskResumed} {
		waiting, err := h.store.CreateTask(context.Background(), sa.NewTask{
			Task:    sa.Task{ParentSessionID: parent.ID, Description: "waiting", Prompt: "p", Agent: "general", Status: sa.TaskQueued, RunnerID: runner.Queue},
			Session: sa.NewSession{Messages: []sa.Message{user("p")}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if st == sa.TaskResumed {
			_, err = h.store.UpdateTask(context.Background(), waiting.ID, func(tk *sa.Task) error {
				tk.Status = sa.TaskRunning
				return nil
			})
			if err == nil {
				_, _, err = h.store.FinishTask(context.Background(), waiting.ID, func(tk *sa.Task) error {
					tk.Status = sa.TaskCompleted
					return nil
				}, func(sa.Task, sa.BatchState) sa.Message { return user("done") })
			}
			if err == nil {
				_, err = h.store.UpdateTask(context.Background(), waiting.ID, func(tk *sa.Task) error {
					tk.Status, tk.RunnerID, tk.ResumeCount = sa.TaskResumed, runner.Queue, 1
					return nil
				})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if n, err := tasks.Reconcile(context.Background(), h.store); err != nil || n != 0 || status(t, h, waiting.ID) != st {
			t.Fatalf("reconcile ended %d tasks (%v): a task %s in the queue must stay so", n, err, st)
		}
	}
}

func TestReconcileFromOutsideAManagerSeesAZombieRunner(t *testing.T) {
	h := newHarness(t, stalled(t))
	parent := h.parent(user("parent: hi"))
	// A runner killed but not yet reaped by its parent: its pid still
	// answers kill(pid, 0), but it runs nothing.
	zombie := exec.Command("sleep", "300")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	if err := zombie.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait() //nolint:errcheck // reaped at the end
	host, _ := os.Hostname()
	crashed := sa.Runner{ID: "runner-zombie", Host: host, PID: zombie.Process.Pid}
	if err := h.store.RegisterRunner(context.Background(), crashed); err != nil {
		t.Fatal(err)
	}
	task, err := h.store.CreateTask(context.Background(), sa.NewTask{
		Task:    sa.Task{ParentSessionID: parent.ID, Description: "orphan", Prompt: "p", Agent: "general", Status: sa.TaskRunning, RunnerID: crashed.ID},
		Session: sa.NewSession{Agent: "general", Messages: []sa.Message{user("p")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the runner to become a zombie", func() bool {
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", crashed.PID))
		return strings.Contains(string(stat), ") Z ")
	})
	// What a command that only reads the store (superagents tasks) runs.
	if _, err := tasks.Reconcile(context.Background(), h.store); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.store.Task(context.Background(), task.ID); got.Status != sa.TaskError || !strings.Contains(got.Error, "interrupted") {
		t.Fatalf("task of a zombie runner = %s %q: want it ended as interrupted", got.Status, got.Error)
	}
	if notes := h.notifications(parent.ID); len(notes) != 1 {
		t.Fatalf("%d notifications, want 1", len(notes))
	}
	// The manager's own runner is alive and its tasks are left alone.
	if runners, _ := h.store.Runners(context.Background()); len(runners) != 1 || runners[0].ID != h.mgr.RunnerID() {
		t.Fatalf("runners = %+v: only the live manager's must be left", runners)
	}
}

// meanwhileStore is a store in which something happens between two
// reads: once, right after the first read of the task list or of the
// runners (or, with afterRunners, of the runners only).
type meanwhileStore struct {
	sa.Store
	afterRunners bool
	once         sync.Once
	happen       func()
}

func (s *meanwhileStore) ListTasks(ctx context.Context, f sa.TaskFilter) ([]sa.Task, error) {
	list, err := s.Store.ListTasks(ctx, f)
	if !s.afterRunners {
		s.once.Do(s.happen)
	}
	return list, err
}

func (s *meanwhileStore) Runners(ctx context.Context) ([]sa.Runner, error) {
	list, err := s.Store.Runners(ctx)
	s.once.Do(s.happen)
	return list, err
}

func TestReconcileLeavesAProcessStartingMeanwhileAlone(t *testing.T) {
	h := newHarness(t, stalled(t))
	parent := h.parent(user("parent: hi"))
	host, _ := os.Hostname()
	var launched sa.Task
	st := &meanwhileStore{Store: h.store, happen: func() {
		ctx := context.Background()
		fresh := sa.Runner{ID: "runner-fresh", Host: host, PID: os.Getpid()}
		if err := h.store.RegisterRunner(ctx, fresh); err != nil {
			t.Error(err)
			return
		}
		var err error
		launched, err = h.store.CreateTask(ctx, sa.NewTask{
			Task:    sa.Task{ParentSessionID: parent.ID, Description: "fresh", Prompt: "p", Agent: "general", Status: sa.TaskRunning, RunnerID: fresh.ID},
			Session: sa.NewSession{Agent: "general", Messages: []sa.Message{user("p")}},
		})
		if err != nil {
			t.Error(err)
		}
	}}
	if _, err := tasks.Reconcile(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if launched.ID == "" {
		t.Fatal("the other process did not start")
	}
	if got, _ := h.store.Task(context.Background(), launched.ID); got.Status != sa.TaskRunning {
		t.Fatalf("task of a process that started during the reconcile = %s %q: want it left running", got.Status, got.Error)
	}
	if notes := h.notifications(parent.ID); len(notes) != 0 {
		t.Fatalf("%d notifications, want none", len(notes))
	}
}

// TestReconcileLeavesATaskResumedMeanwhile: a task of a dead runner that
// ended and was resumed by a process started since the runners were read
// is that process's now, and left alone.
func TestReconcileLeavesATaskResumedMeanwhile(t *testing.T) {
	h := newHarness(t, stalled(t))
	parent := h.parent(user("parent: hi"))
	ctx := context.Background()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	dead := sa.Runner{ID: "runner-dead", Host: host, PID: gone.Process.Pid}
	if err := h.store.RegisterRunner(ctx, dead); err != nil {
		t.Fatal(err)
	}
	task, err := h.store.CreateTask(ctx, sa.NewTask{
		Task:    sa.Task{ParentSessionID: parent.ID, Description: "old", Prompt: "p", Agent: "general", Status: sa.TaskRunning, RunnerID: dead.ID},
		Session: sa.NewSession{Agent: "general", Messages: []sa.Message{user("p")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	st := &meanwhileStore{Store: h.store, afterRunners: true, happen: func() {
		fresh := sa.Runner{ID: "runner-fresh", Host: host, PID: os.Getpid()}
		if err := h.store.RegisterRunner(ctx, fresh); err != nil {
			t.Error(err)
		}
		for _, next := range []sa.TaskStatus{sa.TaskCompleted, sa.TaskResumed} {
			_, err := h.store.UpdateTask(ctx, task.ID, func(tk *sa.Task) error {
				tk.Status = next
				if next == sa.TaskResumed {
					tk.RunnerID, tk.ResumeCount = fresh.ID, tk.ResumeCount+1
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}
	}}
	if _, err := tasks.Reconcile(ctx, st); err != nil {
		t.Fatal(err)
	}
	if got, _ := h.store.Task(ctx, task.ID); got.Status != sa.TaskResumed {
		t.Fatalf("the task resumed meanwhile = %s %q: want it left resumed", got.Status, got.Error)
	}
}

func TestShutdownEndsRunningTasks(t *testing.T) {
	h := newHarness(t, stalled(t))
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Description: "long"})
	h.close()
	h.open()
	got, _ := h.store.Task(context.Background(), task.ID)
	if got.Status != sa.TaskError || !strings.Contains(got.Error, "superagents stopped") {
		t.Fatalf("after a graceful stop: %+v", got)
	}
	if notes := h.notifications(parent.ID); len(notes) != 1 {
		t.Fatalf("%d notifications, want 1", len(notes))
	}
}

func TestOutputBlockTimesOutWithPartialOutput(t *testing.T) {
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		if facts(t, req).LastName == "bash" {
			return llmtest.Reply{Text: "never", Fault: llmtest.Stall}
		}
		return llmtest.Reply{Text: "Looking at the logs now.", ToolCalls: []llmtest.ToolCall{toolCall("bash", map[string]any{"command": "true"})}}
	})
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Description: "logs"})
	eventually(t, "the first answer", func() bool {
		got, _ := h.store.Task(context.Background(), task.ID)
		return got.Progress.ToolCalls > 0
	})
	r, err := h.tools.OutputTool(context.Background(), parent.ID, tasktools.OutputInput{TaskID: task.ID, Block: true, Timeout: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Text, "Timed out after 1s waiting for Task") || !strings.Contains(r.Text, "still running") ||
		!strings.Contains(r.Text, "Latest output so far:\nLooking at the logs now.") || !strings.Contains(r.Text, "last: bash") {
		t.Fatalf("blocking output = %q", r.Text)
	}
	h.mgr.Cancel(context.Background(), task.ID)
}

// TestNestedTaskFinishesWithItsOwnTasks: a task whose agent launches a
// task of its own completes only after that one ended and it was woken to
// use its result.
func TestNestedTaskFinishesWithItsOwnTasks(t *testing.T) {
	// The sub-task works (a command runs) for longer than the inactivity
	// timeout: its parent task, waiting for it, must not count as idle.
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		f := facts(t, req)
		all := strings.Join(f.Texts, "\n")
		switch {
		case strings.Contains(all, "level2"):
			if f.LastName == "bash" {
				return llmtest.Reply{Text: "level2 result"}
			}
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall("bash", map[string]any{"command": "sleep 1.5"})}}
		case strings.Contains(all, "level1"):
			switch {
			case strings.Contains(f.LastUser, "finished"): // woken by the notification
				return llmtest.Reply{Text: "level1 done after its sub-task"}
			case f.LastName == sa.TaskTool:
				return llmtest.Reply{Text: "level1 waiting"}
			}
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall(sa.TaskTool, map[string]any{
				"description": "level two", "prompt": "level2 work", "agent": "general"})}}
		}
		return llmtest.Reply{Text: "parent"}
	}, withLimits(func(l *config.Tasks) { l.InactivityTimeout = config.Duration{Duration: 500 * time.Millisecond} }))
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Description: "level one", Prompt: "level1 spawn"})
	ended := h.wait(task.ID)
	if ended.Status != sa.TaskCompleted || ended.Result != "level1 done after its sub-task" {
		t.Fatalf("level one = %s %q %q", ended.Status, ended.Result, ended.Error)
	}
	subs, _ := h.mgr.List(context.Background(), task.ID, "")
	if len(subs) != 1 || subs[0].Status != sa.TaskCompleted || subs[0].CompletedAt.After(*ended.CompletedAt) {
		t.Fatalf("sub-tasks = %+v", subs)
	}
	if d, _ := h.mgr.Depth(context.Background(), subs[0].ID); d != 2 {
		t.Fatalf("depth of the sub-task = %d, want 2", d)
	}
}

// TestWorkAfterAPauseRegistersFirst: a node that was paused for longer
// than a heartbeat may have been taken for dead, its runner removed; the
// job it takes then must not be ended by a reconcile as a dead runner's.
// It registers again before it claims the task, which then runs to its
// end.
func TestWorkAfterAPauseRegistersFirst(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "done"} })
	parent := h.parent(user("parent: hi"))
	queued, err := h.store.CreateTask(ctx, sa.NewTask{
		Task:    sa.Task{ParentSessionID: parent.ID, Description: "queued", Prompt: "p", Agent: "general", Status: sa.TaskQueued, RunnerID: runner.Queue},
		Session: sa.NewSession{Agent: "general", Messages: []sa.Message{user("p")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Another node took this one for dead during its pause.
	if err := h.store.RemoveRunner(ctx, h.mgr.RunnerID()); err != nil {
		t.Fatal(err)
	}
	tasks.MarkedAliveAt(h.mgr, time.Now().Add(-time.Hour))
	if err := h.mgr.Work(ctx, tasks.Job{TaskID: queued.ID}); err != nil {
		t.Fatal(err)
	}
	runners, err := h.store.Runners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(runners, func(r sa.Runner) bool { return r.ID == h.mgr.RunnerID() }) {
		t.Fatalf("runners after the job = %v: this node did not register again", runners)
	}
	if n, err := tasks.Reconcile(ctx, h.store); err != nil || n != 0 {
		t.Fatalf("a reconcile ended %d tasks (%v)", n, err)
	}
	if got := h.wait(queued.ID); got.Status != sa.TaskCompleted {
		t.Fatalf("the task ended %s %q, want completed", got.Status, got.Error)
	}
}

// TestEndingStoresTheLastProgress: a run's progress is saved without the
// run waiting for it (and its ending writes the last of it): a task that
// made three tool calls ends with the three counted and named.
func TestEndingStoresTheLastProgress(t *testing.T) {
	var requests atomic.Int32 // the one task's requests come one at a time
	h := newHarness(t, func(llmtest.Request) llmtest.Reply {
		n := requests.Add(1)
		if n > 3 {
			return llmtest.Reply{Text: "done"}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall("bash", map[string]any{"command": fmt.Sprintf("echo call %d", n)})}}
	})
	parent := h.parent(user("parent: hi"))
	task := h.launch(parent.ID, tasks.LaunchRequest{Description: "three calls"})
	got := h.wait(task.ID)
	if got.Status != sa.TaskCompleted {
		t.Fatalf("task ended %s %q", got.Status, got.Error)
	}
	if got.Progress.ToolCalls != 3 || got.Progress.ByName["bash"] != 3 || len(got.Progress.LastTools) != 3 {
		t.Fatalf("stored progress at the end = %+v, want the three bash calls", got.Progress)
	}
}

// TestProgressIsStoredLaterTogether: a run's progress is stored a while
// after it changes, the changes that come meanwhile together. A task that
// ends before then stores it only with its ending (and nothing waits for
// the save it dropped); one that goes on has it stored while it runs.
func TestProgressIsStoredLaterTogether(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		delay time.Duration
		// stall: the task's fourth request never ends (the task runs on).
		stall bool
	}{
		{"ended before the save", time.Hour, false},
		{"saved while running", 20 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var requests atomic.Int32 // the one task's requests come one at a time
			h := newHarness(t, func(llmtest.Request) llmtest.Reply {
				switch n := requests.Add(1); {
				case n <= 3:
					return llmtest.Reply{ToolCalls: []llmtest.ToolCall{toolCall("bash", map[string]any{"command": fmt.Sprintf("echo call %d", n)})}}
				case tc.stall:
					return llmtest.Reply{Text: "never", Fault: llmtest.Stall}
				}
				return llmtest.Reply{Text: "done"}
			})
			tasks.SetProgressDelay(h.mgr, tc.delay)
			parent := h.parent(user("parent: hi"))
			task := h.launch(parent.ID, tasks.LaunchRequest{Description: "three calls"})
			if tc.stall {
				eventually(t, "the three calls stored while the task runs", func() bool {
					got, _ := h.store.Task(ctx, task.ID)
					return got.Status == sa.TaskRunning && got.Progress.ToolCalls == 3
				})
				h.mgr.Cancel(ctx, task.ID)
				return
			}
			if got := h.wait(task.ID); got.Status != sa.TaskCompleted || got.Progress.ToolCalls != 3 {
				t.Fatalf("task ended %s with progress %+v, want completed with three calls", got.Status, got.Progress)
			}
			changes, err := h.store.Changes(ctx, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range changes {
				if c.TaskID != task.ID || c.Kind != sa.ChangeTaskUpdated {
					continue
				}
				if got, _ := c.Task(); got.Status.Active() && got.Progress.ToolCalls > 0 {
					t.Errorf("progress stored before the ending: %+v", got.Progress)
				}
			}
		})
	}
}

// TestATaskRunsItsSessionsModel: a task runs its profile's model if the
// profile names one, its parent's otherwise; forked or not, and whether
// its run knows its session from the launch (a new one) or reads it (a
// fork).
func TestATaskRunsItsSessionsModel(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		agent string
		fork  bool
		want  string
	}{
		{"general", false, "claude-parents"},
		{"general", true, "claude-parents"},
		{"pinned", false, "claude-pinned"},
		{"pinned", true, "claude-pinned"},
	} {
		t.Run(fmt.Sprintf("%s/fork=%v", tc.agent, tc.fork), func(t *testing.T) {
			var models sync.Map // the model each request asked for
			h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
				var body struct {
					Model string `json:"model"`
				}
				if err := req.Decode(&body); err == nil {
					models.Store(body.Model, true)
				}
				return llmtest.Reply{Text: "done"}
			})
			// A profile with a model of its own, loaded at a restart.
			dir := agents.ProjectDir(h.ws)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			profile := "---\ndescription: pinned to a model\nmodel: anthropic/claude-pinned\n---\nBe brief.\n"
			if err := os.WriteFile(filepath.Join(dir, "pinned.md"), []byte(profile), 0o644); err != nil {
				t.Fatal(err)
			}
			h.close()
			h.open()
			parent, err := h.store.CreateSession(ctx, sa.NewSession{Agent: "general", Model: "anthropic/claude-parents",
				Messages: []sa.Message{user("parent: hi")}})
			if err != nil {
				t.Fatal(err)
			}
			task := h.launch(parent.ID, tasks.LaunchRequest{Description: "model", Agent: tc.agent, Fork: tc.fork})
			if got := h.wait(task.ID); got.Status != sa.TaskCompleted {
				t.Fatalf("task ended %s %q", got.Status, got.Error)
			}
			var asked []string
			models.Range(func(k, _ any) bool { asked = append(asked, k.(string)); return true })
			if len(asked) != 1 || asked[0] != tc.want {
				t.Fatalf("the task asked for models %q, want only %s", asked, tc.want)
			}
		})
	}
}

// TestARunningTaskHoldsItsSession: a task launched here holds its
// session's turn lease from its creation (taken in the same transaction)
// while it runs, and gives it back with its ending.
func TestARunningTaskHoldsItsSession(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		stall bool // the task runs until cancelled
	}{{"completed", false}, {"cancelled", true}} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			h := newHarness(t, func(llmtest.Request) llmtest.Reply {
				if tc.stall {
					return llmtest.Reply{Text: "never", Fault: llmtest.Stall}
				}
				<-release
				return llmtest.Reply{Text: "done"}
			})
			parent := h.parent(user("parent: hi"))
			task := h.launch(parent.ID, tasks.LaunchRequest{Description: "holds"})
			l, err := h.store.Lease(ctx, task.ID)
			if err != nil || l.RunnerID != h.mgr.RunnerID() || l.Holder != tasks.HolderTask || l.TaskID != task.ID ||
				!l.AcquiredAt.Equal(task.CreatedAt) {
				t.Fatalf("the running task's lease = %+v, %v; want this runner's, taken with the task (%s)", l, err, task.CreatedAt)
			}
			if tc.stall {
				if _, err := h.mgr.Cancel(ctx, task.ID); err != nil {
					t.Fatal(err)
				}
			} else {
				close(release)
				if got := h.wait(task.ID); got.Status != sa.TaskCompleted {
					t.Fatalf("task ended %s %q", got.Status, got.Error)
				}
			}
			if l, err := h.store.Lease(ctx, task.ID); !errors.Is(err, sa.ErrNotFound) {
				t.Fatalf("the ended task's session is still leased: %+v, %v", l, err)
			}
		})
	}
}
