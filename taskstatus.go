package superagents

import (
	"fmt"
	"strings"
)

// ParseTaskStatus reads a status as a person types it: case and the
// spaces around it do not matter ("Completed" is completed). Empty is no
// status, as a filter that selects every task.
func ParseTaskStatus(s string) (TaskStatus, error) {
	status := TaskStatus(strings.ToLower(strings.TrimSpace(s)))
	if status == "" || status.Valid() {
		return status, nil
	}
	return "", fmt.Errorf("%w: unknown status %q: use one of %s", ErrInvalid, s, TaskStatusNames())
}

// Resumable reports whether a resume may continue the task: it completed,
// or a resume of it ended without an answer (cancelled or failed), which
// leaves the answer before it standing.
func (t Task) Resumable() bool {
	switch t.Status {
	case TaskCompleted:
		return true
	case TaskCancelled, TaskError:
		return t.ResumeCount > 0
	}
	return false
}

// CanBecome is TaskStatus.CanBecome for this task: besides completed, a
// task whose resume was cancelled or failed may be resumed again. That is
// a new run on the earlier answer, not a regression: a late event still
// cannot turn a cancelled or failed task into a completed one.
func (t Task) CanBecome(next TaskStatus) bool {
	if next == TaskResumed && t.Status.Terminal() {
		return t.Resumable()
	}
	return t.Status.CanBecome(next)
}

// TaskStatusNames lists every status, in lifecycle order, for messages.
func TaskStatusNames() string {
	names := make([]string, len(TaskStatuses))
	for i, s := range TaskStatuses {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
