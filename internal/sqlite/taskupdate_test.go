package sqlite

import (
	"testing"
	"time"

	sa "github.com/superagents/superagents"
)

// TestChangedTaskColumns: an update writes the columns whose values
// changed, and only those.
func TestChangedTaskColumns(t *testing.T) {
	now := time.Unix(1_800_000_000, 0).UTC()
	old := sa.Task{ID: "t", Status: sa.TaskRunning, StartedAt: now, Progress: sa.TaskProgress{ToolCalls: 1}}
	for _, tt := range []struct {
		name   string
		change func(*sa.Task)
		want   string
		values int
	}{
		{"nothing", func(*sa.Task) {}, "", 0},
		{"progress", func(x *sa.Task) { x.Progress.ToolCalls = 2 }, "progress = ?", 1},
		{"ended", func(x *sa.Task) {
			end := now.Add(time.Second)
			x.Status, x.CompletedAt, x.Result, x.RunnerID = sa.TaskCompleted, &end, "done", ""
		}, "status = ?, completed_at = ?, result = ?", 3},
		{"cleared", func(x *sa.Task) { x.ClearedAt = &now }, "cleared_at = ?", 1},
	} {
		updated := old
		tt.change(&updated)
		set, args, err := changedTaskColumns(old, updated)
		if err != nil || set != tt.want || len(args) != tt.values {
			t.Errorf("%s: SET %q with %d values (%v), want %q with %d", tt.name, set, len(args), err, tt.want, tt.values)
		}
	}
}
