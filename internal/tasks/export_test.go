package tasks

import "time"

// MarkedAliveAt sets when the manager last marked its runner alive, as a
// process paused for a while would have it.
func MarkedAliveAt(m *Manager, at time.Time) { m.runner.Backdate(at) }

// SetProgressDelay sets how long after a change a run's progress is
// stored; set it before launching tasks.
func SetProgressDelay(m *Manager, d time.Duration) { m.progressDelay = d }
