package runtime_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/tasktools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// script makes the offline model wait, in a bash call, until a file named
// release exists in the workspace, when asked to wait.
const script = `
[[rules]]
contains = "wait for release"
step = 1
tool_calls = [{ name = "bash", input = { command = "while [ ! -e release ]; do sleep 0.02; done" } }]

[[rules]]
contains = "wait for release"
after_tool = "bash"
reply = "released"
`

// rig is one process's runtime on a data directory shared by the rigs of
// a test.
type rig struct {
	*runtime.Runtime
	st sa.Store // the store the runtime was opened on, for tests that write around it
	ws string
}

// open opens a runtime on dir with the offline model, as a process of its
// own would (its own store handle, its own runner).
func open(t *testing.T, dir, ws string) *rig {
	t.Helper()
	scriptFile := filepath.Join(t.TempDir(), "script.toml")
	if err := os.WriteFile(scriptFile, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{config.EnvOfflineScript: scriptFile}
	cfg, err := config.Load(config.Options{Workspace: ws, UserDir: t.TempDir(), LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.OpenDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	rt, problems, err := runtime.Open(ctx, runtime.Options{Store: st, Config: cfg, Workspace: ws,
		AgentDirs: agents.Dirs{Project: agents.ProjectDir(ws)}, BashEnv: []string{"PATH=" + os.Getenv("PATH")},
		PollInterval: 20 * time.Millisecond, TaskTools: tasktools.For})
	if err != nil || len(problems) > 0 {
		t.Fatalf("runtime: %v %v", err, problems)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := rt.Close(ctx); err != nil {
			t.Error(err)
		}
		st.Close()
	})
	return &rig{Runtime: rt, st: st, ws: ws}
}

func (r *rig) newSession(t *testing.T) sa.Session {
	t.Helper()
	sess, err := r.Sessions().Create(context.Background(), sa.NewSession{Agent: "general", Title: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

func (r *rig) release(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.ws, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writes are the ways a session can be written to, each refused the same
// way while another holds the session.
var writes = []struct {
	name  string
	write func(ctx context.Context, r *rig, session string) error
}{
	{"send", func(ctx context.Context, r *rig, session string) error {
		_, err := r.Sessions().Send(ctx, session, runtime.HolderRun, runtime.TurnOptions{}, engine.UserMessage("What is 2+2?"))
		return err
	}},
	{"append", func(ctx context.Context, r *rig, session string) error {
		_, err := r.Sessions().Append(ctx, session, runtime.HolderCLI, engine.UserMessage("an aside"))
		return err
	}},
	{"clear", func(ctx context.Context, r *rig, session string) error {
		_, err := r.Sessions().Clear(ctx, session, runtime.HolderHTTP)
		return err
	}},
	{"begin", func(ctx context.Context, r *rig, session string) error {
		t, err := r.Sessions().Begin(ctx, session, runtime.HolderChat)
		if err == nil {
			t.End()
		}
		return err
	}},
}

// TestOneWriterPerSession: while a turn holds a session, in this process
// or another, every other write to it is refused as busy; once the turn
// ends, each goes through.
func TestOneWriterPerSession(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	first, second := open(t, dir, ws), open(t, dir, ws)
	ctx := context.Background()
	sess := first.newSession(t)

	turn, err := first.Sessions().Begin(ctx, sess.ID, runtime.HolderChat)
	if err != nil {
		t.Fatal(err)
	}
	for _, process := range []*rig{first, second} {
		for _, w := range writes {
			err := w.write(ctx, process, sess.ID)
			var busy *sa.BusyError
			if !errors.As(err, &busy) || !errors.Is(err, sa.ErrBusy) || busy.Lease.Holder != runtime.HolderChat {
				t.Errorf("%s while a chat turn holds the session: %v, want busy (held by chat)", w.name, err)
			}
		}
	}
	turn.End()
	turn.End() // a second End does nothing
	for _, w := range writes {
		if err := w.write(ctx, second, sess.ID); err != nil {
			t.Errorf("%s once the session is free: %v", w.name, err)
		}
	}
}

// TestTaskSessionIsTheTasks: a task's session is written only by its run
// (and resume), from every way in, while it runs and after it ended.
func TestTaskSessionIsTheTasks(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	r, other := open(t, dir, ws), open(t, dir, ws)
	ctx := context.Background()
	parent := r.newSession(t)
	task, _, err := r.Tasks().Submit(ctx, runtime.TaskRequest{Parent: parent.ID, Description: "waiter", Prompt: "wait for release", Agent: "general"})
	if err != nil {
		t.Fatal(err)
	}
	refused := func(when string) {
		t.Helper()
		for _, process := range []*rig{r, other} {
			for _, w := range writes {
				err := w.write(ctx, process, task.ID)
				var ts *sa.TaskSessionError
				if !errors.As(err, &ts) || !strings.Contains(err.Error(), "resume the task") {
					t.Errorf("%s on a task's session %s: %v, want a TaskSessionError", w.name, when, err)
				}
			}
		}
		if err := r.Sessions().CheckWritable(ctx, task.ID); err == nil {
			t.Errorf("CheckWritable of a task's session %s: nil", when)
		}
	}
	refused("while it runs")
	r.release(t)
	out, err := r.Tasks().Output(ctx, task.ID, true, time.Minute)
	if err != nil || out.Task.Status != sa.TaskCompleted {
		t.Fatalf("task ended as %+v, %v", out.Task, err)
	}
	refused("after it ended")
	// Resume is the way to continue it: its run takes the session.
	if _, _, err := r.Tasks().Submit(ctx, runtime.TaskRequest{Resume: task.ID, Prompt: "What is 3+3?"}); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if out, err := r.Tasks().Output(ctx, task.ID, true, time.Minute); err != nil || !strings.Contains(out.Task.Result, "6") {
		t.Fatalf("resumed task = %+v, %v", out.Task, err)
	}
	if err := r.Sessions().Delete(ctx, task.ID); err != nil {
		t.Fatalf("delete an ended task's session: %v", err)
	}
}

// TestLeaseOfDeadRunnerIsReclaimed: a lease whose process died (its pid
// is gone) is taken over by the next writer, without waiting for the
// runner's heartbeat to go stale.
func TestLeaseOfDeadRunnerIsReclaimed(t *testing.T) {
	r := open(t, t.TempDir(), t.TempDir())
	ctx := context.Background()
	sess := r.newSession(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	ghost := sa.Runner{ID: "runner-ghost", Host: host, PID: dead.Process.Pid}
	if err := r.st.RegisterRunner(ctx, ghost); err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.AcquireTurn(ctx, sa.TurnLease{SessionID: sess.ID, RunnerID: ghost.ID, Holder: runtime.HolderChat}); err != nil {
		t.Fatal(err)
	}
	out, err := r.Sessions().Send(ctx, sess.ID, runtime.HolderRun, runtime.TurnOptions{}, engine.UserMessage("What is 2+2?"))
	if err != nil || !strings.Contains(out.Text, "4") {
		t.Fatalf("send on a session a dead process held: %q, %v", out.Text, err)
	}
	if runners, _ := r.Store().Runners(ctx); len(runners) != 1 {
		t.Fatalf("the dead runner is still registered: %+v", runners)
	}
}

// TestForkRecordsWhereItCameFrom: the child's record is stored with the
// fork; a fork that cannot be made leaves nothing.
func TestForkRecordsWhereItCameFrom(t *testing.T) {
	r := open(t, t.TempDir(), t.TempDir())
	ctx := context.Background()
	parent := r.newSession(t)
	if _, err := r.Sessions().Send(ctx, parent.ID, runtime.HolderRun, runtime.TurnOptions{}, engine.UserMessage("What is 2+2?")); err != nil {
		t.Fatal(err)
	}
	child, err := r.Sessions().Fork(ctx, parent.ID, sa.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := r.Store().History(ctx, child.ID)
	if err != nil || len(hist) != 3 || hist[2].Kind != sa.KindFork || hist[2].SessionID != child.ID || child.Title != parent.Title {
		t.Fatalf("child %+v history %+v, %v", child, hist, err)
	}
	if _, err := r.Sessions().Fork(ctx, parent.ID, sa.ForkOptions{Agent: "nobody"}); !errors.Is(err, sa.ErrUnknownAgent) {
		t.Fatalf("fork with an unknown agent: %v", err)
	}
	if list, _ := r.Store().ListSessions(ctx, sa.SessionFilter{ParentID: parent.ID}); len(list) != 1 {
		t.Fatalf("children after a refused fork: %d, want 1", len(list))
	}
}

// TestEvents: the stream yields the changes written after its start, in
// order, and stops when the consumer does or ctx ends.
func TestEvents(t *testing.T) {
	r := open(t, t.TempDir(), t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sess := r.newSession(t)
	if _, err := r.Sessions().Append(ctx, sess.ID, runtime.HolderCLI, engine.UserMessage("one"), engine.UserMessage("two")); err != nil {
		t.Fatal(err)
	}
	var kinds []sa.ChangeKind
	var last int64
	cursor := r.Events().From(0)
	for {
		ch, err := cursor.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ch.ID <= last {
			t.Fatalf("change %d after %d", ch.ID, last)
		}
		last = ch.ID
		kinds = append(kinds, ch.Kind)
		if len(kinds) == 3 {
			break
		}
	}
	want := []sa.ChangeKind{sa.ChangeSessionCreated, sa.ChangeSessionMessage, sa.ChangeSessionMessage}
	if strings.Join(changeKinds(kinds), ",") != strings.Join(changeKinds(want), ",") {
		t.Fatalf("changes %v, want %v", kinds, want)
	}
	stopped, stop := context.WithCancel(ctx)
	stop()
	if ch, err := r.Events().Now().Next(stopped); err == nil {
		t.Fatalf("a cursor read on an ended context gave %+v", ch)
	}
}

func changeKinds(list []sa.ChangeKind) []string {
	out := make([]string, len(list))
	for i, k := range list {
		out[i] = string(k)
	}
	return out
}

// TestWakerWakesOncePerBatch: three tasks of a watched session end; the
// waker wakes its agent once, after the last; a wake that could not run
// (busy) is tried again by the next Check.
func TestWakerWakesOncePerBatch(t *testing.T) {
	r := open(t, t.TempDir(), t.TempDir())
	ctx := context.Background()
	parent := r.newSession(t)
	woken := make(chan string, 10)
	busy := true
	w := runtime.NewWaker(r.Runtime, func(session string) bool {
		if busy { // the first time: as if a turn ran there
			busy = false
			return false
		}
		woken <- session
		return true
	})
	defer w.Close()
	w.Watch(parent.ID)
	var ids []string
	for range 3 {
		task, _, err := r.Tasks().Submit(ctx, tasktools.TaskInput{Description: "add", Prompt: "What is 2+2?", Agent: "general"}.Request(parent.ID, ""))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	for _, id := range ids {
		if out, err := r.Tasks().Output(ctx, id, true, time.Minute); err != nil || out.Task.Status != sa.TaskCompleted {
			t.Fatalf("task %s: %+v, %v", id, out.Task, err)
		}
	}
	// The first due wake was refused: nothing woke yet, or a later ending
	// of the batch tried again.
	w.Check(ctx, parent.ID)
	select {
	case s := <-woken:
		if s != parent.ID {
			t.Fatalf("woke %s", s)
		}
	case <-time.After(time.Minute):
		t.Fatal("never woken")
	}
	w.Check(ctx, parent.ID)
	w.Check(ctx, parent.ID)
	select {
	case <-woken:
		t.Fatal("woken twice for one batch")
	case <-time.After(100 * time.Millisecond):
	}
	// Once answered, the session is not due any more.
	if _, err := r.Sessions().Append(ctx, parent.ID, runtime.HolderCLI, sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{sa.TextPart("noted")}}); err != nil {
		t.Fatal(err)
	}
	if due, err := runtime.WakeDue(ctx, r.Runtime, parent.ID); err != nil || due {
		t.Fatalf("WakeDue after the answer = %v, %v", due, err)
	}
}

// TestConversation: a host conversation keeps one session, found again
// by any later connection, apart from an import of the same conversation,
// and the notices it was given only move forward.
func TestConversation(t *testing.T) {
	r := open(t, t.TempDir(), t.TempDir())
	ctx := context.Background()
	if _, err := r.Sessions().Conversation(ctx, "codex", "conv-1"); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("Conversation before any: %v, want ErrNotFound", err)
	}
	link, err := r.Sessions().OpenConversation(ctx, "codex", "conv-1", "a conversation")
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.Sessions().OpenConversation(ctx, "codex", "conv-1", "another title")
	if err != nil || again.SessionID != link.SessionID {
		t.Fatalf("opened again: %+v, %v; want session %s", again, err, link.SessionID)
	}
	sess, err := r.Store().Session(ctx, link.SessionID)
	if err != nil || sess.Agent != sa.MCPClientAgent || sess.Origin != sa.OriginMCP || sess.Title != "a conversation" {
		t.Fatalf("the conversation's session = %+v, %v", sess, err)
	}
	if _, err := r.Store().HostLink(ctx, "codex", "conv-1"); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("the conversation's link is an import's: %v", err)
	}
	for _, step := range []struct{ upTo, want int64 }{{4, 4}, {2, 4}, {7, 7}} {
		moved, err := r.Sessions().DeliverNotices(ctx, link, step.upTo)
		if err != nil || moved.NoticesDelivered != step.want {
			t.Fatalf("DeliverNotices(%d) = %+v, %v; want %d", step.upTo, moved, err, step.want)
		}
	}
	if cur, err := r.Sessions().Conversation(ctx, "codex", "conv-1"); err != nil || cur.NoticesDelivered != 7 {
		t.Fatalf("Conversation = %+v, %v; want 7 delivered", cur, err)
	}
	client, err := r.Sessions().CreateForClient(ctx, "a client")
	if err != nil || client.Agent != sa.MCPClientAgent || client.Origin != sa.OriginMCP {
		t.Fatalf("CreateClientSession = %+v, %v", client, err)
	}
}
