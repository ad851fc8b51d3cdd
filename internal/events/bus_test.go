package events_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/events"
	"github.com/superagents/superagents/internal/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func openStore(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newBus(t *testing.T, st sa.Store, opts events.Options) *events.Bus {
	t.Helper()
	b, err := events.New(context.Background(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func appendN(t *testing.T, st sa.Store, id string, n int) {
	t.Helper()
	for i := range n {
		msg := sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(fmt.Sprint(i))}}
		if _, err := st.Append(context.Background(), id, msg); err != nil {
			t.Fatal(err)
		}
	}
}

// read takes n changes from a cursor, within a generous deadline.
func read(t *testing.T, c *events.Cursor, n int) []sa.Change {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []sa.Change
	for range n {
		ch, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("after %d changes: %v", len(out), err)
		}
		out = append(out, ch)
	}
	return out
}

func inOrder(t *testing.T, list []sa.Change) {
	t.Helper()
	for i := 1; i < len(list); i++ {
		if list[i].ID <= list[i-1].ID {
			t.Fatalf("change %d after %d", list[i].ID, list[i-1].ID)
		}
	}
}

func TestReadersSeeEveryChangeInOrder(t *testing.T) {
	st := openStore(t, t.TempDir())
	// A long poll interval: this process's writes must wake the bus by
	// themselves.
	b := newBus(t, st, events.Options{PollInterval: time.Hour})
	s, err := st.CreateSession(context.Background(), sa.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	b.Sync()
	fast, slow := b.Now(), b.Now()
	var wg sync.WaitGroup
	wg.Go(func() { appendN(t, st, s.ID, 50) })
	got := read(t, fast, 50)
	wg.Wait()
	inOrder(t, got)
	if got2 := read(t, slow, 50); got2[0].ID != got[0].ID || got2[49].ID != got[49].ID {
		t.Fatal("two readers saw different changes")
	}
	for _, c := range got {
		if c.Kind != sa.ChangeSessionMessage || c.SessionID != s.ID {
			t.Fatalf("unexpected change %+v", c)
		}
	}
}

func TestReaderBehindTheRingReadsFromTheStore(t *testing.T) {
	st := openStore(t, t.TempDir())
	b := newBus(t, st, events.Options{RingSize: 8, PollInterval: time.Hour})
	start := b.LastID()
	s, err := st.CreateSession(context.Background(), sa.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, st, s.ID, 100)
	b.Sync()
	got := read(t, b.From(start), 101)
	inOrder(t, got)
	if got[0].Kind != sa.ChangeSessionCreated || got[100].ID != b.LastID() {
		t.Fatalf("first %s, last %d (bus at %d)", got[0].Kind, got[100].ID, b.LastID())
	}
}

// TestOtherProcessesWritesArrive: a second store on the same database, as
// another superagents process would open it, writes; the bus sees it by
// polling.
func TestOtherProcessesWritesArrive(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, dir)
	other := openStore(t, dir)
	b := newBus(t, st, events.Options{PollInterval: 20 * time.Millisecond})
	c := b.Now()
	s, err := other.CreateSession(context.Background(), sa.NewSession{Title: "from elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	got := read(t, c, 1)
	if got[0].Kind != sa.ChangeSessionCreated || got[0].SessionID != s.ID {
		t.Fatalf("change = %+v", got[0])
	}
}

func TestNextMatchingAndCancel(t *testing.T) {
	st := openStore(t, t.TempDir())
	b := newBus(t, st, events.Options{PollInterval: time.Hour})
	c := b.Now()
	go func() {
		s, _ := st.CreateSession(context.Background(), sa.NewSession{})
		appendN(t, st, s.ID, 3)
		_, _ = st.Fork(context.Background(), s.ID, sa.ForkOptions{})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ch, err := c.NextMatching(ctx, func(c sa.Change) bool { return c.Kind == sa.ChangeSessionCreated })
	if err != nil || ch.Kind != sa.ChangeSessionCreated {
		t.Fatalf("NextMatching = %+v, %v", ch, err)
	}
	// The fork comes after three messages.
	ch, err = c.NextMatching(ctx, func(c sa.Change) bool { return c.Kind == sa.ChangeSessionCreated })
	if err != nil || ch.Kind != sa.ChangeSessionCreated {
		t.Fatalf("NextMatching = %+v, %v", ch, err)
	}
	short, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer stop()
	if _, err := c.Next(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Next with nothing new = %v, want the context's error", err)
	}
}

func TestClose(t *testing.T) {
	st := openStore(t, t.TempDir())
	b, err := events.New(context.Background(), st, events.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := b.Now()
	errs := make(chan error, 1)
	go func() {
		_, err := c.Next(context.Background())
		errs <- err
	}()
	b.Close()
	select {
	case err := <-errs:
		if !errors.Is(err, events.ErrClosed) {
			t.Fatalf("Next after Close = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a waiting reader was not released by Close")
	}
	b.Close() // twice is fine
}
