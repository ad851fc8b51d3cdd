package tasks_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/tasks"
	"github.com/superagents/superagents/internal/tasktools"
)

// stepUsage is what every response of the looping model reports: 200
// tokens of every kind, as Anthropic's usage object counts them
// (input_tokens, output_tokens, cache_read_input_tokens,
// cache_creation_input_tokens).
var stepUsage = llmtest.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 50, CacheWriteTokens: 30}

// testPrice is the test model's price per million tokens: one step of
// stepUsage costs $0.0007275.
var testPrice = config.Model{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}

// looper is a model that never finishes: each response calls glob again
// with a new pattern (so no repeated call ends the turn). It counts the
// requests of each task by the task's prompt.
type looper struct {
	mu    sync.Mutex
	steps map[string]int
}

func (l *looper) count(prompt string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.steps[prompt]
}

func (l *looper) reply(t *testing.T) func(llmtest.Request) llmtest.Reply {
	return func(req llmtest.Request) llmtest.Reply {
		f := facts(t, req)
		if len(f.Texts) == 0 {
			return llmtest.Reply{Text: "nothing to do"}
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.steps == nil {
			l.steps = map[string]int{}
		}
		l.steps[f.Texts[0]]++
		n := l.steps[f.Texts[0]]
		return llmtest.Reply{Usage: stepUsage, ToolCalls: []llmtest.ToolCall{
			toolCall("glob", map[string]any{"pattern": fmt.Sprintf("*.step%d", n)})}}
	}
}

func priced(c *config.Config) {
	c.Models = map[string]config.Model{"anthropic/claude-test": testPrice}
}

func TestBudgetStopsALoopingTask(t *testing.T) {
	tests := []struct {
		name   string
		opts   []option
		in     tasktools.TaskInput
		budget sa.Budget // the task's, as launched
		steps  int       // model requests before it stops
		reason string
	}{
		{name: "max_tokens asked", in: tasktools.TaskInput{MaxTokens: 1000},
			budget: sa.Budget{MaxTokens: 1000}, steps: 5,
			reason: "budget reached: 1000 of 1000 tokens (input, output and cache) spent by this task tree"},
		{name: "max_cost asked, priced model", opts: []option{withFork(priced)}, in: tasktools.TaskInput{MaxCost: 0.003},
			budget: sa.Budget{MaxCost: 0.003}, steps: 5,
			reason: "budget reached: $0.0036 of $0.0030 spent by this task tree"},
		{name: "tasks.max_tokens", opts: []option{withLimits(func(l *config.Tasks) { l.MaxTokens = 600 })},
			budget: sa.Budget{MaxTokens: 600}, steps: 3,
			reason: "budget reached: 600 of 600 tokens (input, output and cache) spent by this task tree"},
		{name: "tasks.max_cost", opts: []option{withFork(priced), withLimits(func(l *config.Tasks) { l.MaxCost = 0.002 })},
			budget: sa.Budget{MaxCost: 0.002}, steps: 3,
			reason: "budget reached: $0.0022 of $0.0020 spent by this task tree"},
		{name: "asking more than the config gets the config's",
			opts: []option{withLimits(func(l *config.Tasks) { l.MaxTokens = 400 })}, in: tasktools.TaskInput{MaxTokens: 5000},
			budget: sa.Budget{MaxTokens: 400}, steps: 2,
			reason: "budget reached: 400 of 400 tokens (input, output and cache) spent by this task tree"},
		{name: "asking less than the config", opts: []option{withLimits(func(l *config.Tasks) { l.MaxTokens = 5000 })},
			in: tasktools.TaskInput{MaxTokens: 400}, budget: sa.Budget{MaxTokens: 400}, steps: 2,
			reason: "budget reached: 400 of 400 tokens (input, output and cache) spent by this task tree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var model looper
			h := newHarness(t, model.reply(t), tt.opts...)
			parent := h.parent(user("parent: hi"))
			in := tt.in
			in.Description, in.Prompt, in.Agent = "loop", "loop forever", "general"
			reply, err := h.tools.TaskTool(context.Background(), parent.ID, in)
			if err != nil {
				t.Fatal(err)
			}
			launched := reply.Data.(tasktools.View).Task
			if launched.Budget != tt.budget {
				t.Fatalf("budget = %+v, want %+v", launched.Budget, tt.budget)
			}
			if !strings.Contains(reply.Text, "Its budget, with the tasks it launches:") {
				t.Errorf("the launch reply does not tell the budget: %q", reply.Text)
			}
			ended := h.wait(launched.ID)
			if ended.Status != sa.TaskError || ended.Error != tt.reason {
				t.Fatalf("task ended %s %q, want error %q", ended.Status, ended.Error, tt.reason)
			}
			// Stopped at once: no request after the one that spent the
			// budget, and no tool of that response ran.
			if n := model.count("loop forever"); n != tt.steps {
				t.Errorf("%d model requests, want %d", n, tt.steps)
			}
			notes := h.notifications(parent.ID)
			if len(notes) != 1 {
				t.Fatalf("%d notifications, want 1", len(notes))
			}
			if text := notes[0].Text(); !strings.HasPrefix(text, `✗ Agent "loop" failed`) {
				t.Errorf("notification %q", text)
			}
			hint := notes[0].Parts[1].Text
			if want := fmt.Sprintf("Background task %s (%q) failed: %s", launched.ID, "loop", tt.reason); hint != want {
				t.Errorf("notification hint = %q, want %q", hint, want)
			}
		})
	}
}

// TestBudgetOfAThreeLevelTree: the grandchild spends the budget of the
// top task's tree; the three stop, each with the reason, and each parent
// hears once.
func TestBudgetOfAThreeLevelTree(t *testing.T) {
	var loop looper
	spawn := func(prompt string, extra map[string]any) llmtest.Reply {
		in := map[string]any{"description": "level " + prompt, "prompt": prompt + " work", "agent": "general"}
		for k, v := range extra {
			in[k] = v
		}
		return llmtest.Reply{Usage: llmtest.Usage{OutputTokens: 1}, ToolCalls: []llmtest.ToolCall{toolCall(sa.TaskTool, in)}}
	}
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		f := facts(t, req)
		all := strings.Join(f.Texts, "\n")
		switch {
		case strings.Contains(all, "three work"):
			return loop.reply(t)(req)
		case f.LastName == sa.TaskTool:
			return llmtest.Reply{Text: "waiting", Usage: llmtest.Usage{OutputTokens: 1}}
		case strings.Contains(all, "two work"):
			return spawn("three", nil)
		case strings.Contains(all, "one work"):
			// More than the tree has left: the child gets what is left.
			return spawn("two", map[string]any{"max_tokens": 5000})
		}
		return llmtest.Reply{Text: "parent"}
	})
	parent := h.parent(user("parent: hi"))
	one := h.launch(parent.ID, tasks.LaunchRequest{Description: "level one", Prompt: "one work", Budget: sa.Budget{MaxTokens: 1000}})
	one = h.wait(one.ID)
	eventually(t, "the tree to stop", func() bool { return h.mgr.Active(parent.ID) == 0 })

	ctx := context.Background()
	child := func(id string) sa.Task {
		t.Helper()
		list, err := h.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: id})
		if err != nil || len(list) != 1 {
			t.Fatalf("tasks of %s: %v, %v", id, list, err)
		}
		return h.wait(list[0].ID)
	}
	two := child(one.ID)
	three := child(two.ID)
	if two.Budget.MaxTokens <= 0 || two.Budget.MaxTokens >= 1000 {
		t.Errorf("level two's budget = %d tokens: want what was left of 1000", two.Budget.MaxTokens)
	}
	if three.Budget.MaxTokens != 0 {
		t.Errorf("level three asked for no budget and got %d tokens", three.Budget.MaxTokens)
	}
	// 2 tokens each for levels one and two, 200 per grandchild step: the
	// fifth step reaches 1000.
	const spent = "1004 of 1000 tokens (input, output and cache)"
	want := map[string]string{
		one.ID:   "budget reached: " + spent + " spent by this task tree",
		two.ID:   "budget reached: " + spent + ` spent by the task tree of task ` + sa.ShortID(one.ID) + ` ("level one")`,
		three.ID: "budget reached: " + spent + ` spent by the task tree of task ` + sa.ShortID(one.ID) + ` ("level one")`,
	}
	for _, tk := range []sa.Task{one, two, three} {
		if tk.Status != sa.TaskError || tk.Error != want[tk.ID] {
			t.Errorf("%s ended %s %q, want error %q", tk.Description, tk.Status, tk.Error, want[tk.ID])
		}
	}
	if n := loop.count("three work"); n != 5 {
		t.Errorf("the grandchild made %d requests, want 5", n)
	}
	for _, id := range []string{parent.ID, one.ID, two.ID} {
		if notes := h.notifications(id); len(notes) != 1 || !strings.Contains(notes[0].Text(), "failed") {
			t.Errorf("notifications of %s = %v, want one failure", id, notes)
		}
	}
}

// TestBudgetCountsResumes: a resume runs against what its tree spent
// before; once spent, a further resume stops before asking the model.
func TestBudgetCountsResumes(t *testing.T) {
	var mu sync.Mutex
	requests := 0
	h := newHarness(t, func(req llmtest.Request) llmtest.Reply {
		mu.Lock()
		defer mu.Unlock()
		requests++
		return llmtest.Reply{Text: fmt.Sprintf("answer %d", requests), Usage: llmtest.Usage{InputTokens: 500, OutputTokens: 100}}
	})
	parent := h.parent(user("parent: hi"))
	ctx := context.Background()
	task := h.launch(parent.ID, tasks.LaunchRequest{Description: "resumable", Budget: sa.Budget{MaxTokens: 1000}})
	if got := h.wait(task.ID); got.Status != sa.TaskCompleted {
		t.Fatalf("first run: %s %q", got.Status, got.Error)
	}
	const reason = "budget reached: 1200 of 1000 tokens (input, output and cache) spent by this task tree"
	for resume := 1; resume <= 2; resume++ {
		if _, err := h.mgr.Resume(ctx, task.ID, "more", ""); err != nil {
			t.Fatal(err)
		}
		got := h.wait(task.ID)
		if got.Status != sa.TaskError || got.Error != reason || got.Result != "answer 1" {
			t.Fatalf("resume #%d ended %s %q (result %q), want error %q with the first answer kept", resume, got.Status, got.Error, got.Result, reason)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if requests != 2 {
		t.Errorf("%d model requests, want 2: the second resume must stop before asking the model", requests)
	}
	notes := h.notifications(parent.ID)
	if len(notes) != 3 || !strings.HasPrefix(notes[2].Text(), "✗ Resume #2 failed") {
		t.Fatalf("notifications = %v", notes)
	}
}

func TestBudgetValidation(t *testing.T) {
	tests := []struct {
		name  string
		opts  []option
		in    tasktools.TaskInput
		field string // the FieldError's field, if one
		want  string
	}{
		{"negative max_cost", nil, tasktools.TaskInput{MaxCost: -1}, "max_cost", "max_cost must be a number of dollars"},
		{"negative max_tokens", nil, tasktools.TaskInput{MaxTokens: -1}, "max_tokens", "max_tokens cannot be negative"},
		{"budget on a resume", nil, tasktools.TaskInput{Resume: "abcd", MaxTokens: 10}, "max_tokens", "a resumed task keeps the budget it was launched with"},
		{"max_cost on an unpriced model", nil, tasktools.TaskInput{MaxCost: 1}, "max_cost",
			`model anthropic/claude-test has no price in the configuration ([models."anthropic/claude-test"]), so max_cost cannot hold the task to a cost`},
		{"tasks.max_cost on an unpriced model", []option{withLimits(func(l *config.Tasks) { l.MaxCost = 1 })}, tasktools.TaskInput{}, "",
			"so tasks.max_cost cannot hold the task to a cost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, echo(t), tt.opts...)
			parent := h.parent(user("parent: hi"))
			in := tt.in
			in.Prompt = "p"
			if in.Resume == "" {
				in.Description, in.Agent = "d", "general"
			}
			_, err := h.tools.TaskTool(context.Background(), parent.ID, in)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, sa.ErrInvalid) {
				t.Fatalf("error = %v, want an invalid input saying %q", err, tt.want)
			}
			var fe *sa.FieldError
			var re *runtime.RequestError
			if tt.field != "" && (!errors.As(err, &fe) || fe.Field != tt.field) && (!errors.As(err, &re) || re.Field != tt.field) {
				t.Errorf("error %v does not name the field %s", err, tt.field)
			}
			if list, _ := h.mgr.List(context.Background(), parent.ID, ""); len(list) != 0 {
				t.Fatal("a refused launch created a task")
			}
		})
	}

	// Through the tool, a budget that is not a number is refused by the
	// input schema, naming the field.
	h := newHarness(t, echo(t))
	parent := h.parent(user("parent: hi"))
	toolList, _ := h.tools.ToolsFor(context.Background(), parent.ID)
	res, err := toolList[0].Run(context.Background(), []byte(`{"description":"d","prompt":"p","agent":"general","max_cost":"lots"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Output, "max_cost") {
		t.Fatalf("tool result = %+v, %v: want an error naming max_cost", res, err)
	}
}

// TestBudgetRefusesALaunchWhenTheTreeIsSpent: a task whose tree has
// nothing left cannot launch more.
func TestBudgetRefusesALaunchWhenTheTreeIsSpent(t *testing.T) {
	h := newHarness(t, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "spent", Usage: llmtest.Usage{InputTokens: 300}}
	})
	parent := h.parent(user("parent: hi"))
	top := h.launch(parent.ID, tasks.LaunchRequest{Description: "spender", Budget: sa.Budget{MaxTokens: 300}})
	h.wait(top.ID)
	_, err := h.mgr.Launch(context.Background(), tasks.LaunchRequest{ParentSessionID: top.ID, Description: "more", Prompt: "p", Agent: "general"})
	if !errors.Is(err, sa.ErrLimit) || !strings.Contains(err.Error(), "budget reached: 300 of 300 tokens") {
		t.Fatalf("launch from a spent tree: %v", err)
	}
}

// TestBudgetOnAFreeModel: a model marked free = true costs $0, so a cost
// budget can hold its tasks (an unpriced one is refused, above).
func TestBudgetOnAFreeModel(t *testing.T) {
	h := newHarness(t, echo(t), withFork(func(c *config.Config) {
		c.Models = map[string]config.Model{"anthropic/claude-test": {Free: true}}
	}))
	parent := h.parent(user("parent: hi"))
	reply, err := h.tools.TaskTool(context.Background(), parent.ID, tasktools.TaskInput{Description: "d", Prompt: "p", Agent: "general", MaxCost: 0.5})
	if err != nil {
		t.Fatalf("launch on a free model with max_cost: %v", err)
	}
	ended := h.wait(reply.Data.(tasktools.View).Task.ID)
	if ended.Status != sa.TaskCompleted || ended.Budget.MaxCost != 0.5 {
		t.Fatalf("task %+v: want completed with its budget", ended)
	}
}

// TestBudgetSeesWhatOtherProcessesSpent: a task that waited for its own
// tasks reads its tree's spending again before it goes on, for those may
// have run in another process (another node of a cluster) whose spending
// the running total here does not have. The "remote" sub-task is written
// to the store as that process would: its row under a live runner of its
// own, its model's usage in its session, then its ending.
func TestBudgetSeesWhatOtherProcessesSpent(t *testing.T) {
	ctx := context.Background()
	var (
		mu       sync.Mutex
		requests int
		remote   sa.Task
	)
	host, _ := os.Hostname()
	other := sa.Runner{ID: "runner-other-node", Host: host, PID: os.Getpid()}
	var (
		h        *harness
		parentID string
	)
	h = newHarness(t, func(req llmtest.Request) llmtest.Reply {
		f := facts(t, req)
		if !strings.Contains(strings.Join(f.Texts, "\n"), "budgeted work") {
			return llmtest.Reply{Text: "parent"}
		}
		mu.Lock()
		defer mu.Unlock()
		requests++
		if requests > 1 {
			return llmtest.Reply{Text: "carried on", Usage: llmtest.Usage{OutputTokens: 1}}
		}
		// The first turn: another node takes a sub-task of this one.
		mine, err := h.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: parentID})
		if err != nil || len(mine) != 1 {
			t.Errorf("the budgeted task: %v, %v", mine, err)
			return llmtest.Reply{Text: "lost"}
		}
		remote, err = h.store.CreateTask(ctx, sa.NewTask{
			Task:    sa.Task{ParentSessionID: mine[0].ID, Description: "remote", Prompt: "p", Agent: "general", Status: sa.TaskRunning, RunnerID: other.ID},
			Session: sa.NewSession{Agent: "general", Messages: []sa.Message{user("p")}},
		})
		if err != nil {
			t.Error(err)
		}
		return llmtest.Reply{Text: "waiting", Usage: llmtest.Usage{OutputTokens: 1}}
	})
	if err := h.store.RegisterRunner(ctx, other); err != nil {
		t.Fatal(err)
	}
	parent := h.parent(user("parent: hi"))
	parentID = parent.ID
	task := h.launch(parent.ID, tasks.LaunchRequest{Description: "budgeted", Prompt: "budgeted work", Budget: sa.Budget{MaxTokens: 1000}})
	eventually(t, "the remote sub-task", func() bool { mu.Lock(); defer mu.Unlock(); return remote.ID != "" })
	// The task's turn has ended: it waits for its own tasks.
	eventually(t, "the task to wait", func() bool {
		hist, err := h.store.History(ctx, task.ID)
		return err == nil && len(hist) > 0 && hist[len(hist)-1].Role == sa.RoleAssistant && hist[len(hist)-1].Text() == "waiting"
	})

	// The other node's model spends 5,000 tokens, then the sub-task ends
	// with its notification to the waiting task.
	spent := sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{sa.TextPart("done")}, Model: "anthropic/claude-test",
		Usage: sa.Usage{InputTokens: 5000}}
	if _, err := h.store.Append(ctx, remote.ID, spent); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.store.FinishTask(ctx, remote.ID, func(tk *sa.Task) error {
		tk.Status, tk.Result = sa.TaskCompleted, "done"
		return nil
	}, func(sa.Task, sa.BatchState) sa.Message {
		return sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("remote finished")}}
	}); err != nil {
		t.Fatal(err)
	}
	ended := h.wait(task.ID)
	if ended.Status != sa.TaskError || !strings.Contains(ended.Error, "budget reached: 5001 of 1000 tokens") {
		t.Fatalf("task ended %s %q: want the budget reached with the other node's 5,000 tokens counted", ended.Status, ended.Error)
	}
	mu.Lock()
	defer mu.Unlock()
	if requests != 1 {
		t.Fatalf("the task made %d model requests: it should stop before a second", requests)
	}
}
