package runtime

import "github.com/superagents/superagents/tasks"

// Waker is the one waker (tasks.Waker), which every way in wakes its
// agents with.
type Waker = tasks.Waker

// NewWaker starts a waker that follows the change log itself and calls
// wake for a watched session that is due (see tasks.Manager.NewWaker).
func (rt *Runtime) NewWaker(wake func(sessionID string) bool) *Waker {
	return rt.tasks.NewWaker(wake)
}

// NewCheckedWaker makes a waker for a way in that follows the change log
// itself and calls Check (see tasks.Manager.NewCheckedWaker).
func (rt *Runtime) NewCheckedWaker(wake func(sessionID string) bool) *Waker {
	return rt.tasks.NewCheckedWaker(wake)
}
