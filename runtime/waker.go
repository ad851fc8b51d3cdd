package runtime

import (
	"context"
	"sync"

	"github.com/superagents/superagents/tasks"
)

// Waker wakes the agents of the sessions it watches, once per batch of
// ended tasks (seed 002): it follows the change log, so a task that ends
// in any process counts, and calls wake for a watched session once the
// session is due (tasks.Manager.WakeDue: none of its tasks active, their
// notifications unanswered). A wake that cannot run at once (the session
// is busy) is looked at again by Check, which a way in calls when its
// turn there ends.
type Waker struct {
	rt   *Runtime
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
func (rt *Runtime) NewWaker(wake func(sessionID string) bool) *Waker {
	w := rt.newWaker(wake)
	ctx, stop := context.WithCancel(context.Background())
	w.stop = stop
	cursor := rt.Bus.Now()
	go func() {
		defer close(w.done)
		for {
			ch, err := cursor.Next(ctx)
			if err != nil {
				return
			}
			if tasks.EndsTask(ch) {
				w.Check(ctx, ch.SessionID)
			}
		}
	}()
	return w
}

// NewCheckedWaker makes a waker for a way in that follows the change log
// itself and calls Check when a task's ending was dealt with there: the
// chat, which shows the notification before the wake it may allow. The
// rule and its once-per-batch bookkeeping are the same as NewWaker's.
func (rt *Runtime) NewCheckedWaker(wake func(sessionID string) bool) *Waker {
	w := rt.newWaker(wake)
	close(w.done)
	return w
}

func (rt *Runtime) newWaker(wake func(sessionID string) bool) *Waker {
	return &Waker{rt: rt, wake: wake, watched: map[string]bool{}, woke: map[string]int64{}, stop: func() {}, done: make(chan struct{})}
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
func (w *Waker) Check(ctx context.Context, sessionID string) {
	if !w.Watching(sessionID) {
		return
	}
	mark, err := w.rt.Tasks.WakeMark(ctx, sessionID)
	if err != nil || mark == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.woke[sessionID] == mark {
		return
	}
	if w.wake(sessionID) {
		w.woke[sessionID] = mark
	}
}

// Close stops following the change log and waits for a wake in progress.
func (w *Waker) Close() {
	w.stop()
	<-w.done
}
