package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	sa "github.com/superagents/superagents"
)

// testTurnLeases: one lease per session, whoever asks; a task's session
// only for its task; a removed runner's leases are free again.
func testTurnLeases(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, reopen := openStore(t, factory)
	for _, id := range []string{"runner-a", "runner-b"} {
		if err := st.RegisterRunner(ctx, sa.Runner{ID: id, Host: "box", PID: 1}); err != nil {
			t.Fatal(err)
		}
	}
	sess := mustCreate(t, st, user("hi"))
	lease := sa.TurnLease{SessionID: sess.ID, RunnerID: "runner-a", Holder: "chat"}

	got, err := st.AcquireTurn(ctx, lease)
	if err != nil || got.AcquiredAt.IsZero() || got.Holder != "chat" {
		t.Fatalf("AcquireTurn = %+v, %v", got, err)
	}
	for _, other := range []sa.TurnLease{
		{SessionID: sess.ID, RunnerID: "runner-b", Holder: "http"},
		{SessionID: sess.ID, RunnerID: "runner-a", Holder: "run"}, // the same process: still one turn
	} {
		_, err := st.AcquireTurn(ctx, other)
		var busy *sa.BusyError
		if !errors.As(err, &busy) || !errors.Is(err, sa.ErrBusy) || !errors.Is(err, sa.ErrConflict) {
			t.Fatalf("AcquireTurn by %s while held: %v, want a BusyError", other.Holder, err)
		}
		if busy.Lease.RunnerID != "runner-a" || busy.Lease.Holder != "chat" {
			t.Fatalf("BusyError names %+v, want the holder", busy.Lease)
		}
	}
	if held, err := st.Lease(ctx, sess.ID); err != nil || held.RunnerID != "runner-a" {
		t.Fatalf("Lease = %+v, %v", held, err)
	}
	// Only the holder releases it; the lease survives a restart.
	if err := st.ReleaseTurn(ctx, sess.ID, "runner-b"); err != nil {
		t.Fatal(err)
	}
	st = reopen()
	if _, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: sess.ID, RunnerID: "runner-b"}); !errors.Is(err, sa.ErrBusy) {
		t.Fatalf("after another runner's release: %v, want busy", err)
	}
	if err := st.ReleaseTurn(ctx, sess.ID, "runner-a"); err != nil {
		t.Fatal(err)
	}
	wantErrIs(t, func() error { _, err := st.Lease(ctx, sess.ID); return err }(), sa.ErrNotFound, "Lease after release")
	if _, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: sess.ID, RunnerID: "runner-b", Holder: "http"}); err != nil {
		t.Fatalf("AcquireTurn after release: %v", err)
	}

	// A runner taken for dead loses its leases.
	if err := st.RemoveRunner(ctx, "runner-b"); err != nil {
		t.Fatal(err)
	}
	wantErrIs(t, func() error { _, err := st.Lease(ctx, sess.ID); return err }(), sa.ErrNotFound, "Lease after RemoveRunner")
	if _, err := st.AcquireTurn(ctx, lease); err != nil {
		t.Fatalf("AcquireTurn after the holder's runner was removed: %v", err)
	}

	// Bad requests.
	_, err = st.AcquireTurn(ctx, sa.TurnLease{SessionID: "no-such-session", RunnerID: "runner-a"})
	wantErrIs(t, err, sa.ErrNotFound, "AcquireTurn(unknown session)")
	_, err = st.AcquireTurn(ctx, sa.TurnLease{SessionID: sess.ID})
	wantErrIs(t, err, sa.ErrInvalid, "AcquireTurn without runner")
}

// testTaskSessionLease: a task's session is leased only to that task.
func testTaskSessionLease(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	if err := st.RegisterRunner(ctx, sa.Runner{ID: "runner-a", Host: "box", PID: 1}); err != nil {
		t.Fatal(err)
	}
	parent := mustCreate(t, st, user("hi"))
	task := mustCreateTask(t, st, newTask(parent.ID, "t"))

	_, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: task.ID, RunnerID: "runner-a", Holder: "chat"})
	var ts *sa.TaskSessionError
	if !errors.As(err, &ts) || !errors.Is(err, sa.ErrConflict) || errors.Is(err, sa.ErrBusy) {
		t.Fatalf("AcquireTurn on a task's session: %v, want a TaskSessionError", err)
	}
	if _, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: task.ID, RunnerID: "runner-a", Holder: "task", TaskID: "another"}); !errors.As(err, &ts) {
		t.Fatalf("AcquireTurn on a task's session for another task: %v", err)
	}
	if _, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: task.ID, RunnerID: "runner-a", Holder: "task", TaskID: task.ID}); err != nil {
		t.Fatalf("AcquireTurn by the task itself: %v", err)
	}
	// The parent is not the task's: its lease is free.
	if _, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: parent.ID, RunnerID: "runner-a", Holder: "chat"}); err != nil {
		t.Fatalf("AcquireTurn on the parent: %v", err)
	}

	// A task created with its lease holds its session from the start.
	leased := newTask(parent.ID, "leased")
	leased.Lease = &sa.TurnLease{RunnerID: "runner-a", Holder: "task"}
	withLease := mustCreateTask(t, st, leased)
	if l, err := st.Lease(ctx, withLease.ID); err != nil || l.RunnerID != "runner-a" || l.Holder != "task" ||
		l.TaskID != withLease.ID || l.SessionID != withLease.ID || l.AcquiredAt.IsZero() {
		t.Fatalf("the lease of a task created with one = %+v, %v", l, err)
	}
	bad := newTask(parent.ID, "no runner")
	bad.Lease = &sa.TurnLease{Holder: "task"}
	_, err = st.CreateTask(ctx, bad)
	wantErrIs(t, err, sa.ErrInvalid, "CreateTask(lease without a runner)")

	// The task's ending gives its run's lease back with it, and leaves the
	// parent's alone.
	_, _, err = st.FinishTask(ctx, task.ID, func(tk *sa.Task) error { tk.Status = sa.TaskCancelled; return nil },
		func(sa.Task, sa.BatchState) sa.Message {
			return sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("ended")}}
		})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := st.Lease(ctx, task.ID); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("the ended task's session is still leased: %+v, %v", l, err)
	}
	if _, err := st.Lease(ctx, parent.ID); err != nil {
		t.Fatalf("the parent's lease after the task ended: %v", err)
	}
}

// testConcurrentLeases: of many processes asking at once, one gets it.
func testConcurrentLeases(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	sess := mustCreate(t, st, user("hi"))
	const n = 16
	for i := range n {
		if err := st.RegisterRunner(ctx, sa.Runner{ID: runnerName(i), Host: "box", PID: 1}); err != nil {
			t.Fatal(err)
		}
	}
	var (
		wg          sync.WaitGroup
		mu          sync.Mutex
		won, busies int
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: sess.ID, RunnerID: runnerName(i), Holder: "test"})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, sa.ErrBusy):
				busies++
			default:
				t.Errorf("AcquireTurn: %v", err)
			}
		}()
	}
	wg.Wait()
	if won != 1 || busies != n-1 {
		t.Fatalf("%d acquired and %d were busy, want 1 and %d", won, busies, n-1)
	}
}

func runnerName(i int) string { return "runner-" + string(rune('a'+i)) }

// testForkWithMessages: the messages given to Fork are stored in the
// child in the same transaction; a bad one leaves no child.
func testForkWithMessages(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	parent := mustCreate(t, st, user("one"), agent("two"))
	child, err := st.Fork(ctx, parent.ID, sa.ForkOptions{Messages: []sa.Message{sa.ForkRecord(parent)}})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := st.History(ctx, child.ID)
	if err != nil || len(hist) != 3 || hist[2].Kind != sa.KindFork || hist[2].SessionID != child.ID {
		t.Fatalf("child history = %+v, %v", hist, err)
	}
	before, _ := st.ListSessions(ctx, sa.SessionFilter{})
	_, err = st.Fork(ctx, parent.ID, sa.ForkOptions{Messages: []sa.Message{{Role: "nobody", Parts: []sa.Part{sa.TextPart("x")}}}})
	wantErrIs(t, err, sa.ErrInvalid, "Fork with a bad message")
	if after, _ := st.ListSessions(ctx, sa.SessionFilter{}); len(after) != len(before) {
		t.Fatalf("a failed fork left a session: %d sessions, want %d", len(after), len(before))
	}
}

// testOrigin: a session keeps the origin it was created with; a fork's is
// fork unless told otherwise; a task's child has the task's.
func testOrigin(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, reopen := openStore(t, factory)
	root, err := st.CreateSession(ctx, sa.NewSession{Agent: "general", Origin: sa.OriginHTTP})
	if err != nil {
		t.Fatal(err)
	}
	child := mustFork(t, st, root.ID)
	tk := newTask(root.ID, "t")
	tk.Session.Origin = sa.OriginTask
	task := mustCreateTask(t, st, tk)
	st = reopen()
	for id, want := range map[string]sa.Origin{root.ID: sa.OriginHTTP, child.ID: sa.OriginFork, task.ID: sa.OriginTask} {
		got, err := st.Session(ctx, id)
		if err != nil || got.Origin != want {
			t.Errorf("session %s origin = %q, %v; want %q", id, got.Origin, err, want)
		}
	}
	if list, err := st.ListSessions(ctx, sa.SessionFilter{}); err != nil || len(list) != 3 || list[len(list)-1].Origin != sa.OriginHTTP {
		t.Fatalf("ListSessions = %+v, %v", list, err)
	}
}
