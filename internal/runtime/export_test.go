package runtime

import (
	"context"

	"github.com/superagents/superagents/internal/tasks"
)

// BeginStop does the first step of Turns.Stop alone: no turn starts
// after, but the turns are not cancelled yet (Stop cancels them next).
func BeginStop(t *Turns) {
	t.mu.Lock()
	t.stopped = true
	t.mu.Unlock()
}

// NewWaker starts the task manager's waker on the runtime, for the tests
// of the wake rule through the runtime.
func NewWaker(rt *Runtime, wake func(sessionID string) bool) *tasks.Waker {
	return rt.tasks.NewWaker(wake)
}

// WakeDue is the wake rule the runtime's turns follow, for its tests.
func WakeDue(ctx context.Context, rt *Runtime, sessionID string) (bool, error) {
	return rt.tasks.WakeDue(ctx, sessionID)
}
