package tasks

import (
	"context"
	"sync"
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
			if EndsTask(ch) {
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
