package storetest

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	sa "github.com/superagents/superagents"
)

// testTaskWorktree: a task made with an id of its own (as a task with a
// worktree is, named before it exists) keeps it, for its session too; its
// worktree is stored with it, survives a reopen, takes what a run found
// in it, and cannot be moved, added or taken away.
func testTaskWorktree(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, reopen := openStore(t, factory)
	parent := mustCreate(t, st, user("Q1"), agent("A1"))
	wt := &sa.TaskWorktree{Path: "/data/worktrees/repo-abc123", Branch: "superagents/abc123", Base: "0123456789abcdef0123456789abcdef01234567", Repo: "/home/u/repo"}

	for _, fork := range []bool{false, true} {
		nt := newTask(parent.ID, "isolated")
		nt.Fork = fork
		nt.Task.ID = sa.NewID()
		nt.Task.Worktree = wt
		task := mustCreateTask(t, st, nt)
		if task.ID != nt.Task.ID || task.Worktree == nil || *task.Worktree != *wt {
			t.Fatalf("created task %s with worktree %+v, want id %s and %+v", task.ID, task.Worktree, nt.Task.ID, wt)
		}
		if sess, err := st.Session(ctx, task.ID); err != nil || sess.ID != task.ID {
			t.Fatalf("the session of a task created with its id: %+v, %v", sess, err)
		}
		// A second task with the same id is refused: the id is taken.
		if _, err := st.CreateTask(ctx, nt); err == nil {
			t.Fatal("a second task with the same id was created")
		}
	}

	tests := []struct {
		name   string
		change func(*sa.Task)
		ok     bool
	}{
		{"record the changes", func(tk *sa.Task) {
			tk.Worktree.Changes, tk.Worktree.Commits = " a.txt | 2 +-\n 1 file changed", 1
		}, true},
		{"mark it removed", func(tk *sa.Task) { tk.Worktree.Removed = true }, true},
		{"move it", func(tk *sa.Task) { tk.Worktree.Path = "/elsewhere" }, false},
		{"another branch", func(tk *sa.Task) { tk.Worktree.Branch = "main" }, false},
		{"drop it", func(tk *sa.Task) { tk.Worktree = nil }, false},
	}
	task := mustCreateTask(t, st, func() sa.NewTask {
		nt := newTask(parent.ID, "changing")
		nt.Task.ID, nt.Task.Worktree = sa.NewID(), wt
		return nt
	}())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := st.Task(ctx, task.ID)
			if err != nil {
				t.Fatal(err)
			}
			updated, err := st.UpdateTask(ctx, task.ID, func(tk *sa.Task) error { tt.change(tk); return nil })
			if !tt.ok {
				wantErrIs(t, err, sa.ErrInvalid, "UpdateTask("+tt.name+")")
				if after, _ := st.Task(ctx, task.ID); !cmp.Equal(after.Worktree, before.Worktree) {
					t.Fatalf("a refused change stored the worktree %+v", after.Worktree)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := st.Task(ctx, task.ID); !cmp.Equal(got.Worktree, updated.Worktree) {
				t.Fatalf("worktree read back %+v, want %+v", got.Worktree, updated.Worktree)
			}
		})
	}
	// A change that fails leaves the record alone, even when it had
	// changed the worktree before failing.
	before, _ := st.Task(ctx, task.ID)
	_, err := st.UpdateTask(ctx, task.ID, func(tk *sa.Task) error {
		tk.Worktree.Changes = "lost"
		return sa.ErrConflict
	})
	wantErrIs(t, err, sa.ErrConflict, "UpdateTask(failing)")
	if after, _ := st.Task(ctx, task.ID); after.Worktree.Changes != before.Worktree.Changes {
		t.Fatalf("a failed change altered the stored worktree: %+v", after.Worktree)
	}

	st = reopen()
	got, err := st.Task(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := *wt
	want.Changes, want.Commits, want.Removed = " a.txt | 2 +-\n 1 file changed", 1, true
	if got.Worktree == nil || *got.Worktree != want {
		t.Fatalf("after a reopen the worktree is %+v, want %+v", got.Worktree, want)
	}
	list, err := st.ListTasks(ctx, sa.TaskFilter{ParentSessionID: parent.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range list {
		if tk.Worktree == nil {
			t.Fatalf("listed task %s without its worktree", tk.ID)
		}
	}
	// A task without one has none.
	plain := mustCreateTask(t, st, newTask(parent.ID, "plain"))
	if got, _ := st.Task(ctx, plain.ID); got.Worktree != nil {
		t.Fatalf("a task without a worktree reads back with %+v", got.Worktree)
	}
	// A worktree without its branch is refused.
	bad := newTask(parent.ID, "bad")
	bad.Task.Worktree = &sa.TaskWorktree{Path: "/x"}
	_, err = st.CreateTask(ctx, bad)
	wantErrIs(t, err, sa.ErrInvalid, "CreateTask(incomplete worktree)")
}
