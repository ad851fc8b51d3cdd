package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	sa "github.com/superagents/superagents"
)

// batchRow is one batch's counts.
type batchRow struct {
	Batch, Parent string
	Total, Active int
}

// batchCounts reads task_batches, or (counted) the same figures from the
// tasks themselves.
func batchCounts(t *testing.T, s *Store, counted bool) []batchRow {
	t.Helper()
	query := `SELECT batch_id, parent_session_id, total, active FROM task_batches ORDER BY 1, 2`
	if counted {
		query = `SELECT batch_id, parent_session_id, COUNT(*), SUM(status IN ('queued', 'running', 'resumed'))
			FROM tasks WHERE batch_id != '' GROUP BY 1, 2 ORDER BY 1, 2`
	}
	rows, err := s.read.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []batchRow
	for rows.Next() {
		var r batchRow
		if err := rows.Scan(&r.Batch, &r.Parent, &r.Total, &r.Active); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// randomTaskLife creates tasks in a few batches of a few sessions and
// moves them through their statuses and between batches (ends, resumes,
// a parent deleted).
func randomTaskLife(t *testing.T, s *Store, seed uint64) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 1))
	var parents []sa.Session
	for range 3 {
		p, err := s.CreateSession(ctx, sa.NewSession{Agent: "general", Messages: []sa.Message{{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("q")}}}})
		if err != nil {
			t.Fatal(err)
		}
		parents = append(parents, p)
	}
	var tasks []sa.Task
	note := func(sa.Task, sa.BatchState) sa.Message {
		return sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("ended")}}
	}
	for range 200 {
		switch op := rng.IntN(4); {
		case op == 0 || len(tasks) == 0:
			parent := parents[rng.IntN(len(parents))]
			tk, err := s.CreateTask(ctx, sa.NewTask{
				Task: sa.Task{ParentSessionID: parent.ID, Description: "d", Prompt: "p", Agent: "general",
					BatchID: []string{"", "b1", "b2"}[rng.IntN(3)]},
				Session:         sa.NewSession{Agent: "general", Messages: []sa.Message{{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("p")}}}},
				JoinActiveBatch: rng.IntN(2) == 0,
			})
			if err == nil {
				tasks = append(tasks, tk)
			}
		case op == 1:
			tk := tasks[rng.IntN(len(tasks))]
			_, _ = s.UpdateTask(ctx, tk.ID, func(x *sa.Task) error {
				if x.Status.Terminal() {
					x.Status, x.CompletedAt = sa.TaskResumed, nil
					x.ResumeCount++
				} else {
					x.Status = []sa.TaskStatus{sa.TaskRunning, sa.TaskResumed}[rng.IntN(2)]
				}
				if rng.IntN(3) == 0 { // a move to another batch, or out of any
					x.BatchID = []string{"", "b1", "b2", "b3"}[rng.IntN(4)]
				}
				return nil
			})
		case op == 2:
			tk := tasks[rng.IntN(len(tasks))]
			_, _, _ = s.FinishTask(ctx, tk.ID, func(x *sa.Task) error {
				now := time.Now()
				x.Status, x.CompletedAt = []sa.TaskStatus{sa.TaskCompleted, sa.TaskError, sa.TaskCancelled}[rng.IntN(3)], &now
				return nil
			}, note)
		case rng.IntN(20) == 0:
			_ = s.DeleteSession(ctx, parents[rng.IntN(len(parents))].ID)
		}
	}
}

// TestBatchCountsKeptByTriggers: whatever happens to the tasks, the
// counts the triggers keep are those of the tasks.
func TestBatchCountsKeptByTriggers(t *testing.T) {
	for seed := range uint64(5) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			s, err := OpenDir(context.Background(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			randomTaskLife(t, s, seed)
			counted := batchCounts(t, s, true)
			if len(counted) == 0 {
				t.Fatal("no batch was made: the test proves nothing")
			}
			if diff := cmp.Diff(counted, batchCounts(t, s, false)); diff != "" {
				t.Fatalf("task_batches (+) differs from the tasks (-):\n%s", diff)
			}
		})
	}
}

// TestBatchCountsFilledOnUpgrade: a store written before task_batches
// existed gets the counts of the tasks it holds.
func TestBatchCountsFilledOnUpgrade(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	want := taskLifeIn(t, dir, 42)
	// Back to the schema before: its tasks as that schema wrote them.
	db, p := migrationsOf(t, filepath.Join(dir, FileName))
	if _, err := p.DownTo(ctx, 6); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s := openIn(t, dir)
	if diff := cmp.Diff(want, batchCounts(t, s, false)); diff != "" {
		t.Fatalf("task_batches after the upgrade (+) differs from the tasks (-):\n%s", diff)
	}
}

// TestBatchCountsKeptAcrossTheTriggerChange: counts kept by the schema
// before migration 8 (one trigger for every change) go on being kept by
// its two triggers after it.
func TestBatchCountsKeptAcrossTheTriggerChange(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	taskLifeIn(t, dir, 7)
	// At the schema before, its trigger moves tasks in and out of being
	// active and between batches.
	db, p := migrationsOf(t, filepath.Join(dir, FileName))
	if _, err := p.DownTo(ctx, 7); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE tasks SET status = 'completed' WHERE rowid % 2 = 0 AND status IN ('queued', 'running', 'resumed')`,
		`UPDATE tasks SET status = 'resumed', resume_count = resume_count + 1 WHERE rowid % 3 = 0 AND status = 'completed'`,
		`UPDATE tasks SET batch_id = 'b9' WHERE rowid % 5 = 0`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s := openIn(t, dir)
	if diff := cmp.Diff(batchCounts(t, s, true), batchCounts(t, s, false)); diff != "" {
		t.Fatalf("task_batches after the upgrade (+) differs from the tasks (-):\n%s", diff)
	}
	randomTaskLife(t, s, 8)
	if diff := cmp.Diff(batchCounts(t, s, true), batchCounts(t, s, false)); diff != "" {
		t.Fatalf("task_batches after more changes (+) differs from the tasks (-):\n%s", diff)
	}
}

// taskLifeIn runs a random task life in a store in dir and returns the
// batch counts of its tasks, counted from them; the store is closed.
func taskLifeIn(t *testing.T, dir string, seed uint64) []batchRow {
	t.Helper()
	s, err := OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	randomTaskLife(t, s, seed)
	counted := batchCounts(t, s, true)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return counted
}

// openIn opens the store in dir (migrating it), closed when the test ends.
func openIn(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
