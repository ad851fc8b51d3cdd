package storekit

import (
	"encoding/json"
	"fmt"

	sa "github.com/superagents/superagents"
)

// CheckAsk refuses a request of a task that cannot ask: one that has
// ended, or whose launcher cannot answer.
func CheckAsk(t sa.Task) error {
	if !t.Status.Active() {
		return fmt.Errorf("%w: task %s has ended (%s): it can ask nothing", sa.ErrConflict, sa.ShortID(t.ID), t.Status)
	}
	if !t.MayAsk {
		return fmt.Errorf("%w: task %s may not ask: its launcher cannot answer", sa.ErrConflict, sa.ShortID(t.ID))
	}
	return nil
}

// CheckAnswer refuses answers to a task that has ended.
func CheckAnswer(t sa.Task) error {
	if !t.Status.Active() {
		return &sa.TaskEndedError{TaskID: t.ID, Status: t.Status}
	}
	return nil
}

// ValidAnswers refuses answers that are not JSON, before anything is read.
func ValidAnswers(answers map[string]json.RawMessage) error {
	for k, v := range answers {
		if !json.Valid(v) {
			return fmt.Errorf("%w: the answer to %q is not JSON", sa.ErrInvalid, k)
		}
	}
	return nil
}

// Outstanding picks, among a run's requests, those answers names that
// still await one: the keys to answer, in the requests' order.
func Outstanding(requests []sa.InputRequest, answers map[string]json.RawMessage) []string {
	var keys []string
	for _, r := range requests {
		if _, ok := answers[r.Key]; ok && r.Pending() {
			keys = append(keys, r.Key)
		}
	}
	return keys
}
