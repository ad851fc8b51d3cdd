package taskqueue_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/postgres/pgtest"
	"github.com/superagents/superagents/internal/runner"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/stacktest"
	"github.com/superagents/superagents/internal/taskqueue"
	"github.com/superagents/superagents/internal/tasktools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// node is one process of a cluster: its own store (connection pool) and
// runtime on the shared database.
type node struct {
	store *postgres.Store
	rt    *runtime.Runtime
}

// cluster holds what the nodes of one test share: the database, the
// workspace and the fake model server.
type cluster struct {
	url, workspace string
	model          *llmtest.Server
	cfg            config.Config
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{url: pgtest.URL(t), workspace: t.TempDir(), model: llmtest.NewAnthropic(t)}
	c.cfg = stacktest.Config(t, c.workspace, c.model.BaseURL())
	return c
}

// open starts a node; work makes it work the job queue (serve, worker),
// otherwise it only queues tasks (run, chat, mcp). It closes with the
// test.
func (c *cluster) open(t *testing.T, work bool) *node {
	t.Helper()
	return c.openWith(t, work, c.cfg)
}

// openWith is open with a configuration of the node's own.
func (c *cluster) openWith(t *testing.T, work bool, cfg config.Config) *node {
	t.Helper()
	return c.openDraining(t, work, cfg, 0)
}

// openDraining is openWith for a node that, closing, lets its running
// tasks finish for up to drain.
func (c *cluster) openDraining(t *testing.T, work bool, cfg config.Config, drain time.Duration) *node {
	t.Helper()
	st, rt := stacktest.OpenNode(t, c.url, c.workspace, cfg, stacktest.NodeOptions{Work: work, Drain: drain, Heartbeat: 200 * time.Millisecond})
	n := &node{store: st, rt: rt}
	t.Cleanup(func() { n.close(t) })
	return n
}

func (n *node) close(t *testing.T) {
	if n.rt == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := n.rt.Close(ctx); err != nil {
		t.Errorf("close node: %v", err)
	}
	n.store.Close()
	n.rt = nil
}

func (n *node) session(t *testing.T) sa.Session {
	t.Helper()
	s, err := n.rt.Sessions().Create(context.Background(), sa.NewSession{Agent: "general"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (n *node) launch(t *testing.T, parent, prompt string) sa.Task {
	t.Helper()
	task, _, err := n.rt.Tasks().Submit(context.Background(), runtime.TaskRequest{Parent: parent,
		Description: "task " + prompt, Prompt: prompt, Agent: "general"})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// jobs returns the task_run jobs of a task: their state and attempts.
func jobs(t *testing.T, st *postgres.Store, taskID string) (states []string, attempts []int) {
	t.Helper()
	rows, err := st.Pool().Query(context.Background(), `SELECT state, attempt FROM river_job
		WHERE kind = 'task_run' AND args->>'task_id' = $1 ORDER BY id`, taskID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var state string
		var attempt int
		if err := rows.Scan(&state, &attempt); err != nil {
			t.Fatal(err)
		}
		states, attempts = append(states, state), append(attempts, attempt)
	}
	return states, attempts
}

// notifications counts the notifications of a task in its parent.
func notifications(t *testing.T, st sa.Store, parent, taskID string) int {
	t.Helper()
	history, err := st.History(context.Background(), parent)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range history {
		if m.Kind != sa.KindNotification {
			continue
		}
		for _, p := range m.Parts { // the hidden hint names the task that ended
			if strings.Contains(p.Text, "task "+taskID+" (") {
				n++
				break
			}
		}
	}
	return n
}

// notifiedOnce fails the test unless a task left exactly one
// notification in its parent.
func notifiedOnce(t *testing.T, st sa.Store, parent, taskID string) {
	t.Helper()
	if n := notifications(t, st, parent, taskID); n != 1 {
		t.Fatalf("task %s left %d notifications in %s, want 1", taskID, n, parent)
	}
}

// eventually waits, up to a generous deadline, for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after a minute", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLaunchWritesRowAndJob checks that a launch on a node that does not
// work the queue commits the task, queued for the queue, with its job;
// that a launch that fails leaves neither; and that a resume is a job
// too.
func TestLaunchWritesRowAndJob(t *testing.T) {
	c := newCluster(t)
	a := c.open(t, false)
	ctx := context.Background()
	parent := a.session(t)
	task := a.launch(t, parent.ID, "what is 2+2")
	if task.Status != sa.TaskQueued || task.RunnerID != runner.Queue {
		t.Fatalf("launched task is %s, runner %q; want queued for the queue", task.Status, task.RunnerID)
	}
	if states, _ := jobs(t, a.store, task.ID); len(states) != 1 || states[0] != "available" {
		t.Fatalf("jobs of the task: %v", states)
	}

	// A job that cannot be inserted takes the task with it.
	q, err := taskqueue.New(a.store, taskqueue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var count int
	if err := a.store.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM tasks`).Scan(&count); err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.Pool().Exec(ctx, `ALTER TABLE river_job ADD CONSTRAINT no_more CHECK (id < 0) NOT VALID`); err != nil {
		t.Fatal(err)
	}
	_, err = q.Launch(ctx, sa.NewTask{Task: sa.Task{ParentSessionID: parent.ID, Description: "refused", Prompt: "x",
		Agent: "general", Status: sa.TaskQueued, RunnerID: runner.Queue}, Session: sa.NewSession{Agent: "general"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "queue task run") {
		t.Fatalf("launch with a refused job: %v", err)
	}
	var after int
	if err := a.store.Pool().QueryRow(ctx, `SELECT COUNT(*) FROM tasks`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != count {
		t.Fatalf("a launch whose job failed left a task: %d tasks, then %d", count, after)
	}
	if _, err := a.store.Pool().Exec(ctx, `ALTER TABLE river_job DROP CONSTRAINT no_more`); err != nil {
		t.Fatal(err)
	}

	// A node works it; then a resume is a job of its own.
	c.model.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "four"} })
	b := c.open(t, true)
	if err := a.rt.Tasks().Wait(ctx, parent.ID); err != nil {
		t.Fatal(err)
	}
	done, err := a.store.Task(ctx, task.ID)
	if err != nil || done.Status != sa.TaskCompleted || done.Result != "four" {
		t.Fatalf("task after the node ran it: %+v, %v", done, err)
	}
	resumed, _, err := a.rt.Tasks().Submit(ctx, runtime.TaskRequest{Resume: task.ID, Prompt: "and again?"})
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Status != sa.TaskResumed || resumed.RunnerID != runner.Queue {
		t.Fatalf("resumed task is %s, runner %q", resumed.Status, resumed.RunnerID)
	}
	if err := a.rt.Tasks().Wait(ctx, parent.ID); err != nil {
		t.Fatal(err)
	}
	if n := notifications(t, b.store, parent.ID, task.ID); n != 2 {
		t.Fatalf("%d notifications for a launch and a resume, want 2", n)
	}
	eventually(t, "both jobs completed", func() bool {
		states, _ := jobs(t, a.store, task.ID)
		return len(states) == 2 && states[0] == "completed" && states[1] == "completed"
	})
}

// TestTasksRunOnAnyNode launches tasks from a node that does not work the
// queue; two nodes run them, and the launcher's waits (WaitIdle, a
// blocking output) see them end.
func TestTasksRunOnAnyNode(t *testing.T) {
	c := newCluster(t)
	c.model.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "done"} })
	a := c.open(t, false)
	b, d := c.open(t, true), c.open(t, true)
	ctx := context.Background()
	parent := a.session(t)
	var ids []string
	for i := range 12 {
		ids = append(ids, a.launch(t, parent.ID, "job "+string(rune('a'+i))).ID)
	}
	out, err := a.rt.Tasks().Output(ctx, ids[0], true, time.Minute)
	if err != nil || out.TimedOut || out.Task.Status != sa.TaskCompleted {
		t.Fatalf("blocking output on the launcher: %+v, %v", out, err)
	}
	if err := a.rt.Tasks().Wait(ctx, parent.ID); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		task, err := a.store.Task(ctx, id)
		if err != nil || task.Status != sa.TaskCompleted {
			t.Fatalf("task %s: %+v, %v", id, task, err)
		}
		notifiedOnce(t, a.store, parent.ID, id)
	}
	if a.rt.Tasks().Active(parent.ID) != 0 {
		t.Fatal("the launcher ran tasks itself")
	}
	_, _ = b, d
}

// TestCancelAcrossNodes cancels, from one node, a task another node runs:
// the runner's model stream is cut and the task ends cancelled, once.
func TestCancelAcrossNodes(t *testing.T) {
	c := newCluster(t)
	c.model.Handle(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "never finished", Fault: llmtest.Stall, FaultAfter: 1}
	})
	a := c.open(t, false)
	b := c.open(t, true)
	ctx := context.Background()
	parent := a.session(t)
	task := a.launch(t, parent.ID, "stall")
	eventually(t, "running on the other node", func() bool {
		cur, err := a.store.Task(ctx, task.ID)
		return err == nil && cur.Status == sa.TaskRunning && len(c.model.Requests()) > 0
	})
	if cur, _ := a.store.Task(ctx, task.ID); cur.RunnerID != b.rt.RunnerID() {
		t.Fatalf("task runs on %q, want node b %q", cur.RunnerID, b.rt.RunnerID())
	}
	start := time.Now()
	if _, err := a.rt.Tasks().Cancel(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.model.WaitDisconnect(wait); err != nil {
		t.Fatalf("the running node's model stream was not cut: %v", err)
	}
	t.Logf("model stream cut %s after the cancel on the other node", time.Since(start))
	eventually(t, "the node's run ended", func() bool { return b.rt.Tasks().Active(parent.ID) == 0 })
	ended, err := b.store.Task(ctx, task.ID)
	if err != nil || ended.Status != sa.TaskCancelled {
		t.Fatalf("task after cancel: %+v, %v", ended, err)
	}
	notifiedOnce(t, a.store, parent.ID, task.ID)
}

// TestEndedBeforeItRan: a task cancelled while its job waited completes
// its job without a run.
func TestEndedBeforeItRan(t *testing.T) {
	c := newCluster(t)
	a := c.open(t, false)
	ctx := context.Background()
	parent := a.session(t)
	task := a.launch(t, parent.ID, "never")
	if _, err := a.rt.Tasks().Cancel(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	c.open(t, true)
	eventually(t, "its job completed", func() bool {
		states, _ := jobs(t, a.store, task.ID)
		return len(states) == 1 && states[0] == "completed"
	})
	if n := len(c.model.Requests()); n != 0 {
		t.Fatalf("a cancelled task ran: %d model requests", n)
	}
	notifiedOnce(t, a.store, parent.ID, task.ID)
}

// TestDeadNodeRescuedOnce plays a node that died while running a task:
// its runner is registered with a process that has exited, the task is
// running under it, and its job is running, attempted an hour ago. A node
// that starts ends the task as interrupted (its reconcile), and River's
// rescue hands the job out again, which then completes without running
// the task: one ending, one notification, no second run.
func TestDeadNodeRescuedOnce(t *testing.T) {
	c := newCluster(t)
	a := c.open(t, false)
	ctx := context.Background()
	parent := a.session(t)
	task := a.launch(t, parent.ID, "orphan")

	host, _ := os.Hostname()
	dead := sa.Runner{ID: "runner-dead", Host: host, PID: exitedPID(t)}
	if err := a.store.RegisterRunner(ctx, dead); err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.UpdateTask(ctx, task.ID, func(tk *sa.Task) error {
		tk.Status, tk.RunnerID = sa.TaskRunning, dead.ID
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.store.Pool().Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
		attempted_at = now() - interval '1 hour', attempted_by = ARRAY['dead-node'] WHERE args->>'task_id' = $1`, task.ID); err != nil {
		t.Fatal(err)
	}

	c.open(t, true)
	eventually(t, "the job rescued and completed", func() bool {
		states, attempts := jobs(t, a.store, task.ID)
		return len(states) == 1 && states[0] == "completed" && attempts[0] == 2
	})
	ended, err := a.store.Task(ctx, task.ID)
	if err != nil || ended.Status != sa.TaskError || !strings.Contains(ended.Error, "interrupted") {
		t.Fatalf("task of the dead node: %+v, %v", ended, err)
	}
	notifiedOnce(t, a.store, parent.ID, task.ID)
	if n := len(c.model.Requests()); n != 0 {
		t.Fatalf("the dead node's task ran again: %d model requests", n)
	}
}

// exitedPID returns the pid of a process that has exited and been reaped.
func exitedPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestOrphanedJobRequeued plays a node that died between taking a job
// and claiming its task: the job runs under a River client whose runner
// is gone, the task still waits for the queue. A working node queues the
// task again and runs it, once.
func TestOrphanedJobRequeued(t *testing.T) {
	c := newCluster(t)
	c.model.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "done"} })
	a := c.open(t, false)
	ctx := context.Background()
	parent := a.session(t)
	task := a.launch(t, parent.ID, "orphan")
	if _, err := a.store.Pool().Exec(ctx, `UPDATE river_job SET state = 'running', attempt = 1,
		attempted_at = now(), attempted_by = ARRAY['runner-gone'] WHERE args->>'task_id' = $1`, task.ID); err != nil {
		t.Fatal(err)
	}
	c.open(t, true)
	if err := a.rt.Tasks().Wait(ctx, parent.ID); err != nil {
		t.Fatal(err)
	}
	ended, err := a.store.Task(ctx, task.ID)
	if err != nil || ended.Status != sa.TaskCompleted {
		t.Fatalf("orphaned task: %+v, %v", ended, err)
	}
	notifiedOnce(t, a.store, parent.ID, task.ID)
	if states, _ := jobs(t, a.store, task.ID); len(states) != 2 || states[0] != "running" {
		t.Fatalf("jobs of the orphaned task: %v; want the stale one and its replacement", states)
	}
	if n := len(c.model.Requests()); n != 1 {
		t.Fatalf("%d model requests, want 1", n)
	}
}

// TestTaskWaitsForItsTasksOnOtherNodes runs a task on a node with room
// for one task: the sub-task it launches runs on the other node, and the
// task, waiting for it, sees it end there, is woken with its
// notification and finishes.
func TestTaskWaitsForItsTasksOnOtherNodes(t *testing.T) {
	c := newCluster(t)
	c.model.Handle(func(req llmtest.Request) llmtest.Reply {
		body := string(req.Body)
		if strings.Contains(body, "child-work") && !strings.Contains(body, "parent-work") {
			return llmtest.Reply{Text: "child done"}
		}
		switch strings.Count(body, `"role":"assistant"`) {
		case 0:
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{stacktest.ToolCall(sa.TaskTool,
				tasktools.TaskInput{Description: "child", Prompt: "child-work", Agent: "general"})}}
		case 1:
			return llmtest.Reply{Text: "waiting for the child"}
		}
		return llmtest.Reply{Text: "parent done"}
	})
	a := c.open(t, false)
	one := c.cfg
	one.Tasks.Concurrency = 1
	b := c.openWith(t, true, one)
	ctx := context.Background()
	parent := a.session(t)
	task := a.launch(t, parent.ID, "parent-work")
	eventually(t, "the parent task running on b", func() bool {
		cur, err := a.store.Task(ctx, task.ID)
		return err == nil && cur.RunnerID == b.rt.RunnerID()
	})
	// b's one slot is the parent's: the child can only run on d.
	d := c.open(t, true)
	out, err := a.rt.Tasks().Output(ctx, task.ID, true, time.Minute)
	if err != nil || out.TimedOut || out.Task.Status != sa.TaskCompleted || out.Task.Result != "parent done" {
		t.Fatalf("parent task: %+v, %v", out.Task, err)
	}
	children, err := a.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: task.ID})
	if err != nil || len(children) != 1 || children[0].Status != sa.TaskCompleted {
		t.Fatalf("the parent task's children: %+v, %v", children, err)
	}
	var workedBy string
	if err := a.store.Pool().QueryRow(ctx, `SELECT attempted_by[1] FROM river_job WHERE args->>'task_id' = $1`,
		children[0].ID).Scan(&workedBy); err != nil || workedBy != d.rt.RunnerID() {
		t.Fatalf("the child ran on %q (%v), want node d %q", workedBy, err, d.rt.RunnerID())
	}
	notifiedOnce(t, a.store, task.ID, children[0].ID)
}

// TestNodeDrains closes nodes that run tasks: one whose task finishes
// within its drain time lets it complete; one whose task does not
// interrupts it, with its one notification. Either way the jobs complete.
func TestNodeDrains(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reply llmtest.Reply
		drain time.Duration
		want  sa.TaskStatus
	}{
		{"finishes", llmtest.Reply{Text: "made it", HeaderDelay: 300 * time.Millisecond}, time.Minute, sa.TaskCompleted},
		{"interrupted", llmtest.Reply{Text: "never", Fault: llmtest.Stall}, 100 * time.Millisecond, sa.TaskError},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newCluster(t)
			c.model.Handle(func(llmtest.Request) llmtest.Reply { return tt.reply })
			a := c.open(t, false)
			b := c.openDraining(t, true, c.cfg, tt.drain)
			ctx := context.Background()
			parent := a.session(t)
			task := a.launch(t, parent.ID, "drain")
			eventually(t, "the task running", func() bool {
				cur, err := a.store.Task(ctx, task.ID)
				return err == nil && cur.Status == sa.TaskRunning && len(c.model.Requests()) > 0
			})
			b.close(t)
			ended, err := a.store.Task(ctx, task.ID)
			if err != nil || ended.Status != tt.want {
				t.Fatalf("task after its node closed: %+v, %v", ended, err)
			}
			if tt.want == sa.TaskError && !strings.Contains(ended.Error, "interrupted") {
				t.Fatalf("interrupted task's error: %q", ended.Error)
			}
			notifiedOnce(t, a.store, parent.ID, task.ID)
			if states, _ := jobs(t, a.store, task.ID); len(states) != 1 || states[0] != "completed" {
				t.Fatalf("the task's job after its node closed: %v", states)
			}
		})
	}
}
