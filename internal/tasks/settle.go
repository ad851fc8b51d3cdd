package tasks

import (
	"context"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/events"
)

// Loop is what Settle runs a session's turns with.
type Loop struct {
	// Turn runs the session's agent once: wake is false for the first
	// turn (with its input), true for a wake (no input: the agent answers
	// the notifications of its ended tasks).
	Turn func(ctx context.Context, wake bool) error
	// Waiting, if set, is told when a wait for the session's tasks
	// starts (true) and ends (false): a task's inactivity clock stops
	// meanwhile.
	Waiting func(waiting bool)
	// BeforeWake, if set, runs once the session's tasks have all ended,
	// before the waker decides: it shows their notifications, or
	// refreshes budgets. Its error ends Settle.
	BeforeWake func(ctx context.Context) error
}

// Settle is the one turn loop: it runs a session's turn and then, while
// the session's agent has tasks of its own, waits for them to end (in
// this process or any other) and wakes the agent once per batch of ended
// tasks (the waker's rule), running it again. It returns the first error
// of a turn, a wait or a hook; nil once the agent has no tasks left to
// wait for, or no notification left to answer. The caller holds the
// session's lease throughout: `run --wait` and a task waiting for its own
// tasks settle so. This is the blocking mode; runtime.Turns is the
// background one (the chat, HTTP), which gives the lease back after each
// turn (a user may write before the wake) and lets the waker start the
// wake as a turn of its own. Both decide a wake with the waker's Check.
//
// A session that is told something while it waits (a message sent to
// it, when it is a task's; a question one of its tasks asks) is woken at
// once, its tasks still running, to read it.
func (m *Manager) Settle(ctx context.Context, sessionID string, l Loop) error {
	cursor := m.bus.Now() // before the turn: what it is told meanwhile counts
	if err := l.Turn(ctx, false); err != nil {
		return err
	}
	due := false
	waker := m.NewCheckedWaker(func(string) bool { due = true; return true })
	waker.Watch(sessionID)
	for {
		// A session that never had tasks of its own has none to wait for
		// and no notification to answer: one indexed read tells, where
		// waiting and checking cost several.
		own, err := m.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: sessionID, IncludeCleared: true, Limit: 1})
		if err != nil || len(own) == 0 {
			return err
		}
		told, err := m.waitTasks(ctx, sessionID, cursor, l.Waiting)
		if err != nil {
			return err
		}
		if told {
			if l.BeforeWake != nil {
				if err := l.BeforeWake(ctx); err != nil {
					return err
				}
			}
			cursor = m.bus.Now()
			if err := l.Turn(ctx, true); err != nil {
				return err
			}
			continue
		}
		if l.BeforeWake != nil {
			if err := l.BeforeWake(ctx); err != nil {
				return err
			}
		}
		due = false
		if err := waker.Check(ctx, sessionID); err != nil || !due {
			return err
		}
		cursor = m.bus.Now()
		if err := l.Turn(ctx, true); err != nil {
			return err
		}
	}
}

// waitTasks waits until no task of the session is active, telling
// waiting when the wait starts and ends; or, reporting told, until the
// session is told something (toldChange) from cursor on, or a message
// sent to it waits.
func (m *Manager) waitTasks(ctx context.Context, sessionID string, cursor *events.Cursor, waiting func(bool)) (told bool, err error) {
	if n, err := m.store.WaitingTaskMessages(ctx, sessionID); err != nil || n > 0 {
		return n > 0, err
	}
	if waiting != nil {
		waiting(true)
		defer waiting(false)
	}
	wait, cancel := context.WithCancel(ctx)
	heard := make(chan bool, 1)
	go func() {
		_, err := cursor.NextMatching(wait, func(c sa.Change) bool { return toldChange(c, sessionID) })
		heard <- err == nil
		cancel()
	}()
	err = m.WaitIdle(wait, sessionID)
	cancel()
	if <-heard {
		return true, nil
	}
	return false, err
}

// toldChange reports whether a change tells a session something its
// agent should read at once: a message sent to it (a task's session is
// the task's id), or a question one of its tasks asks.
func toldChange(c sa.Change, sessionID string) bool {
	switch c.Kind {
	case sa.ChangeTaskMessage:
		return c.TaskID == sessionID
	case sa.ChangeTaskQuestion:
		return c.SessionID == sessionID
	}
	return false
}
