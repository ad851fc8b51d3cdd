package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	sa "github.com/superagents/superagents"
)

func newTask(parent string, desc string) sa.NewTask {
	return sa.NewTask{
		Task: sa.Task{ParentSessionID: parent, ParentAgent: "general", Description: desc, Prompt: "do " + desc,
			Agent: "explore", BatchID: "batch1", Timeout: sa.Seconds(90 * time.Second)},
		Session: sa.NewSession{Agent: "explore", Model: "offline", Title: desc, Messages: []sa.Message{user("do " + desc)}},
	}
}

func mustCreateTask(t *testing.T, st sa.Store, nt sa.NewTask) sa.Task {
	t.Helper()
	task, err := st.CreateTask(context.Background(), nt)
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	return task
}

func testTasks(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, reopen := openStore(t, factory)
	parent := mustCreate(t, st, user("Q1"), agent("A1"))

	plain := mustCreateTask(t, st, newTask(parent.ID, "plain"))
	if plain.Status != sa.TaskQueued || plain.IsForked || plain.ID == "" || plain.CreatedAt.IsZero() || plain.StartedAt.IsZero() {
		t.Fatalf("new task = %+v: want queued, not forked, with id and times", plain)
	}
	if plain.ParentMessageID == 0 {
		t.Fatal("a task must record the parent's last message at launch")
	}
	// The child session of a plain task starts fresh with its own prompt.
	wantTexts(t, st, plain.ID, "do plain")

	forkSpec := newTask(parent.ID, "forked")
	forkSpec.Fork = true
	forked := mustCreateTask(t, st, forkSpec)
	if !forked.IsForked {
		t.Fatal("a task created with Fork must be marked forked")
	}
	child, err := st.Session(ctx, forked.ID)
	if err != nil || child.ParentID != parent.ID || child.Agent != "explore" {
		t.Fatalf("forked task's session = %+v, %v: want a child of %s with the task's agent", child, err, parent.ID)
	}
	// The forked child inherits the parent's history, then its own first message.
	wantTexts(t, st, forked.ID, "Q1", "A1", "do forked")

	got, err := st.Task(ctx, forked.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(forked, got); diff != "" {
		t.Fatalf("task read back differs (-created +read):\n%s", diff)
	}
	if r, err := st.ResolveTask(ctx, sa.ShortID(forked.ID)); err != nil || r.ID != forked.ID {
		t.Fatalf("ResolveTask(short id) = %s, %v", r.ID, err)
	}
	_, err = st.ResolveTask(ctx, "zzzzzzzzzzzzzzzz")
	wantErrIs(t, err, sa.ErrNotFound, "ResolveTask(unknown)")

	_, err = st.CreateTask(ctx, newTask("0000000000000000", "orphan"))
	wantErrIs(t, err, sa.ErrNotFound, "CreateTask(unknown parent)")
	bad := newTask(parent.ID, "bad")
	bad.Session.Messages = []sa.Message{{Role: "robot"}}
	_, err = st.CreateTask(ctx, bad)
	wantErrIs(t, err, sa.ErrInvalid, "CreateTask(bad first message)")

	otherParent := mustCreate(t, st)
	elsewhere := mustCreateTask(t, st, newTask(otherParent.ID, "elsewhere"))

	t.Run("list filters", func(t *testing.T) {
		tests := []struct {
			name   string
			filter sa.TaskFilter
			want   []string
		}{
			{"by parent, newest first", sa.TaskFilter{ParentSessionID: parent.ID}, []string{forked.ID, plain.ID}},
			{"everything", sa.TaskFilter{}, []string{elsewhere.ID, forked.ID, plain.ID}},
			{"by status", sa.TaskFilter{Status: sa.TaskRunning}, nil},
			{"by agent", sa.TaskFilter{Agent: "explore", Limit: 1}, []string{elsewhere.ID}},
			{"by batch", sa.TaskFilter{BatchID: "batch1", ParentSessionID: otherParent.ID}, []string{elsewhere.ID}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				list, err := st.ListTasks(ctx, tt.filter)
				if err != nil {
					t.Fatal(err)
				}
				var gotIDs []string
				for _, task := range list {
					gotIDs = append(gotIDs, task.ID)
				}
				if !slices.Equal(gotIDs, tt.want) {
					t.Fatalf("ListTasks(%+v) = %v, want %v", tt.filter, gotIDs, tt.want)
				}
			})
		}
	})

	t.Run("update round trip survives a restart", func(t *testing.T) {
		done := time.Now()
		_, err := st.UpdateTask(ctx, plain.ID, func(task *sa.Task) error {
			task.Status = sa.TaskRunning
			task.Progress = sa.TaskProgress{ToolCalls: 3, ByName: map[string]int{"read": 2, "grep": 1},
				LastTools: []string{"grep", "read"}, Phase: "tools", LastUpdate: done}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		updated, err := st.UpdateTask(ctx, plain.ID, func(task *sa.Task) error {
			task.Status, task.Result, task.CompletedAt = sa.TaskCompleted, "the answer", &done
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		st = reopen()
		got, err := st.Task(ctx, plain.ID)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(updated, got); diff != "" {
			t.Fatalf("task after restart differs (-updated +read):\n%s", diff)
		}
		if got.Status != sa.TaskCompleted || got.Result != "the answer" || got.Progress.ByName["read"] != 2 {
			t.Fatalf("task after update = %+v", got)
		}
	})

	t.Run("deleting the parent removes its tasks from listings", func(t *testing.T) {
		if err := st.DeleteSession(ctx, parent.ID); err != nil {
			t.Fatal(err)
		}
		list, err := st.ListTasks(ctx, sa.TaskFilter{ParentSessionID: parent.ID})
		if err != nil || len(list) != 0 {
			t.Fatalf("tasks of a deleted parent still listed: %d, %v", len(list), err)
		}
		all, err := st.ListTasks(ctx, sa.TaskFilter{ParentSessionID: parent.ID, IncludeCleared: true})
		if err != nil || len(all) != 2 || all[0].ClearedAt == nil {
			t.Fatalf("cleared tasks must stay readable with IncludeCleared: %d, %v", len(all), err)
		}
		// The queued one is cancelled: nobody is left to hear from it. The
		// completed one keeps its result.
		if got := all[0]; got.ID != forked.ID || got.Status != sa.TaskCancelled || got.Error != sa.ParentDeletedError || got.CompletedAt == nil {
			t.Fatalf("active task of a deleted parent = %s %s %q: want %s cancelled with %q", got.ID, got.Status, got.Error, forked.ID, sa.ParentDeletedError)
		}
		if got := all[1]; got.Status != sa.TaskCompleted || got.Result != "the answer" {
			t.Fatalf("ended task of a deleted parent = %s %q: want it completed, result kept", got.Status, got.Result)
		}
		// The forked child keeps its inherited history though its parent is gone.
		wantTexts(t, st, forked.ID, "Q1", "A1", "do forked")
	})

	t.Run("a task outlives its own session", func(t *testing.T) {
		if err := st.DeleteSession(ctx, elsewhere.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Task(ctx, elsewhere.ID); err != nil {
			t.Fatalf("task whose session was deleted: %v", err)
		}
		_, err := st.Session(ctx, elsewhere.ID)
		wantErrIs(t, err, sa.ErrNotFound, "Session(deleted task session)")
	})
}

// testResolveTask: task ids resolve like session ids (they are the ids of
// the tasks' sessions), and only tasks answer.
func testResolveTask(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStoreWith(t, factory, Options{NewID: idsInOrder("pppp000000000000", "abcd000000000001", "abcd000000000002", "abce000000000003")})
	parent := mustCreate(t, st, user("Q1"))
	mustCreateTask(t, st, newTask(parent.ID, "one"))
	mustCreateTask(t, st, newTask(parent.ID, "two"))
	mustCreate(t, st, user("a session, not a task"))

	tests := []struct {
		ref  string
		want string
		err  error
	}{
		{"abcd000000000001", "abcd000000000001", nil},
		{"abcd000000000002", "abcd000000000002", nil},
		{"abcd00...", "", sa.ErrInvalid}, // still ambiguous
		{"abcd", "", sa.ErrInvalid},
		{"abc", "", sa.ErrInvalid},
		{"abce", "", sa.ErrNotFound}, // a session that is no task
		{"pppp", "", sa.ErrNotFound},
		{"zzzz", "", sa.ErrNotFound},
	}
	for _, tt := range tests {
		got, err := st.ResolveTask(ctx, tt.ref)
		if tt.err != nil {
			wantErrIs(t, err, tt.err, "ResolveTask("+tt.ref+")")
			continue
		}
		if err != nil || got.ID != tt.want {
			t.Errorf("ResolveTask(%q) = %s, %v; want %s", tt.ref, got.ID, err, tt.want)
		}
	}
	_, err := st.ResolveTask(ctx, "abcd")
	var amb *sa.AmbiguousIDError
	if !errors.As(err, &amb) || !slices.Equal(amb.Candidates, []string{"abcd000000000001", "abcd000000000002"}) {
		t.Fatalf("ResolveTask(abcd) = %v: want an ambiguity error listing both tasks, never a pick", err)
	}
}

func testTaskTransitions(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	parent := mustCreate(t, st, user("Q"))
	task := mustCreateTask(t, st, newTask(parent.ID, "t"))

	set := func(status sa.TaskStatus) error {
		_, err := st.UpdateTask(ctx, task.ID, func(tk *sa.Task) error {
			tk.Status = status
			return nil
		})
		return err
	}
	steps := []struct {
		to   sa.TaskStatus
		want error
	}{
		{sa.TaskCompleted, sa.ErrConflict}, // queued cannot complete without running
		{sa.TaskRunning, nil},
		{sa.TaskCompleted, nil},
		{sa.TaskRunning, sa.ErrConflict}, // terminal states never regress
		{sa.TaskResumed, nil},            // only a completed task can be resumed
		{sa.TaskCancelled, nil},
		{sa.TaskCompleted, sa.ErrConflict}, // a late completion cannot undo a cancel
		{sa.TaskResumed, sa.ErrConflict},
	}
	for _, s := range steps {
		err := set(s.to)
		if s.want == nil && err != nil || s.want != nil && !errors.Is(err, s.want) {
			t.Fatalf("→ %s: error %v, want %v", s.to, err, s.want)
		}
	}
	if got, _ := st.Task(ctx, task.ID); got.Status != sa.TaskCancelled {
		t.Fatalf("status = %s after refused transitions, want cancelled", got.Status)
	}

	_, err := st.UpdateTask(ctx, task.ID, func(tk *sa.Task) error { tk.ParentSessionID = "elsewhere"; return nil })
	wantErrIs(t, err, sa.ErrInvalid, "changing a task's parent")
	sentinel := errors.New("refused by caller")
	_, err = st.UpdateTask(ctx, task.ID, func(tk *sa.Task) error { tk.Result = "x"; return sentinel })
	wantErrIs(t, err, sentinel, "an error from change")
	if got, _ := st.Task(ctx, task.ID); got.Result != "" {
		t.Fatal("an aborted update was written")
	}
	_, err = st.UpdateTask(ctx, "0000000000000000", func(*sa.Task) error { return nil })
	wantErrIs(t, err, sa.ErrNotFound, "UpdateTask(unknown)")

	// Read-modify-write is atomic: of many concurrent "resume if
	// completed" updates exactly one wins.
	other := mustCreateTask(t, st, newTask(parent.ID, "race"))
	for _, s := range []sa.TaskStatus{sa.TaskRunning, sa.TaskCompleted} {
		if _, err := st.UpdateTask(ctx, other.ID, func(tk *sa.Task) error { tk.Status = s; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			_, err := st.UpdateTask(ctx, other.ID, func(tk *sa.Task) error {
				if tk.Status != sa.TaskCompleted {
					return sa.ErrConflict
				}
				tk.Status = sa.TaskResumed
				tk.ResumeCount++
				return nil
			})
			if err == nil {
				wins.Add(1)
			} else if !errors.Is(err, sa.ErrConflict) {
				t.Errorf("concurrent resume: %v", err)
			}
		})
	}
	wg.Wait()
	got, _ := st.Task(ctx, other.ID)
	if wins.Load() != 1 || got.ResumeCount != 1 {
		t.Fatalf("%d concurrent resumes won (resume count %d), want exactly 1", wins.Load(), got.ResumeCount)
	}
}

// testJoinActiveBatch: a task created to join its parent's active batch
// joins it while one of the batch is active, and keeps its own batch id
// otherwise; launches at once never start two batches.
func testJoinActiveBatch(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	parent := mustCreate(t, st, user("Q"))
	joining := func(batch string) sa.NewTask {
		nt := newTask(parent.ID, "t "+batch)
		nt.Task.BatchID, nt.JoinActiveBatch = batch, true
		return nt
	}
	first := mustCreateTask(t, st, joining("own-1"))
	if first.BatchID != "own-1" {
		t.Fatalf("with no active task, the batch is %q, want its own", first.BatchID)
	}
	second := mustCreateTask(t, st, joining("own-2"))
	if second.BatchID != "own-1" {
		t.Fatalf("while the first is active, the batch is %q, want the first's", second.BatchID)
	}
	// A task that does not ask keeps its own batch.
	if alone := mustCreateTask(t, st, newTask(parent.ID, "alone")); alone.BatchID != "batch1" {
		t.Fatalf("a task not joining has batch %q", alone.BatchID)
	}
	for _, tk := range []sa.Task{first, second} {
		if _, _, err := st.FinishTask(ctx, tk.ID, func(x *sa.Task) error { x.Status = sa.TaskCancelled; return nil },
			func(sa.Task, sa.BatchState) sa.Message {
				return sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("ended")}}
			}); err != nil {
			t.Fatal(err)
		}
	}
	// "alone" is still active, in its batch: a joining task joins it.
	if got := mustCreateTask(t, st, joining("own-3")); got.BatchID != "batch1" {
		t.Fatalf("the batch of the remaining active task is %q, want batch1", got.BatchID)
	}

	// Launches into a fresh session at once: one batch.
	fresh := mustCreate(t, st, user("Q"))
	var wg sync.WaitGroup
	batches := make(chan string, 16)
	for i := range 16 {
		wg.Go(func() {
			nt := newTask(fresh.ID, fmt.Sprintf("at once %d", i))
			nt.Task.BatchID, nt.JoinActiveBatch = fmt.Sprintf("at-once-%d", i), true
			tk, err := st.CreateTask(ctx, nt)
			if err != nil {
				t.Error(err)
				return
			}
			batches <- tk.BatchID
		})
	}
	wg.Wait()
	close(batches)
	seen := map[string]int{}
	for b := range batches {
		seen[b]++
	}
	if len(seen) != 1 {
		t.Fatalf("16 launches at once made batches %v, want one", seen)
	}
}
