package storetest

import (
	"context"
	"testing"

	sa "github.com/superagents/superagents"
)

// testTaskBudget: a task's budget is stored with it, survives a reopen,
// cannot change afterwards, and a negative one is refused.
func testTaskBudget(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, reopen := openStore(t, factory)
	parent := mustCreate(t, st, user("Q1"))

	spec := newTask(parent.ID, "budgeted")
	spec.Task.Budget = sa.Budget{MaxCost: 0.25, MaxTokens: 120_000}
	task := mustCreateTask(t, st, spec)
	if task.Budget != spec.Task.Budget {
		t.Fatalf("created budget = %+v, want %+v", task.Budget, spec.Task.Budget)
	}
	plain := mustCreateTask(t, st, newTask(parent.ID, "plain"))
	if !plain.Budget.IsZero() {
		t.Fatalf("a task launched without a budget has %+v", plain.Budget)
	}

	st = reopen()
	got, err := st.Task(ctx, task.ID)
	if err != nil || got.Budget != spec.Task.Budget {
		t.Fatalf("after reopen: budget %+v, %v; want %+v", got.Budget, err, spec.Task.Budget)
	}
	listed, err := st.ListTasks(ctx, sa.TaskFilter{ParentSessionID: parent.ID})
	if err != nil || len(listed) != 2 || listed[1].Budget != spec.Task.Budget {
		t.Fatalf("listed = %+v, %v: want the budget in the listing too", listed, err)
	}

	_, err = st.UpdateTask(ctx, task.ID, func(tk *sa.Task) error { tk.Budget.MaxCost = 99; return nil })
	wantErrIs(t, err, sa.ErrInvalid, "changing a task's budget")
	if got, _ := st.Task(ctx, task.ID); got.Budget != spec.Task.Budget {
		t.Fatalf("budget after a refused change = %+v", got.Budget)
	}

	for _, b := range []sa.Budget{{MaxCost: -1}, {MaxTokens: -5}} {
		bad := newTask(parent.ID, "bad budget")
		bad.Task.Budget = b
		_, err := st.CreateTask(ctx, bad)
		wantErrIs(t, err, sa.ErrInvalid, "a negative budget")
	}
}
