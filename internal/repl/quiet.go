package repl

import (
	"sync"

	sa "github.com/superagents/superagents"
)

// quietEndings remembers the tasks the user cancelled (/cancel): their
// endings are shown but wake nobody, since the user stopped that work
// and did not ask the agent to answer for it. A task's ending and its
// notification are one transaction, so the notification is the next
// change of the parent's after the task's own: that is how the two are
// paired. The zero value is ready to use.
type quietEndings struct {
	mu sync.Mutex
	// cancelling: tasks the user is cancelling, whose ending is not seen
	// yet; next: parent sessions whose next notification tells of such
	// an ending.
	cancelling map[string]bool
	next       map[string]bool
}

// expect notes that the user is cancelling a task, before the cancel, so
// that the ending is never read before the note.
func (q *quietEndings) expect(taskID string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cancelling == nil {
		q.cancelling = map[string]bool{}
	}
	q.cancelling[taskID] = true
}

// forget drops the note of a cancel that was refused.
func (q *quietEndings) forget(taskID string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.cancelling, taskID)
}

// changed reads a task's change: an ending as cancelled of a task the
// user cancelled makes its parent's next notification a quiet one. Any
// other ending (the task completed before the cancel reached it) is not.
func (q *quietEndings) changed(t sa.Task) {
	if t.Status.Active() {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.cancelling[t.ID] {
		return
	}
	delete(q.cancelling, t.ID)
	if t.Status != sa.TaskCancelled {
		return
	}
	if q.next == nil {
		q.next = map[string]bool{}
	}
	q.next[t.ParentSessionID] = true
}

// notified reads a notification to a session and reports whether it
// tells of an ending the user caused, which must not wake the agent.
func (q *quietEndings) notified(session string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	quiet := q.next[session]
	delete(q.next, session)
	return quiet
}

// askedQuestions pairs a task's question with the notice that tells its
// parent of it: the notice is the next change after the question's, in
// the same transaction, and carries the task's id. A question whose
// parent got no notice (it was deleted) is forgotten when its task
// ends, before that ending's notification. The zero value is ready to
// use.
type askedQuestions struct {
	mu      sync.Mutex
	pending map[string]bool // tasks whose question's notice is not read yet
}

// asked notes a task's question.
func (q *askedQuestions) asked(taskID string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == nil {
		q.pending = map[string]bool{}
	}
	q.pending[taskID] = true
}

// notified reads a notification about a task and reports whether it
// tells of its question (not of its ending).
func (q *askedQuestions) notified(taskID string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	question := q.pending[taskID]
	delete(q.pending, taskID)
	return question
}

// ended forgets the question of a task that ended.
func (q *askedQuestions) ended(t sa.Task) {
	if t.Status.Active() {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.pending, t.ID)
}
