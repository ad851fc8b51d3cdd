package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/events"
)

// waitSignal waits for a signal on ch; the limit only keeps a broken
// notifier from hanging the test.
func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("no signal: %s", what)
	}
}

// drain empties a signal channel, so the next receive is a new signal.
func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// TestChangedAcrossStores checks that a write through one store wakes the
// followers of another store on the same database (as two nodes would
// be), through LISTEN/NOTIFY, also after the listening connection was
// killed, and that what woke them is in the log.
func TestChangedAcrossStores(t *testing.T) {
	ctx := context.Background()
	stores := openStores(t, 2)
	a, b := stores[0], stores[1]
	// b signals once when its listener is up; wait for it, so the write
	// below cannot happen before b listens.
	waitSignal(t, b.Changed(), "b's listener started")

	last, err := b.LastChangeID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.CreateSession(ctx, sa.NewSession{Title: "from a"})
	if err != nil {
		t.Fatal(err)
	}
	waitSignal(t, b.Changed(), "a created a session")
	changes, err := b.Changes(ctx, last, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].Kind != sa.ChangeSessionCreated || changes[0].SessionID != s.ID {
		t.Fatalf("b reads %+v after the signal, want the session's creation", changes)
	}

	// Kill b's listening connection: b reconnects and signals again, and
	// later writes wake it as before.
	pid := b.ListenerPID()
	var killed bool
	if err := a.Pool().QueryRow(ctx, `SELECT pg_terminate_backend($1)`, int32(pid)).Scan(&killed); err != nil || !killed {
		t.Fatalf("terminate b's listener (backend %d): %v, %v", pid, killed, err)
	}
	waitSignal(t, b.Changed(), "b's listener is back")
	drain(b.Changed())
	// The listener may still be reconnecting; each write that goes
	// unheard is retried until one is heard.
	deadline := time.Now().Add(30 * time.Second)
	for heard := false; !heard; {
		if time.Now().After(deadline) {
			t.Fatal("b hears nothing from a since its listener was killed")
		}
		if _, err := a.Append(ctx, s.ID, user("after the reconnect")); err != nil {
			t.Fatal(err)
		}
		select {
		case <-b.Changed():
			heard = true
		case <-time.After(time.Second):
		}
	}
}

// TestSchemasAreSeparate checks that stores in two schemas of one database
// do not share their change logs (nor their ids' lock and signals, which
// are keyed by schema).
func TestSchemasAreSeparate(t *testing.T) {
	ctx := context.Background()
	a, b := openTemp(t), openTemp(t)
	if a.Schema() == b.Schema() {
		t.Fatalf("both stores in schema %s", a.Schema())
	}
	if _, err := a.CreateSession(ctx, sa.NewSession{}); err != nil {
		t.Fatal(err)
	}
	if id, err := b.LastChangeID(ctx); err != nil || id != 0 {
		t.Fatalf("b's log ends at %d (%v), want 0", id, err)
	}
}

// TestEventBusAcrossStores follows the change log of one store with the
// event bus (what /v1/events and the dashboard read) while another store
// on the same database writes, as two nodes would. The bus polls once an
// hour here: only LISTEN/NOTIFY can wake it, and it must deliver every
// change, in order.
func TestEventBusAcrossStores(t *testing.T) {
	ctx := context.Background()
	stores := openStores(t, 2)
	a, b := stores[0], stores[1]
	bus, err := events.New(ctx, b, events.Options{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	cursor := bus.Now()

	parent, err := a.CreateSession(ctx, sa.NewSession{Messages: []sa.Message{user("go")}})
	if err != nil {
		t.Fatal(err)
	}
	const tasks = 10
	for i := range tasks {
		task, err := a.CreateTask(ctx, sa.NewTask{Task: sa.Task{ParentSessionID: parent.ID, Description: fmt.Sprint("task ", i), Status: sa.TaskRunning}})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = a.FinishTask(ctx, task.ID, func(t *sa.Task) error {
			t.Status, t.Result = sa.TaskCompleted, "done"
			return nil
		}, func(ended sa.Task, _ sa.BatchState) sa.Message {
			return sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart(ended.ID + " done")}}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want, err := a.Changes(ctx, 0, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, w := range want {
		got, err := cursor.Next(waitCtx)
		if err != nil {
			t.Fatalf("waiting for change %d (%s): %v", w.ID, w.Kind, err)
		}
		if got.ID != w.ID || got.Kind != w.Kind {
			t.Fatalf("the bus gave change %d (%s), want %d (%s)", got.ID, got.Kind, w.ID, w.Kind)
		}
	}
}
