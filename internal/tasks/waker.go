package tasks

import (
	"context"
	"sync"

	sa "github.com/superagents/superagents"
)

// Waker wakes the agents of the sessions it watches, once per batch of
// ended tasks (TASK-NOTIFY-2): it follows the change log, so a task that ends
// in any process counts, and calls wake for a watched session once the
// session is due (WakeMark: none of its tasks active, their notifications
// unanswered). A wake that cannot run at once (the session is busy) is
// looked at again by Check, which a way in calls when its turn there
// ends. It is the one waker: the chat, HTTP turns, run --wait and a task
// waiting for its own tasks all wake through one.
type Waker struct {
	m    *Manager
	wake func(sessionID string) bool

	mu      sync.Mutex
	watched map[string]bool
	woke    map[string]int64 // session → the newest notification it was woken for

	stop context.CancelFunc
	done chan struct{}
}

// NewWaker starts a waker that calls wake for a watched session that is
// due (from the waker's goroutine, or from a caller of Check); wake
// reports whether it started the agent's turn. Close stops it.
func (m *Manager) NewWaker(wake func(sessionID string) bool) *Waker {
	w := m.newWaker(wake)
	ctx, stop := context.WithCancel(context.Background())
	w.stop = stop
	cursor := m.bus.Now()
	go func() {
		defer close(w.done)
		for {
			ch, err := cursor.Next(ctx)
			if err != nil {
				return
			}
			if EndsTask(ch) || ch.Kind == sa.ChangeTaskQuestion {
				w.Check(ctx, ch.SessionID) //nolint:errcheck // looked at again at the next ending
			}
		}
	}()
	return w
}

// NewCheckedWaker makes a waker for a caller that follows the change log
// itself, or waits for the tasks some other way, and calls Check when a
// task's ending was dealt with there: the chat, which shows the
// notification before the wake it may allow, run --wait and a task
// waiting for its own. The rule and its once-per-batch bookkeeping are
// the same as NewWaker's.
func (m *Manager) NewCheckedWaker(wake func(sessionID string) bool) *Waker {
	w := m.newWaker(wake)
	close(w.done)
	return w
}

func (m *Manager) newWaker(wake func(sessionID string) bool) *Waker {
	return &Waker{m: m, wake: wake, watched: map[string]bool{}, woke: map[string]int64{}, stop: func() {}, done: make(chan struct{})}
}

// Watch makes the waker wake a session's agent from now on.
func (w *Waker) Watch(sessionID string) {
	w.mu.Lock()
	w.watched[sessionID] = true
	w.mu.Unlock()
}

// Watching reports whether a session is watched.
func (w *Waker) Watching(sessionID string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.watched[sessionID]
}

// Check wakes a watched session's agent if it is due, once for the same
// notifications: a wake that could not run (the session was busy) is
// tried again by the Check after that turn, which answered them or not.
// The error is the store's, when it could not tell.
func (w *Waker) Check(ctx context.Context, sessionID string) error {
	if !w.Watching(sessionID) {
		return nil
	}
	mark, err := w.m.WakeMark(ctx, sessionID)
	if err != nil || mark == 0 {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// Notification ids only grow: a Check that read an older mark than
	// the one a concurrent Check woke for has nothing new.
	if mark <= w.woke[sessionID] {
		return nil
	}
	if w.wake(sessionID) {
		w.woke[sessionID] = mark
	}
	return nil
}

// Close stops following the change log and waits for a wake in progress.
func (w *Waker) Close() {
	w.stop()
	<-w.done
}

// WakeDue reports whether a session's agent is to be woken to answer its
// tasks: none of its tasks is active any more (in any process: one wake
// answers a whole batch), and notifications wait that it has not
// answered. Every way in and every task that launched tasks of its own
// wakes by this one rule.
func (m *Manager) WakeDue(ctx context.Context, sessionID string) (bool, error) {
	mark, err := m.WakeMark(ctx, sessionID)
	return mark > 0, err
}

// WakeMark is WakeDue with, when the agent is due, the id of the newest
// notification it has not answered (0 when it is not due): a waker that
// remembers it wakes once for those notifications, however often it
// looks. A task of the session that waits for the agent's answer to its
// question makes it due too, its siblings still running: the question
// is a notification it has not answered.
func (m *Manager) WakeMark(ctx context.Context, sessionID string) (int64, error) {
	active, err := m.store.ListTasks(ctx, sa.TaskFilter{ParentSessionID: sessionID, Active: true, IncludeCleared: true, Limit: maxAsking})
	if err != nil {
		return 0, err
	}
	if len(active) > 0 {
		if asking, err := m.asking(ctx, active); err != nil || !asking {
			return 0, err
		}
	}
	return m.unseen(ctx, sessionID)
}

// maxAsking is how many of a session's active tasks WakeMark looks at for
// a question (the newest).
const maxAsking = 64

// asking reports whether one of tasks waits for its launcher's answer
// in its conversation (not through the Tasks extension: Task.MayAsk).
func (m *Manager) asking(ctx context.Context, tasks []sa.Task) (bool, error) {
	for _, t := range tasks {
		if t.MayAsk {
			continue
		}
		pending, err := m.PendingInputs(ctx, t.ID)
		if err != nil || len(pending) > 0 {
			return len(pending) > 0, err
		}
	}
	return false, nil
}

// unseen returns the id of the newest task notification of a session that
// its agent has not answered yet (it came after its last message), or 0.
func (m *Manager) unseen(ctx context.Context, sessionID string) (int64, error) {
	last, ok, err := m.store.LatestMessage(ctx, sessionID, sa.MessageMatch{
		Kinds: []sa.Kind{sa.KindNotification}, Roles: []sa.Role{sa.RoleAssistant}})
	if err != nil || !ok || last.Kind != sa.KindNotification {
		return 0, err
	}
	return last.ID, nil
}
