package taskqueue

import (
	"testing"
	"time"

	"github.com/riverqueue/river"
)

// TestRunLimitFollowsTheTask: a job's run limit is the node's, or the
// task's own timeout and a minute for its ending when that is longer (a
// task launched where the configuration allows more than this node's).
func TestRunLimitFollowsTheTask(t *testing.T) {
	w := &runWorker{limit: 31 * time.Minute}
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{"no timeout of its own", 0, 31 * time.Minute},
		{"a shorter one", 10 * time.Minute, 31 * time.Minute},
		{"a longer one", 2 * time.Hour, 2*time.Hour + time.Minute},
	} {
		job := &river.Job[RunArgs]{Args: RunArgs{TaskID: "t", TimeoutMS: tt.timeout.Milliseconds()}}
		if got := w.Timeout(job); got != tt.want {
			t.Errorf("%s: run limit %s, want %s", tt.name, got, tt.want)
		}
	}
}
