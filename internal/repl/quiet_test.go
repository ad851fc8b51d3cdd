package repl

import (
	"context"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
)

// TestUserCancelDoesNotWake: the user's own /cancel of a task ends it with
// its notification shown, and the agent is not woken to answer for it; a
// task that ends by itself afterwards still wakes it, once.
func TestUserCancelDoesNotWake(t *testing.T) {
	eng, c, e := delegated(t, "please delegate the sum", 1)
	active, err := eng.Store.ListTasks(context.Background(), sa.TaskFilter{Active: true})
	if err != nil || len(active) != 1 {
		t.Fatalf("active tasks = %v, %v", active, err)
	}
	if got := blockText(mustSubmit(t, c, "/cancel "+active[0].ID[:8])); !strings.Contains(got, "is cancelled") {
		t.Fatalf("/cancel said %q", got)
	}
	settle(t, c)
	evs := e.drain()
	if n := slicesCount(evs, TaskNotice); n != 1 || wakes(evs) != 0 {
		t.Fatalf("%d notices and %d wakes after /cancel, want 1 and 0: %+v", n, wakes(evs), evs)
	}

	if got := ask(t, c, e, "please delegate the sum"); got != "Launched." {
		t.Fatalf("the agent answered %q", got)
	}
	eng.release(t)
	settle(t, c)
	if evs := e.drain(); wakes(evs) != 1 {
		t.Fatalf("%d wakes after a task ended by itself, want 1: %+v", wakes(evs), evs)
	}
}
