package storetest

import (
	"context"
	"testing"

	sa "github.com/superagents/superagents"
)

// testTaskLauncher: the principal a task was launched as is stored with
// it, read back by Task and ListTasks, survives a reopen and cannot
// change; a task launched without one has none, and one a store could
// not keep as text is refused.
func testTaskLauncher(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, reopen := openStore(t, factory)
	parent := mustCreate(t, st, user("Q1"))
	const launcher = "token:0123456789abcdef"

	nt := newTask(parent.ID, "launched over MCP")
	nt.Task.Launcher = launcher
	task := mustCreateTask(t, st, nt)
	if task.Launcher != launcher {
		t.Fatalf("CreateTask returned launcher %q, want %q", task.Launcher, launcher)
	}
	if got, err := st.Task(ctx, task.ID); err != nil || got.Launcher != launcher {
		t.Fatalf("Task: launcher %q, %v; want %q", got.Launcher, err, launcher)
	}
	if plain := mustCreateTask(t, st, newTask(parent.ID, "launched otherwise")); plain.Launcher != "" {
		t.Fatalf("a task created without a launcher has %q", plain.Launcher)
	}
	bad := newTask(parent.ID, "unstorable")
	bad.Task.Launcher = "token:\x00"
	_, err := st.CreateTask(ctx, bad)
	wantErrIs(t, err, sa.ErrInvalid, "CreateTask(launcher with a NUL)")

	tests := []struct {
		name   string
		change func(*sa.Task)
		ok     bool
	}{
		{"run it", func(tk *sa.Task) { tk.Status = sa.TaskRunning }, true},
		{"another launcher", func(tk *sa.Task) { tk.Launcher = "token:fedcba9876543210" }, false},
		{"drop the launcher", func(tk *sa.Task) { tk.Launcher = "" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := st.UpdateTask(ctx, task.ID, func(tk *sa.Task) error { tt.change(tk); return nil })
			if tt.ok && err != nil {
				t.Fatal(err)
			}
			if !tt.ok {
				wantErrIs(t, err, sa.ErrInvalid, "UpdateTask("+tt.name+")")
			}
			if got, err := st.Task(ctx, task.ID); err != nil || got.Launcher != launcher {
				t.Fatalf("after UpdateTask(%s): launcher %q, %v; want %q", tt.name, got.Launcher, err, launcher)
			}
		})
	}

	st = reopen()
	list, err := st.ListTasks(ctx, sa.TaskFilter{ParentSessionID: parent.ID})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tk := range list {
		if tk.ID == task.ID {
			found = tk.Launcher == launcher
		}
	}
	if !found {
		t.Fatalf("after a reopen, ListTasks does not give task %s with launcher %q: %+v", task.ID, launcher, list)
	}
}
