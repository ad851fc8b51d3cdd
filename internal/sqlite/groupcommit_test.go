package sqlite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestGroupCommit: writes that wait while another commits share the next
// transaction, and each ends as its own fn did: one that fails or panics
// is undone alone, one whose caller gave up before it started is not run,
// and the others commit.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	s, err := OpenDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	insert := func(id string) func(tx *writeTx) error {
		return func(tx *writeTx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO runners (id, host, pid, started_at, seen_at) VALUES (?, 'h', 1, 0, 0)`, id)
			return err
		}
	}

	// The first write holds its transaction open until the others queue.
	release := make(chan struct{})
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		err := s.inWrite(ctx, func(tx *writeTx) error {
			close(started)
			<-release
			return insert("first")(tx)
		})
		if err != nil {
			t.Errorf("first: %v", err)
		}
	})
	<-started

	errFailed := errors.New("refused")
	gaveUp, cancel := context.WithCancel(ctx)
	results := make(map[string]error)
	var mu sync.Mutex
	queue := func(name string, ctx context.Context, fn func(tx *writeTx) error) {
		wg.Go(func() {
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panicked: %v", p)
					}
				}()
				err = s.inWrite(ctx, fn)
			}()
			mu.Lock()
			results[name] = err
			mu.Unlock()
		})
	}
	queue("ok-1", ctx, insert("ok-1"))
	queue("fails", ctx, func(tx *writeTx) error {
		if err := insert("fails")(tx); err != nil {
			return err
		}
		return errFailed // after writing: the write must be undone
	})
	queue("panics", ctx, func(tx *writeTx) error {
		if err := insert("panics")(tx); err != nil {
			return err
		}
		panic("boom")
	})
	// A constraint error in the shared transaction: the first write's
	// runner, committed before any of these runs (the queued writes start
	// in any order, so not one of theirs).
	queue("duplicate", ctx, insert("first"))
	queue("gave up", gaveUp, insert("gave up"))
	queue("ok-2", ctx, insert("ok-2"))
	// Wait until all six wait behind the first, then give up on one.
	for deadline := time.Now().Add(10 * time.Second); ; {
		s.writes.mu.Lock()
		n := len(s.writes.pending)
		s.writes.mu.Unlock()
		if n == 6 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued, want 6", n)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	close(release)
	wg.Wait()

	for name, want := range map[string]string{"ok-1": "", "ok-2": "", "fails": "refused", "panics": "panicked: boom",
		"duplicate": "UNIQUE constraint failed", "gave up": "context canceled"} {
		got := results[name]
		switch {
		case want == "" && got != nil:
			t.Errorf("%s: %v, want success", name, got)
		case want != "" && (got == nil || !strings.Contains(got.Error(), want)):
			t.Errorf("%s: %v, want an error with %q", name, got, want)
		}
	}
	rows, err := s.read.QueryContext(ctx, `SELECT id FROM runners ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := collectStrings(rows)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids) != "[first ok-1 ok-2]" {
		t.Fatalf("stored runners = %v, want [first ok-1 ok-2]", ids)
	}
	// The queue is idle again: a write runs at once.
	if err := s.inWrite(ctx, insert("after")); err != nil {
		t.Fatal(err)
	}
}
