// Package storekit holds what every Store implementation does the same
// way whatever its database: checking and preparing what is written, the
// rules a task change must follow, and turning a prefix lookup into one
// id. The stores then differ only in their SQL and their locking.
package storekit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	sa "github.com/superagents/superagents"
)

// ValidateMessages checks messages about to be stored, naming the bad one
// when there are several.
func ValidateMessages(msgs []sa.Message) error {
	for i, m := range msgs {
		if err := m.Validate(); err != nil {
			if len(msgs) == 1 {
				return err
			}
			return fmt.Errorf("message %d: %w", i+1, err)
		}
	}
	return nil
}

// PrepareMessage returns a copy of a valid message in the form it is
// stored in a session: kind and parts filled in, created now unless it
// says when, at the store's precision.
func PrepareMessage(m sa.Message, sessionID string, now time.Time) sa.Message {
	m = m.Clone()
	m.SessionID = sessionID
	if m.Kind == "" {
		m.Kind = sa.KindMessage
	}
	if m.Parts == nil {
		m.Parts = []sa.Part{}
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
	}
	m.CreatedAt = AtNanos(m.CreatedAt)
	return m
}

// AtNanos is t as a store keeps it (Unix nanoseconds) and reads it back:
// in UTC, without a monotonic reading.
func AtNanos(t time.Time) time.Time { return time.Unix(0, t.UnixNano()).UTC() }

// EncodedMessage marshals a message with its parts already encoded (for
// the message row) by json.Marshal, so a change costs no second encoding
// of them.
type EncodedMessage struct {
	sa.Message
	Parts json.RawMessage
}

// MarshalJSON writes the message's fields, then its encoded parts as they
// are: the same bytes as json.Marshal of the message, without scanning
// the parts (most of the bytes) again.
func (e EncodedMessage) MarshalJSON() ([]byte, error) {
	m := e.Message
	m.Parts = nil
	head, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	// json.Marshal writes "parts":null right after role or kind; the
	// sequence cannot occur inside a string, whose quotes are escaped.
	i := bytes.Index(head, []byte(`,"parts":null`))
	if i < 0 || head[len(head)-1] != '}' {
		return nil, fmt.Errorf("encode message: unexpected form %.40q", head)
	}
	parts := []byte(e.Parts)
	if len(parts) == 0 {
		parts = []byte("null")
	}
	out := make([]byte, 0, len(head)+len(parts)+16)
	out = append(out, head[:i]...)
	out = append(out, head[i+len(`,"parts":null`):len(head)-1]...)
	out = append(out, `,"parts":`...)
	out = append(out, parts...)
	return append(out, '}'), nil
}

// NormalizeTask gives a task the form it has when read back: UTC times
// at nanosecond precision, the timeout in whole milliseconds.
func NormalizeTask(t sa.Task) sa.Task {
	round := func(p *time.Time) *time.Time {
		if p == nil {
			return nil
		}
		v := AtNanos(*p)
		return &v
	}
	t.StartedAt, t.CreatedAt = AtNanos(t.StartedAt), AtNanos(t.CreatedAt)
	t.CompletedAt, t.ResultRetrievedAt, t.ClearedAt = round(t.CompletedAt), round(t.ResultRetrievedAt), round(t.ClearedAt)
	t.Timeout = sa.Seconds(t.Timeout.Duration().Truncate(time.Millisecond))
	if !t.Progress.LastUpdate.IsZero() {
		t.Progress.LastUpdate = AtNanos(t.Progress.LastUpdate)
	}
	return t
}

// ChangeTask applies change to a copy of a task as read from the store
// and checks the result: the id, parent, creation time and fork flag are
// fixed, and a status change must be one TaskStatus.CanBecome allows
// (ErrConflict otherwise). It returns the task to write, normalized, and
// the kind of change to record.
func ChangeTask(old sa.Task, change func(*sa.Task) error) (sa.Task, sa.ChangeKind, error) {
	t := old
	t.Progress.ByName = maps.Clone(old.Progress.ByName)
	t.Progress.LastTools = slices.Clone(old.Progress.LastTools)
	if old.Worktree != nil {
		w := *old.Worktree
		t.Worktree = &w
	}
	if err := change(&t); err != nil {
		return sa.Task{}, "", err
	}
	if !sameWorktree(old.Worktree, t.Worktree) {
		return sa.Task{}, "", fmt.Errorf("%w: a task's worktree (its path, branch, base and repository) cannot change", sa.ErrInvalid)
	}
	if t.ID != old.ID || t.ParentSessionID != old.ParentSessionID || t.IsForked != old.IsForked || !t.CreatedAt.Equal(old.CreatedAt) ||
		t.Budget != old.Budget || t.Launcher != old.Launcher {
		return sa.Task{}, "", fmt.Errorf("%w: a task's id, parent, fork flag, budget, launcher and creation time cannot change", sa.ErrInvalid)
	}
	if !old.CanBecome(t.Status) {
		return sa.Task{}, "", fmt.Errorf("%w: task %s cannot go from %s to %s", sa.ErrConflict, old.ID, old.Status, t.Status)
	}
	if err := t.Validate(); err != nil {
		return sa.Task{}, "", err
	}
	if !Storable(t.RunnerID) {
		return sa.Task{}, "", fmt.Errorf("%w: runner id %q", sa.ErrInvalid, t.RunnerID)
	}
	kind := sa.ChangeTaskUpdated
	if t.Status != old.Status {
		kind = sa.TaskChangeKind(t.Status)
	}
	return NormalizeTask(t), kind, nil
}

// sameWorktree reports whether two records name the same worktree (what
// it changed may differ).
func sameWorktree(a, b *sa.TaskWorktree) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Path == b.Path && a.Branch == b.Branch && a.Base == b.Base && a.Repo == b.Repo
}

// EncodeWorktree is a task's worktree as its column holds it: JSON, or
// nothing for a task without one.
func EncodeWorktree(w *sa.TaskWorktree) ([]byte, error) {
	if w == nil {
		return []byte{}, nil
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encode worktree: %w", err)
	}
	return b, nil
}

// DecodeWorktree reads a task's worktree column back.
func DecodeWorktree(id string, b []byte) (*sa.TaskWorktree, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var w sa.TaskWorktree
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("%w: task %s has an unreadable worktree: %v", sa.ErrCorrupt, id, err)
	}
	return &w, nil
}

// ClearForDeletedParent is the change a task gets when its parent session
// is deleted: it leaves every listing, and if still active it is ended as
// cancelled (the process running it stops it when it reads the change).
func ClearForDeletedParent(now time.Time) func(*sa.Task) error {
	return func(t *sa.Task) error {
		t.ClearedAt = &now
		if t.Status.Active() {
			t.Status, t.CompletedAt, t.RunnerID = sa.TaskCancelled, &now, ""
			t.Result, t.Error = "", sa.ParentDeletedError
		}
		return nil
	}
}

// MaxCandidates is how many matches an ambiguity error lists; a prefix
// lookup asks for one more, to know whether there are more.
const MaxCandidates = 5

// ExactID is the id a reference names if it is a whole id: what a
// resolver looks up first, by key, before it searches by prefix (a whole
// id is never ambiguous, see PickID). A reference that is no id at all
// gives "", which names nothing.
func ExactID(ref string) string {
	prefix, err := sa.CheckIDPrefix(ref)
	if err != nil {
		return ""
	}
	return prefix
}

// PickID turns the ids a prefix lookup found (at most MaxCandidates+1, in
// order) into one id, a not-found error or an ambiguity error.
func PickID(what, ref, prefix string, ids []string) (string, error) {
	switch {
	case len(ids) == 0:
		return "", sa.NotFoundf("no %s with id %s", what, ref)
	case len(ids) == 1 || ids[0] == prefix:
		// A full id is never ambiguous, even if it prefixes a longer one.
		return ids[0], nil
	}
	amb := &sa.AmbiguousIDError{Prefix: prefix, Candidates: ids}
	if len(ids) > MaxCandidates {
		amb.Candidates, amb.More = ids[:MaxCandidates], true
	}
	return "", amb
}

// BatchOfOne is the batch state of a task launched without a batch, just
// ended.
func BatchOfOne(t sa.Task) sa.BatchState {
	b := sa.BatchState{Total: 1}
	if t.Status == sa.TaskCompleted {
		b.Completed = []string{t.ID}
	}
	return b
}

// Signal wakes the followers of a store's change log. Sends merge: one
// value may stand for many writes.
type Signal chan struct{}

// NewSignal is a signal none has been sent on.
func NewSignal() Signal { return make(Signal, 1) }

// Send signals, unless a signal is waiting already.
func (s Signal) Send() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// TaskColumns are the columns of a task ScanTask reads.
const TaskColumns = `id, parent_session_id, parent_message_id, parent_agent, description, prompt, agent, status,
	started_at, completed_at, result_retrieved_at, result, error, progress, batch_id, resume_count, is_forked,
	timeout_ms, runner_id, cleared_at, created_at, max_cost, max_tokens, worktree, may_ask, launcher`

// ScanTask reads a task from a row of TaskColumns through scan, its
// raw-bytes columns through rawDest (see Reader).
func ScanTask(scan func(dest ...any) error, rawDest func(p *string) any) (sa.Task, error) {
	var (
		t                             sa.Task
		started, created, timeoutMS   int64
		completed, retrieved, cleared *int64
		progress                      string
		worktree                      []byte
	)
	err := scan(&t.ID, &t.ParentSessionID, &t.ParentMessageID, rawDest(&t.ParentAgent), rawDest(&t.Description),
		rawDest(&t.Prompt), rawDest(&t.Agent), &t.Status, &started, &completed, &retrieved, rawDest(&t.Result),
		rawDest(&t.Error), &progress, rawDest(&t.BatchID), &t.ResumeCount, &t.IsForked, &timeoutMS, &t.RunnerID,
		&cleared, &created, &t.Budget.MaxCost, &t.Budget.MaxTokens, &worktree, &t.MayAsk, &t.Launcher)
	if err != nil {
		return sa.Task{}, err
	}
	if t.Worktree, err = DecodeWorktree(t.ID, worktree); err != nil {
		return sa.Task{}, err
	}
	if err := json.Unmarshal([]byte(progress), &t.Progress); err != nil {
		return sa.Task{}, fmt.Errorf("%w: task %s has unreadable progress: %v", sa.ErrCorrupt, t.ID, err)
	}
	t.StartedAt, t.CreatedAt = time.Unix(0, started).UTC(), time.Unix(0, created).UTC()
	t.CompletedAt, t.ResultRetrievedAt, t.ClearedAt = nanosTime(completed), nanosTime(retrieved), nanosTime(cleared)
	t.Timeout = sa.Seconds(time.Duration(timeoutMS) * time.Millisecond)
	return t, nil
}

// nanosTime is the time of n nanoseconds, nil for none.
func nanosTime(n *int64) *time.Time {
	if n == nil {
		return nil
	}
	t := time.Unix(0, *n).UTC()
	return &t
}
