package tasks

import "context"

// HolderTask is the holder of the lease a task's run takes on its own
// session.
const HolderTask = "task"

// Lease takes a session's turn lease for this manager's runner (see
// runner.Runner.Lease).
func (m *Manager) Lease(ctx context.Context, sessionID, holder, taskID string) (release func(), err error) {
	return m.runner.Lease(ctx, sessionID, holder, taskID)
}

// releaser returns the function that gives back this runner's lease of a
// session, once.
func (m *Manager) releaser(ctx context.Context, sessionID string) func() {
	return m.runner.Releaser(ctx, sessionID)
}
