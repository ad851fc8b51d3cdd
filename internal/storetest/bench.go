package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
)

// The store benchmarks: every implementation runs the same ones with its
// own opener, so that their figures can be set side by side.

// Opener opens a fresh, empty store for one benchmark, closed when it ends.
type Opener func(b *testing.B) sa.Store

// Fill appends n short user/assistant messages to a session, in batches.
func Fill(b *testing.B, st sa.Store, id string, n int) {
	b.Helper()
	const batch = 1000
	for done := 0; done < n; done += batch {
		msgs := make([]sa.Message, min(batch, n-done))
		for i := range msgs {
			role := sa.RoleUser
			if i%2 == 1 {
				role = sa.RoleAssistant
			}
			msgs[i] = sa.Message{Role: role, Parts: []sa.Part{sa.TextPart(fmt.Sprintf("message %d with some ordinary text in it", done+i))}}
		}
		if _, err := st.Append(context.Background(), id, msgs...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchFork measures one fork at growing parent histories: it must stay
// flat, since a fork writes one row whatever the history.
func BenchFork(b *testing.B, open Opener) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("parent=%d", n), func(b *testing.B) {
			st := open(b)
			parent, err := st.CreateSession(context.Background(), sa.NewSession{})
			if err != nil {
				b.Fatal(err)
			}
			Fill(b, st, parent.ID, n)
			b.ResetTimer()
			for b.Loop() {
				if _, err := st.Fork(context.Background(), parent.ID, sa.ForkOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchLatestMessage finds the newest notification or answer of
// sessions of growing histories, its last message a notification: the
// question a task's ending asks of its parent. It must stay flat. settle,
// when not nil, runs once the history is written (PostgreSQL plans by
// statistics that its autovacuum brings up to date some time later).
func BenchLatestMessage(b *testing.B, open Opener, settle func(b *testing.B)) {
	match := sa.MessageMatch{Kinds: []sa.Kind{sa.KindNotification}, Roles: []sa.Role{sa.RoleAssistant}}
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			ctx := context.Background()
			st := open(b)
			s, err := st.CreateSession(ctx, sa.NewSession{})
			if err != nil {
				b.Fatal(err)
			}
			Fill(b, st, s.ID, n)
			if _, err := st.Append(ctx, s.ID, sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("done")}}); err != nil {
				b.Fatal(err)
			}
			if settle != nil {
				settle(b)
			}
			b.ResetTimer()
			for b.Loop() {
				if m, ok, err := st.LatestMessage(ctx, s.ID, match); err != nil || !ok || m.Kind != sa.KindNotification {
					b.Fatalf("latest: %+v %v %v", m, ok, err)
				}
			}
		})
	}
}

// BenchForkBytes reports how much the database grows per fork; size says
// how big the store's data is now, with whatever settling it needs first.
func BenchForkBytes(b *testing.B, open Opener, size func(b *testing.B, st sa.Store) int64) {
	ctx := context.Background()
	st := open(b)
	parent, err := st.CreateSession(ctx, sa.NewSession{})
	if err != nil {
		b.Fatal(err)
	}
	Fill(b, st, parent.ID, 10_000)
	const forks = 2000
	before := size(b, st)
	b.ResetTimer()
	for b.Loop() {
		for range forks {
			if _, err := st.Fork(ctx, parent.ID, sa.ForkOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(size(b, st)-before)/float64(forks*b.N), "bytes/fork")
}

// BenchReplayChain reads the history of the last session of a chain of
// 100 forks holding 100,000 messages in all.
func BenchReplayChain(b *testing.B, open Opener) {
	ctx := context.Background()
	st := open(b)
	const depth, total = 100, 100_000
	s, err := st.CreateSession(ctx, sa.NewSession{})
	if err != nil {
		b.Fatal(err)
	}
	for level := range depth {
		Fill(b, st, s.ID, total/depth)
		if level < depth-1 {
			if s, err = st.Fork(ctx, s.ID, sa.ForkOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for b.Loop() {
		hist, err := st.History(ctx, s.ID)
		if err != nil {
			b.Fatal(err)
		}
		if len(hist) != total {
			b.Fatalf("history has %d messages, want %d", len(hist), total)
		}
	}
	b.ReportMetric(float64(total)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchAppend measures appending one message per transaction, and batches
// of 100 in one transaction.
func BenchAppend(b *testing.B, open Opener) {
	for _, batch := range []int{1, 100} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			ctx := context.Background()
			st := open(b)
			s, err := st.CreateSession(ctx, sa.NewSession{})
			if err != nil {
				b.Fatal(err)
			}
			msgs := make([]sa.Message, batch)
			for i := range msgs {
				msgs[i] = sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("a message of ordinary length for a chat turn")}}
			}
			b.ResetTimer()
			for b.Loop() {
				if _, err := st.Append(ctx, s.ID, msgs...); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(batch)*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchParallelAppend appends one message per transaction from 8 writers
// per CPU, each to a session of its own: what concurrent writers cost
// each other in the store.
func BenchParallelAppend(b *testing.B, open Opener) {
	ctx := context.Background()
	st := open(b)
	b.SetParallelism(8)
	msg := sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("a message of ordinary length for a chat turn")}}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		s, err := st.CreateSession(ctx, sa.NewSession{})
		if err != nil {
			b.Error(err)
			return
		}
		for pb.Next() {
			if _, err := st.Append(ctx, s.ID, msg); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchTurnLease measures taking and giving back a session's turn lease,
// what every turn, append and clear through the runtime adds to its own
// writes.
func BenchTurnLease(b *testing.B, open Opener) {
	ctx := context.Background()
	st := open(b)
	if err := st.RegisterRunner(ctx, sa.Runner{ID: "runner-bench", Host: "bench", PID: 1}); err != nil {
		b.Fatal(err)
	}
	sess, err := st.CreateSession(ctx, sa.NewSession{Agent: "general"})
	if err != nil {
		b.Fatal(err)
	}
	lease := sa.TurnLease{SessionID: sess.ID, RunnerID: "runner-bench", Holder: "bench"}
	b.ResetTimer()
	for b.Loop() {
		if _, err := st.AcquireTurn(ctx, lease); err != nil {
			b.Fatal(err)
		}
		if err := st.ReleaseTurn(ctx, sess.ID, lease.RunnerID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchTaskLife creates a task (its session, first message and lease in
// one transaction) and finishes it with the notification to its parent,
// one task after another: the store's part of a task's life, two of the
// three write transactions a task costs.
func BenchTaskLife(b *testing.B, open Opener) {
	ctx := context.Background()
	st := open(b)
	parent, err := st.CreateSession(ctx, sa.NewSession{Agent: "general"})
	if err != nil {
		b.Fatal(err)
	}
	note := func(t sa.Task, _ sa.BatchState) sa.Message {
		return sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("task " + t.ID + " completed")}}
	}
	for b.Loop() {
		tk, err := st.CreateTask(ctx, sa.NewTask{
			Task: sa.Task{ParentSessionID: parent.ID, Description: "a task", Prompt: "do the thing", Agent: "general",
				Status: sa.TaskRunning, BatchID: sa.NewID(), RunnerID: "bench"},
			Session: sa.NewSession{Agent: "general", Origin: sa.OriginTask,
				Messages: []sa.Message{{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("do the thing")}}}},
			Lease: &sa.TurnLease{RunnerID: "bench", Holder: "task"},
		})
		if err != nil {
			b.Fatal(err)
		}
		_, _, err = st.FinishTask(ctx, tk.ID, func(t *sa.Task) error {
			now := time.Now()
			t.Status, t.CompletedAt, t.Result = sa.TaskCompleted, &now, "done"
			return nil
		}, note)
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchWaitingTaskMessages counts the messages that wait for a running
// task: the read its run makes before each of its model requests
// (Loop.Inbox), which finds none almost always. The task was sent
// delivered messages before, and the store holds 200 other tasks with 10
// delivered messages each.
func BenchWaitingTaskMessages(b *testing.B, open Opener) {
	for _, delivered := range []int{0, 100} {
		b.Run(fmt.Sprintf("delivered=%d", delivered), func(b *testing.B) {
			ctx := context.Background()
			st := open(b)
			parent, err := st.CreateSession(ctx, sa.NewSession{Agent: "general"})
			if err != nil {
				b.Fatal(err)
			}
			for range 200 {
				steeredTask(b, st, parent.ID, 10)
			}
			id := steeredTask(b, st, parent.ID, delivered)
			b.ResetTimer()
			for b.Loop() {
				n, err := st.WaitingTaskMessages(ctx, id)
				if err != nil || n != 0 {
					b.Fatalf("waiting messages: %d, %v", n, err)
				}
			}
		})
	}
}

// steeredTask creates a running task that was sent n messages, all
// delivered, and returns its id.
func steeredTask(b *testing.B, st sa.Store, parent string, n int) string {
	b.Helper()
	ctx := context.Background()
	task, err := st.CreateTask(ctx, sa.NewTask{
		Task: sa.Task{ParentSessionID: parent, Description: "a task", Prompt: "do the thing", Agent: "general",
			Status: sa.TaskRunning, BatchID: sa.NewID(), RunnerID: "bench"},
		Session: sa.NewSession{Agent: "general", Origin: sa.OriginTask,
			Messages: []sa.Message{{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("do the thing")}}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	render := func(m sa.TaskMessage) sa.Message {
		return sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(m.From + ": " + m.Text)}}
	}
	for i := range n {
		if _, err := st.SendTaskMessage(ctx, sa.TaskMessage{TaskID: task.ID, From: "the user", Text: fmt.Sprintf("message %d", i)}); err != nil {
			b.Fatal(err)
		}
		if _, err := st.DeliverTaskMessages(ctx, task.ID, render); err != nil {
			b.Fatal(err)
		}
	}
	return task.ID
}
