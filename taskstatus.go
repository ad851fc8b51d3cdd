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

// TaskStatusNames lists every status, in lifecycle order, for messages.
func TaskStatusNames() string {
	names := make([]string, len(TaskStatuses))
	for i, s := range TaskStatuses {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
