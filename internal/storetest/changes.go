package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
)

// changesSince returns the kinds (and the task or session they concern)
// recorded after an ID.
func changesSince(t *testing.T, st sa.Store, after int64) []string {
	t.Helper()
	list, err := st.Changes(context.Background(), after, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range list {
		out = append(out, string(c.Kind))
	}
	return out
}

func lastChange(t *testing.T, st sa.Store) int64 {
	t.Helper()
	id, err := st.LastChangeID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func wantChanges(t *testing.T, st sa.Store, after int64, want ...string) {
	t.Helper()
	if got := changesSince(t, st, after); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("changes = %v, want %v", got, want)
	}
}

func testChanges(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, reopen := openStore(t, factory)

	mark := lastChange(t, st)
	a := mustCreate(t, st, user("Q1"), agent("A1"))
	wantChanges(t, st, mark, "session.created", "session.message", "session.message")

	mark = lastChange(t, st)
	b := mustFork(t, st, a.ID)
	mustAppend(t, st, b.ID, user("Q2"))
	mustClear(t, st, b.ID)
	wantChanges(t, st, mark, "session.created", "session.message", "session.message")

	// The data of a change is the thing that changed.
	list, err := st.Changes(ctx, mark, 0)
	if err != nil {
		t.Fatal(err)
	}
	if list[0].SessionID != b.ID || !strings.Contains(string(list[0].Data), b.ID) {
		t.Fatalf("session.created change = %+v", list[0])
	}
	if m, err := list[1].Message(); err != nil || m.Text() != "Q2" || m.SessionID != b.ID || m.ID == 0 {
		t.Fatalf("session.message change carries %+v, %v", m, err)
	}

	// A write that fails records nothing.
	mark = lastChange(t, st)
	if _, err := st.Append(ctx, a.ID, user("ok"), sa.Message{Role: "robot"}); err == nil {
		t.Fatal("bad append accepted")
	}
	if _, err := st.Fork(ctx, "0000000000000000", sa.ForkOptions{}); err == nil {
		t.Fatal("fork of nothing accepted")
	}
	wantChanges(t, st, mark)

	mark = lastChange(t, st)
	task := mustCreateTask(t, st, newTask(a.ID, "t"))
	wantChanges(t, st, mark, "session.created", "session.message", "task.created")
	mark = lastChange(t, st)
	setStatus := func(s sa.TaskStatus) {
		t.Helper()
		if _, err := st.UpdateTask(ctx, task.ID, func(tk *sa.Task) error { tk.Status = s; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	setStatus(sa.TaskRunning)
	if _, err := st.UpdateTask(ctx, task.ID, func(tk *sa.Task) error { tk.Progress.ToolCalls = 2; return nil }); err != nil {
		t.Fatal(err)
	}
	setStatus(sa.TaskCompleted)
	setStatus(sa.TaskResumed)
	wantChanges(t, st, mark, "task.updated", "task.updated", "task.completed", "task.updated")
	changes, _ := st.Changes(ctx, mark, 0)
	if tk, err := changes[2].Task(); err != nil || tk.Status != sa.TaskCompleted || changes[2].TaskID != task.ID || changes[2].SessionID != a.ID {
		t.Fatalf("task.completed change = %+v (%+v, %v)", changes[2], tk, err)
	}

	// Deleting the parent records the deletion and its tasks leaving the
	// listings; the resumed one is cancelled on the way.
	mark = lastChange(t, st)
	if err := st.DeleteSession(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	wantChanges(t, st, mark, "session.deleted", "task.cancelled")

	// Pages, and the log survives a restart.
	all := changesSince(t, st, 0)
	st = reopen()
	page, err := st.Changes(ctx, 0, 3)
	if err != nil || len(page) != 3 {
		t.Fatalf("Changes(limit 3) = %d, %v", len(page), err)
	}
	rest, _ := st.Changes(ctx, page[2].ID, 0)
	if len(page)+len(rest) != len(all) {
		t.Fatalf("pages hold %d+%d changes, the log %d", len(page), len(rest), len(all))
	}
	for i := 1; i < len(rest); i++ {
		if rest[i].ID <= rest[i-1].ID {
			t.Fatal("changes are not in ID order")
		}
	}
}

// testChangesFromConcurrentWriters: writers in parallel, one follower
// reading the log by last seen ID, misses nothing and sees nothing twice.
func testChangesFromConcurrentWriters(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	s := mustCreate(t, st)
	start := lastChange(t, st)
	const writers, each = 4, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := st.Append(ctx, s.ID, user(fmt.Sprintf("w%d-%d", w, i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	seen := map[string]bool{}
	last := start
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	follow := func() {
		list, err := st.Changes(ctx, last, 7)
		if err != nil {
			t.Error(err)
			return
		}
		for _, c := range list {
			m, _ := c.Message()
			if seen[m.Text()] {
				t.Errorf("change %d seen twice", c.ID)
			}
			seen[m.Text()] = true
			last = c.ID
		}
	}
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		follow()
	}
	for range 100 {
		follow()
	}
	if len(seen) != writers*each {
		t.Fatalf("the follower saw %d changes, want %d", len(seen), writers*each)
	}
}

func testFinishTask(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	parent := mustCreate(t, st, user("Q"))
	var notedMu sync.Mutex
	noted := map[string]sa.BatchState{} // what note was told, by task
	note := func(tk sa.Task, batch sa.BatchState) sa.Message {
		notedMu.Lock()
		noted[tk.ID] = batch
		notedMu.Unlock()
		return sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{
			sa.TextPart(fmt.Sprintf("✓ %s %s %d/%d", tk.Description, tk.Status, batch.Done(), batch.Total)), {Type: sa.PartText, Text: "hint", Hidden: true}}}
	}
	finish := func(id string, status sa.TaskStatus) (sa.Task, sa.Message, error) {
		return st.FinishTask(ctx, id, func(tk *sa.Task) error {
			if tk.Status.Terminal() {
				return fmt.Errorf("%w: already %s", sa.ErrConflict, tk.Status)
			}
			now := time.Now()
			tk.Status, tk.CompletedAt = status, &now
			return nil
		}, note)
	}
	running := func(desc string) sa.Task {
		tk := mustCreateTask(t, st, newTask(parent.ID, desc))
		if _, err := st.UpdateTask(ctx, tk.ID, func(x *sa.Task) error { x.Status = sa.TaskRunning; return nil }); err != nil {
			t.Fatal(err)
		}
		return tk
	}

	tk := running("one")
	mark := lastChange(t, st)
	ended, msg, err := finish(tk.ID, sa.TaskCompleted)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Status != sa.TaskCompleted || msg.ID == 0 || msg.SessionID != parent.ID || msg.Kind != sa.KindNotification {
		t.Fatalf("FinishTask = %+v, %+v", ended, msg)
	}
	wantChanges(t, st, mark, "task.completed", "session.message")
	// The notification's change names the task that ended.
	if list, err := st.Changes(context.Background(), mark, 10); err != nil || len(list) != 2 || list[0].TaskID != tk.ID || list[1].TaskID != tk.ID || list[1].SessionID != parent.ID {
		t.Fatalf("changes of the ending = %+v, %v; want both to name task %s", list, err, tk.ID)
	}
	if hist := texts(t, st, parent.ID); hist[len(hist)-1] != "✓ one completed 1/1" {
		t.Fatalf("parent's last message = %q", hist[len(hist)-1])
	}
	if got := noted[tk.ID]; !reflect.DeepEqual(got, sa.BatchState{Total: 1, Completed: []string{tk.ID}}) {
		t.Fatalf("batch of a task without one = %+v, want itself, completed", got)
	}

	// A second ending is refused and writes nothing: one terminal state,
	// one notification.
	mark = lastChange(t, st)
	_, _, err = finish(tk.ID, sa.TaskCancelled)
	wantErrIs(t, err, sa.ErrConflict, "finishing twice")
	wantChanges(t, st, mark)

	// Racing endings: exactly one wins.
	race := running("race")
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			status := sa.TaskCompleted
			if i%2 == 0 {
				status = sa.TaskCancelled
			}
			if _, _, err := finish(race.ID, status); err == nil {
				wins.Add(1)
			} else if !errors.Is(err, sa.ErrConflict) {
				t.Errorf("racing finish: %v", err)
			}
		})
	}
	wg.Wait()
	notes := 0
	for _, text := range texts(t, st, parent.ID) {
		if strings.HasPrefix(text, "✓ race") {
			notes++
		}
	}
	if wins.Load() != 1 || notes != 1 {
		t.Fatalf("%d racing endings won, %d notifications: want 1 and 1", wins.Load(), notes)
	}

	// Two tasks of one batch ending at once count 1/2 and 2/2, never 1/2
	// twice: the batch is read inside the finishing transaction.
	pairParent := mustCreate(t, st, user("Q"))
	var pair []sa.Task
	for _, d := range []string{"p1", "p2"} {
		spec := newTask(pairParent.ID, d)
		spec.Task.BatchID = "pair"
		tk := mustCreateTask(t, st, spec)
		if _, err := st.UpdateTask(ctx, tk.ID, func(x *sa.Task) error { x.Status = sa.TaskRunning; return nil }); err != nil {
			t.Fatal(err)
		}
		pair = append(pair, tk)
	}
	var pwg sync.WaitGroup
	for _, tk := range pair {
		pwg.Go(func() {
			if _, _, err := finish(tk.ID, sa.TaskCompleted); err != nil {
				t.Error(err)
			}
		})
	}
	pwg.Wait()
	var counts []string
	for _, text := range texts(t, st, pairParent.ID)[1:] {
		counts = append(counts, text[strings.LastIndex(text, " ")+1:])
	}
	if strings.Join(counts, ",") != "1/2,2/2" {
		t.Fatalf("batch counts in the notifications = %v, want [1/2 2/2]", counts)
	}
	// The first to end hears that one is still active; the last one gets
	// the ids of the completed ones, oldest first.
	first, last := noted[pair[0].ID], noted[pair[1].ID]
	if last.Active == 1 {
		first, last = last, first
	}
	if !reflect.DeepEqual(first, sa.BatchState{Total: 2, Active: 1}) ||
		!reflect.DeepEqual(last, sa.BatchState{Total: 2, Completed: []string{pair[0].ID, pair[1].ID}}) {
		t.Fatalf("the pair's batch states = %+v and %+v", first, last)
	}

	// A batch's failed task is counted, not listed among the completed.
	mixedParent := mustCreate(t, st, user("Q"))
	var mixed []sa.Task
	for _, d := range []string{"m1", "m2", "m3"} {
		spec := newTask(mixedParent.ID, d)
		spec.Task.BatchID = "mixed"
		tk := mustCreateTask(t, st, spec)
		if _, err := st.UpdateTask(ctx, tk.ID, func(x *sa.Task) error { x.Status = sa.TaskRunning; return nil }); err != nil {
			t.Fatal(err)
		}
		mixed = append(mixed, tk)
	}
	for i, status := range []sa.TaskStatus{sa.TaskCompleted, sa.TaskError, sa.TaskCompleted} {
		if _, _, err := finish(mixed[i].ID, status); err != nil {
			t.Fatal(err)
		}
	}
	if got := noted[mixed[1].ID]; !reflect.DeepEqual(got, sa.BatchState{Total: 3, Active: 1}) {
		t.Fatalf("batch state at the second of three endings = %+v", got)
	}
	if got := noted[mixed[2].ID]; !reflect.DeepEqual(got, sa.BatchState{Total: 3, Completed: []string{mixed[0].ID, mixed[2].ID}}) {
		t.Fatalf("batch state at the last ending = %+v, want the two completed", got)
	}

	// Not a terminal status: refused, nothing written.
	other := running("other")
	_, _, err = st.FinishTask(ctx, other.ID, func(tk *sa.Task) error { tk.Progress.ToolCalls = 9; return nil }, note)
	wantErrIs(t, err, sa.ErrInvalid, "finishing into a non-terminal status")
	if got, _ := st.Task(ctx, other.ID); got.Progress.ToolCalls != 0 {
		t.Fatal("a refused finish was written")
	}
	// A notification that does not validate aborts the whole finish.
	_, _, err = st.FinishTask(ctx, other.ID, func(tk *sa.Task) error { tk.Status = sa.TaskError; return nil },
		func(sa.Task, sa.BatchState) sa.Message { return sa.Message{Role: "robot"} })
	wantErrIs(t, err, sa.ErrInvalid, "an invalid notification")
	if got, _ := st.Task(ctx, other.ID); got.Status != sa.TaskRunning {
		t.Fatal("the task ended although its notification was refused")
	}

	// Deleting the parent cancels its active tasks in the same transaction
	// and leaves the ended ones as they are.
	if err := st.DeleteSession(ctx, parent.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Task(ctx, other.ID); got.Status != sa.TaskCancelled || got.Error != sa.ParentDeletedError {
		t.Fatalf("active task of a deleted parent = %s %q: want cancelled, %q", got.Status, got.Error, sa.ParentDeletedError)
	}
	if got, _ := st.Task(ctx, tk.ID); got.Status != sa.TaskCompleted {
		t.Fatalf("completed task of a deleted parent = %s: want it left completed", got.Status)
	}
	// A task resumed after its parent was deleted still ends, without a
	// notification.
	if _, err := st.UpdateTask(ctx, tk.ID, func(x *sa.Task) error { x.Status = sa.TaskResumed; return nil }); err != nil {
		t.Fatal(err)
	}
	ended, msg, err = finish(tk.ID, sa.TaskCompleted)
	if err != nil || ended.Status != sa.TaskCompleted || msg.ID != 0 {
		t.Fatalf("finishing the task of a deleted parent = %+v, %+v, %v", ended.Status, msg, err)
	}
}

func testRunners(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	r := sa.Runner{ID: "runner-1", Host: "box", PID: 4242}
	if err := st.RegisterRunner(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := st.RegisterRunner(ctx, sa.Runner{}); !errors.Is(err, sa.ErrInvalid) {
		t.Fatalf("a runner without id: %v", err)
	}
	list, err := st.Runners(ctx)
	if err != nil || len(list) != 1 || list[0].Host != "box" || list[0].PID != 4242 || list[0].SeenAt.IsZero() {
		t.Fatalf("Runners = %+v, %v", list, err)
	}
	before := list[0].SeenAt
	time.Sleep(2 * time.Millisecond)
	if err := st.TouchRunner(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	list, _ = st.Runners(ctx)
	if !list[0].SeenAt.After(before) {
		t.Fatal("TouchRunner did not move seen_at")
	}
	wantErrIs(t, st.TouchRunner(ctx, "nope"), sa.ErrNotFound, "TouchRunner(unknown)")
	if err := st.RemoveRunner(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := st.Runners(ctx); len(list) != 0 {
		t.Fatal("the runner is still listed")
	}
}

// testChangeNotifier: a store that offers change signals sends one after
// a write.
func testChangeNotifier(t *testing.T, factory Factory) {
	st, _ := openStore(t, factory)
	n, ok := st.(sa.ChangeNotifier)
	if !ok {
		t.Skip("the store does not signal changes")
	}
	select {
	case <-n.Changed():
	default:
	}
	mustCreate(t, st)
	select {
	case <-n.Changed():
	case <-time.After(5 * time.Second):
		t.Fatal("no signal after a write")
	}
}
