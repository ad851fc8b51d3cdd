package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/postgres/pgtest"
)

// TestOrderUnderConcurrency runs many writers through three stores (three
// pools: several connections each) on one database while a follower reads
// the change log as it grows and forkers fork a session being appended to.
// It checks that:
//   - the follower, which only ever asks for ids after the last it saw,
//     saw every change the log holds at the end: no id committed after a
//     later-numbered one was read;
//   - in log order, message ids only grow;
//   - the history of every fork, read as soon as the fork returned, is its
//     history at the end: no message of the parent committed below the
//     fork point after the fork.
//
// Opened WithoutIDLock, the stores fail it: the follower misses changes
// and message ids go backwards in the log (8 of 416 missed, in one run).
func TestOrderUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	stores := openStores(t, 3)
	shared, err := stores[0].CreateSession(ctx, sa.NewSession{Messages: []sa.Message{user("start")}})
	if err != nil {
		t.Fatal(err)
	}

	const writers, perWriter, forkers, forksEach = 9, 40, 3, 15
	done := make(chan struct{})
	followed := make(chan []int64, 1)
	go func() { followed <- follow(t, stores[0], done) }()

	var wg sync.WaitGroup
	errs := make(chan error, writers+forkers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := stores[w%len(stores)]
			own, err := st.CreateSession(ctx, sa.NewSession{})
			if err != nil {
				errs <- err
				return
			}
			for i := range perWriter {
				target := own.ID
				if i%2 == 0 {
					target = shared.ID
				}
				if _, err := st.Append(ctx, target, user(fmt.Sprintf("w%d-%d", w, i))); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	type fork struct {
		id    string
		first []string
	}
	forks := make(chan fork, forkers*forksEach)
	for f := range forkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := stores[f%len(stores)]
			for range forksEach {
				child, err := st.Fork(ctx, shared.ID, sa.ForkOptions{})
				if err != nil {
					errs <- err
					return
				}
				h, err := st.History(ctx, child.ID)
				if err != nil {
					errs <- err
					return
				}
				forks <- fork{child.ID, texts(h)}
			}
		}()
	}
	wg.Wait()
	close(done)
	close(errs)
	close(forks)
	for err := range errs {
		t.Fatal(err)
	}
	seen := <-followed

	// Everything the log holds, read at once after the writers ended.
	all, err := stores[1].Changes(ctx, 0, 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	var allIDs []int64
	var lastMsg int64
	for _, c := range all {
		allIDs = append(allIDs, c.ID)
		if c.Kind != sa.ChangeSessionMessage {
			continue
		}
		m, err := c.Message()
		if err != nil {
			t.Fatal(err)
		}
		if m.ID <= lastMsg {
			t.Errorf("change %d carries message %d after message %d", c.ID, m.ID, lastMsg)
		}
		lastMsg = m.ID
	}
	if want := 1 + 1 + writers*(1+perWriter) + forkers*forksEach; len(allIDs) != want {
		t.Errorf("the log holds %d changes, want %d", len(allIDs), want)
	}
	if !slices.Equal(seen, allIDs) {
		missed := 0
		for _, id := range allIDs {
			if _, found := slices.BinarySearch(seen, id); !found {
				missed++
			}
		}
		t.Errorf("the follower missed %d of %d changes", missed, len(allIDs))
	}
	for f := range forks {
		h, err := stores[2].History(ctx, f.id)
		if err != nil {
			t.Fatal(err)
		}
		if got := texts(h); !slices.Equal(got, f.first) {
			t.Errorf("fork %s: history was %q when forked, is %q now", sa.ShortID(f.id), f.first, got)
		}
	}
}

// openStores opens n stores on one new schema, as n nodes on one
// database; they are closed when the test ends.
func openStores(t testing.TB, n int) []*postgres.Store {
	t.Helper()
	url := pgtest.URL(t)
	stores := make([]*postgres.Store, n)
	for i := range stores {
		st, err := postgres.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		stores[i] = st
	}
	return stores
}

// follow reads the change log as a live follower does, always after the
// last id it saw, until done is closed; then it drains what is left. It
// returns every id it saw, in order.
func follow(t *testing.T, st sa.Store, done <-chan struct{}) []int64 {
	ctx := context.Background()
	var seen []int64
	var last int64
	read := func() bool {
		changes, err := st.Changes(ctx, last, 100)
		if err != nil {
			t.Error(err)
			return false
		}
		for _, c := range changes {
			seen = append(seen, c.ID)
			last = c.ID
		}
		return len(changes) > 0
	}
	for {
		select {
		case <-done:
			for read() {
			}
			return seen
		default:
			read()
		}
	}
}

func user(text string) sa.Message {
	return sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(text)}}
}

func texts(h []sa.Message) []string {
	out := make([]string, len(h))
	for i, m := range h {
		out[i] = m.Text()
	}
	return out
}

// TestFinishAndDeleteTogether ends tasks, appends to their parent and
// deletes the parent at once, through three stores: rows are locked in one
// order (session, task, ids), so no write fails on a deadlock, and every
// task ends exactly once: completed with one notification in its parent,
// or cancelled by the deletion with none. (With FinishTask locking the
// task before the parent session, it fails on deadlocks.)
func TestFinishAndDeleteTogether(t *testing.T) {
	ctx := context.Background()
	stores := openStores(t, 3)
	const rounds, tasksEach = 8, 5
	for round := range rounds {
		parent, err := stores[0].CreateSession(ctx, sa.NewSession{Messages: []sa.Message{user("go")}})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for i := range tasksEach {
			task, err := stores[0].CreateTask(ctx, sa.NewTask{Fork: i%2 == 0,
				Task: sa.Task{ParentSessionID: parent.ID, Status: sa.TaskRunning, BatchID: fmt.Sprint("b", round)}})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, task.ID)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 2*tasksEach+1)
		for i, id := range ids {
			st := stores[i%len(stores)]
			wg.Go(func() {
				_, _, err := st.FinishTask(ctx, id, func(t *sa.Task) error {
					t.Status, t.Result = sa.TaskCompleted, "done"
					return nil
				}, func(ended sa.Task, _ sa.BatchState) sa.Message {
					return sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("ended " + ended.ID)}}
				})
				if err != nil && !errors.Is(err, sa.ErrConflict) { // already cancelled by the deletion
					errs <- err
				}
			})
			wg.Go(func() {
				if _, err := st.Append(ctx, parent.ID, user("meanwhile")); err != nil && !errors.Is(err, sa.ErrNotFound) {
					errs <- err
				}
			})
		}
		wg.Go(func() {
			if err := stores[round%len(stores)].DeleteSession(ctx, parent.ID); err != nil {
				errs <- err
			}
		})
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}

		notes := map[string]int{}
		changes, err := stores[1].Changes(ctx, 0, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range changes {
			if c.Kind != sa.ChangeSessionMessage || c.SessionID != parent.ID {
				continue
			}
			m, err := c.Message()
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind == sa.KindNotification {
				notes[strings.TrimPrefix(m.Text(), "ended ")]++
			}
		}
		for _, id := range ids {
			task, err := stores[2].Task(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			want := 0
			switch task.Status {
			case sa.TaskCompleted:
				want = 1
			case sa.TaskCancelled:
			default:
				t.Errorf("round %d: task %s is %s", round, sa.ShortID(id), task.Status)
			}
			if notes[id] != want {
				t.Errorf("round %d: task %s ended %s with %d notifications, want %d", round, sa.ShortID(id), task.Status, notes[id], want)
			}
		}
	}
}
