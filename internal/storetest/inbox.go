package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	sa "github.com/superagents/superagents"
)

// steer is how the conformance tests render a delivered message.
func steer(m sa.TaskMessage) sa.Message {
	return sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(m.From + ": " + m.Text)}}
}

// testInbox checks the messages sent to tasks: only an active task takes
// one; they are delivered in order, once, into the task's own session,
// with a task.message change at each send; they survive a restart; a
// task does not complete while one waits (ErrUndelivered) and a task
// cancelled marks them undelivered; an ended task refuses more with a
// TaskEndedError.
func testInbox(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, reopen := openStore(t, factory)
	parent := mustCreate(t, st, user("hi"))
	nt := newTask(parent.ID, "steered")
	nt.Task.Status = sa.TaskRunning
	task := mustCreateTask(t, st, nt)

	if _, err := st.SendTaskMessage(ctx, sa.TaskMessage{TaskID: task.ID, From: "user", Text: "  "}); !errors.Is(err, sa.ErrInvalid) {
		t.Fatalf("an empty message: %v, want ErrInvalid", err)
	}
	if _, err := st.SendTaskMessage(ctx, sa.TaskMessage{TaskID: "no-such-task", From: "user", Text: "hi"}); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("a message to an unknown task: %v, want ErrNotFound", err)
	}
	before, err := st.LastChangeID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"first", "second"} {
		m, err := st.SendTaskMessage(ctx, sa.TaskMessage{TaskID: task.ID, From: "user", Text: text})
		if err != nil {
			t.Fatal(err)
		}
		if m.Seq == 0 || m.CreatedAt.IsZero() || !m.Pending() {
			t.Fatalf("SendTaskMessage returned %+v", m)
		}
	}
	changes, err := st.Changes(ctx, before, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[0].Kind != sa.ChangeTaskMessage || changes[0].TaskID != task.ID || changes[0].SessionID != parent.ID {
		t.Fatalf("changes after two sends: %+v", changes)
	}

	// A task whose message waits does not complete: its run delivers it.
	complete := func(x *sa.Task) error { x.Status = sa.TaskCompleted; x.Result = "done"; return nil }
	note := func(sa.Task, sa.BatchState) sa.Message { return user("done") }
	if _, _, err := st.FinishTask(ctx, task.ID, complete, note); !errors.Is(err, sa.ErrUndelivered) {
		t.Fatalf("completing a task with messages waiting: %v, want ErrUndelivered", err)
	}
	if got, _ := st.Task(ctx, task.ID); got.Status != sa.TaskRunning {
		t.Fatalf("the refused completion left the task %s", got.Status)
	}

	st = reopen()
	delivered, err := st.DeliverTaskMessages(ctx, task.ID, steer)
	if err != nil {
		t.Fatal(err)
	}
	if len(delivered) != 2 || delivered[0].Text() != "user: first" || delivered[1].Text() != "user: second" || delivered[0].ID >= delivered[1].ID {
		t.Fatalf("delivered %+v", delivered)
	}
	if again, err := st.DeliverTaskMessages(ctx, task.ID, steer); err != nil || len(again) != 0 {
		t.Fatalf("a second delivery: %+v, %v", again, err)
	}
	history, err := st.History(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(history); n < 2 || history[n-1].Text() != "user: second" || history[n-2].Text() != "user: first" {
		t.Fatalf("the task's history ends %+v", history)
	}
	sent, err := st.TaskMessages(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 2 || sent[0].Pending() || sent[0].MessageID != delivered[0].ID || sent[1].DeliveredAt == nil || sent[1].Text != "second" {
		t.Fatalf("TaskMessages after delivery: %+v", sent)
	}
	if _, _, err := st.FinishTask(ctx, task.ID, complete, note); err != nil {
		t.Fatalf("completing a task whose messages were delivered: %v", err)
	}
	_, err = st.SendTaskMessage(ctx, sa.TaskMessage{TaskID: task.ID, From: "user", Text: "late"})
	var ended *sa.TaskEndedError
	if !errors.As(err, &ended) || ended.Status != sa.TaskCompleted {
		t.Fatalf("a message to a completed task: %v, want a TaskEndedError", err)
	}

	// A cancelled task's waiting messages are marked undelivered.
	other := mustCreateTask(t, st, nt)
	if _, err := st.SendTaskMessage(ctx, sa.TaskMessage{TaskID: other.ID, From: "user", Text: "never read"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.FinishTask(ctx, other.ID, func(x *sa.Task) error { x.Status = sa.TaskCancelled; return nil }, note); err != nil {
		t.Fatal(err)
	}
	if sent, err := st.TaskMessages(ctx, other.ID); err != nil || len(sent) != 1 || sent[0].Pending() || sent[0].Undelivered == "" {
		t.Fatalf("the messages of a cancelled task: %+v, %v", sent, err)
	}
}

// testInboxRace sends messages while the task ends: each is either
// delivered or refused, never accepted and lost.
func testInboxRace(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	parent := mustCreate(t, st, user("hi"))
	for round := range 5 {
		nt := newTask(parent.ID, "racing")
		nt.Task.Status = sa.TaskRunning
		task := mustCreateTask(t, st, nt)
		var wg sync.WaitGroup
		accepted := make(chan int64, 20)
		for i := range 20 {
			wg.Go(func() {
				if m, err := st.SendTaskMessage(ctx, sa.TaskMessage{TaskID: task.ID, From: "user", Text: "m"}); err == nil {
					accepted <- m.Seq
				} else if !errors.Is(err, sa.ErrConflict) {
					t.Errorf("round %d send %d: %v", round, i, err)
				}
			})
		}
		// The run: deliver, then try to complete until no message waits.
		for {
			if _, err := st.DeliverTaskMessages(ctx, task.ID, steer); err != nil {
				t.Fatal(err)
			}
			_, _, err := st.FinishTask(ctx, task.ID, func(x *sa.Task) error { x.Status = sa.TaskCompleted; return nil },
				func(sa.Task, sa.BatchState) sa.Message { return user("done") })
			if err == nil {
				break
			}
			if !errors.Is(err, sa.ErrUndelivered) {
				t.Fatal(err)
			}
		}
		wg.Wait()
		close(accepted)
		sent, err := st.TaskMessages(ctx, task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(sent) != len(accepted) {
			t.Fatalf("round %d: %d accepted, %d stored", round, len(accepted), len(sent))
		}
		for _, m := range sent {
			if m.DeliveredAt == nil {
				t.Fatalf("round %d: message %d accepted but not delivered: %+v", round, m.Seq, m)
			}
		}
	}
}
