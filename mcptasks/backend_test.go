package mcptasks_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/superagents/superagents/mcptasks"
)

// memBackend is the tests' task store: each task has an owner, as the
// server's store would record the caller that launched it.
type memBackend struct {
	mu      sync.Mutex
	tasks   map[string]*memTask
	expired map[string]bool
}

type memTask struct {
	owner     string
	st        mcptasks.State
	cancels   int
	responses mcp.InputResponseMap
}

func newMemBackend() *memBackend {
	return &memBackend{tasks: map[string]*memTask{}, expired: map[string]bool{}}
}

func (b *memBackend) put(owner string, st mcptasks.State) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tasks[st.ID] = &memTask{owner: owner, st: st}
}

// set changes a task as the server's worker would.
func (b *memBackend) set(id string, f func(*mcptasks.State)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f(&b.tasks[id].st)
}

func (b *memBackend) expire(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.tasks, id)
	b.expired[id] = true
}

func (b *memBackend) task(id string) memTask {
	b.mu.Lock()
	defer b.mu.Unlock()
	return *b.tasks[id]
}

func (b *memBackend) find(caller, id string) (*memTask, error) {
	if b.expired[id] {
		return nil, fmt.Errorf("task %s: %w", id, mcptasks.ErrExpired)
	}
	t, ok := b.tasks[id]
	if !ok {
		return nil, fmt.Errorf("task %s: %w", id, mcptasks.ErrNotFound)
	}
	if t.owner != caller {
		return nil, fmt.Errorf("task %s: %w", id, mcptasks.ErrForeign)
	}
	return t, nil
}

func (b *memBackend) Get(_ context.Context, caller, id string) (mcptasks.State, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.find(caller, id)
	if err != nil {
		return mcptasks.State{}, err
	}
	return t.st, nil
}

func (b *memBackend) Cancel(_ context.Context, caller, id string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.find(caller, id)
	if err != nil {
		return err
	}
	t.cancels++
	if !t.st.Status.Terminal() {
		t.st.Status = mcptasks.StatusCancelled
		t.st.InputRequests = nil
	}
	return nil
}

func (b *memBackend) Update(_ context.Context, caller, id string, responses mcp.InputResponseMap) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, err := b.find(caller, id)
	if err != nil {
		return err
	}
	for k, v := range responses {
		if _, outstanding := t.st.InputRequests[k]; !outstanding {
			continue // not asked, or already answered
		}
		if t.responses == nil {
			t.responses = mcp.InputResponseMap{}
		}
		t.responses[k] = v
		delete(t.st.InputRequests, k)
	}
	if t.st.Status == mcptasks.StatusInputRequired && len(t.st.InputRequests) == 0 {
		t.st.Status = mcptasks.StatusWorking
		t.st.InputRequests = nil
	}
	return nil
}
