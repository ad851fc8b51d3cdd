package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/postgres"
)

// race runs fn once per goroutine, n per store, all at once, and returns
// their errors.
func race(stores []*postgres.Store, n int, fn func(st *postgres.Store, i int) error) []error {
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, len(stores)*n)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = fn(stores[i%len(stores)], i)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// split counts nil errors and checks that every other one is want.
func split(t *testing.T, errs []error, want error) (ok int) {
	t.Helper()
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, want):
			t.Errorf("unexpected error: %v (want nil or %v)", err, want)
		}
	}
	return ok
}

// TestLeaseAcrossNodes takes one session's lease from three stores (three
// pools, several connections each) at once, round after round: exactly
// one acquire wins each round, the others are refused as busy, and
// removing the winner's runner from another store frees the session.
func TestLeaseAcrossNodes(t *testing.T) {
	ctx := context.Background()
	stores := openStores(t, 3)
	sess, err := stores[0].CreateSession(ctx, sa.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	const perStore = 3
	runner := func(i int) string { return fmt.Sprintf("runner-%d", i) }
	for i := range len(stores) * perStore {
		if err := stores[i%len(stores)].RegisterRunner(ctx, sa.Runner{ID: runner(i), PID: 1000 + i}); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 5 {
		winners := make(chan string, len(stores)*perStore)
		errs := race(stores, perStore, func(st *postgres.Store, i int) error {
			l, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: sess.ID, RunnerID: runner(i), Holder: "test"})
			if err == nil {
				winners <- l.RunnerID
			}
			return err
		})
		if ok := split(t, errs, sa.ErrBusy); ok != 1 {
			t.Fatalf("round %d: %d acquires won, want 1", round, ok)
		}
		winner := <-winners
		held, err := stores[1].Lease(ctx, sess.ID)
		if err != nil || held.RunnerID != winner {
			t.Fatalf("round %d: lease = %+v, %v; want held by %s", round, held, err, winner)
		}
		if round%2 == 0 {
			err = stores[2].ReleaseTurn(ctx, sess.ID, winner)
		} else {
			// The winner is taken for dead: its leases go with it.
			err = stores[2].RemoveRunner(ctx, winner)
			if err == nil {
				err = stores[0].RegisterRunner(ctx, sa.Runner{ID: winner, PID: 1})
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stores[0].Lease(ctx, sess.ID); !errors.Is(err, sa.ErrNotFound) {
			t.Fatalf("round %d: lease after release = %v, want ErrNotFound", round, err)
		}
	}
}

// TestHostImportAcrossNodes imports one host session from three stores at
// once: one import creates the session, the others are refused; then
// appends from the same position race, and only one lands.
func TestHostImportAcrossNodes(t *testing.T) {
	ctx := context.Background()
	stores := openStores(t, 3)
	link := sa.HostLink{Host: "claude-code", HostSessionID: "host-1", Position: "10"}
	errs := race(stores, 2, func(st *postgres.Store, i int) error {
		_, _, err := st.CreateHostSession(ctx, sa.NewSession{Messages: []sa.Message{user(fmt.Sprint("first ", i))}}, link)
		return err
	})
	if ok := split(t, errs, sa.ErrConflict); ok != 1 {
		t.Fatalf("%d imports created a session, want 1", ok)
	}
	list, err := stores[0].ListSessions(ctx, sa.SessionFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions after the imports: %d, %v; want 1", len(list), err)
	}

	next := link
	next.Position = "20"
	errs = race(stores, 2, func(st *postgres.Store, i int) error {
		_, _, err := st.AppendHost(ctx, next, "10", user(fmt.Sprint("more ", i)))
		return err
	})
	if ok := split(t, errs, sa.ErrConflict); ok != 1 {
		t.Fatalf("%d appends from one position landed, want 1", ok)
	}
	got, err := stores[1].HostLink(ctx, link.Host, link.HostSessionID)
	if err != nil || got.Position != "20" {
		t.Fatalf("link after the appends = %+v, %v", got, err)
	}
	h, err := stores[2].History(ctx, got.SessionID)
	if err != nil || len(h) != 2 {
		t.Fatalf("history after the appends: %v, %v; want 2 messages", texts(h), err)
	}
}

// TestHostAppendAndDeleteTogether appends to an imported session while
// another store deletes it. Both lock the session before the link, so
// neither waits for the other forever (PostgreSQL would abort one as a
// deadlock): the append lands before the deletion, or finds no session.
func TestHostAppendAndDeleteTogether(t *testing.T) {
	ctx := context.Background()
	stores := openStores(t, 2)
	for round := range 10 {
		link := sa.HostLink{Host: "codex", HostSessionID: fmt.Sprint("host-", round), Position: "1"}
		sess, _, err := stores[0].CreateHostSession(ctx, sa.NewSession{}, link)
		if err != nil {
			t.Fatal(err)
		}
		next := link
		next.Position = "2"
		errs := race(stores, 1, func(st *postgres.Store, i int) error {
			if i == 0 {
				_, _, err := st.AppendHost(ctx, next, "1", user("late"))
				if errors.Is(err, sa.ErrNotFound) {
					return nil // the deletion came first
				}
				return err
			}
			return st.DeleteSession(ctx, sess.ID)
		})
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if _, err := stores[1].HostLink(ctx, link.Host, link.HostSessionID); !errors.Is(err, sa.ErrNotFound) {
			t.Fatalf("round %d: link of a deleted session: %v, want ErrNotFound", round, err)
		}
	}
}

// TestFreeTextRoundTrips stores text PostgreSQL's TEXT would refuse (NUL,
// invalid UTF-8) in the new free-text columns: a session's origin, a
// lease's holder, a host link's host, session id and position.
func TestFreeTextRoundTrips(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	for _, text := range []string{"plain", "nul\x00inside", "bad\xffutf8", "ünïcode"} {
		t.Run(fmt.Sprintf("%q", text), func(t *testing.T) {
			sess, err := st.CreateSession(ctx, sa.NewSession{Origin: sa.Origin(text)})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := st.Session(ctx, sess.ID); err != nil || got.Origin != sa.Origin(text) {
				t.Fatalf("origin = %q, %v", got.Origin, err)
			}
			if _, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: sess.ID, RunnerID: "r", Holder: text}); err != nil {
				t.Fatal(err)
			}
			if l, err := st.Lease(ctx, sess.ID); err != nil || l.Holder != text {
				t.Fatalf("holder = %q, %v", l.Holder, err)
			}
			link := sa.HostLink{Host: "h " + text, HostSessionID: "s " + text, Position: text}
			imported, stored, err := st.CreateHostSession(ctx, sa.NewSession{}, link)
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.HostLink(ctx, link.Host, link.HostSessionID)
			if err != nil || got != stored || got.SessionID != imported.ID || got.Position != text {
				t.Fatalf("host link = %+v, %v; want %+v", got, err, stored)
			}
			links, err := st.SessionHostLinks(ctx, []string{imported.ID, "no\x00such"})
			if err != nil || len(links) != 1 || links[imported.ID] != stored {
				t.Fatalf("SessionHostLinks = %+v, %v", links, err)
			}
		})
	}
	// Ids no session can have are refused or not found, never an error of
	// the database.
	if _, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: "bad\xff", RunnerID: "r"}); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("lease of an impossible session id: %v, want ErrNotFound", err)
	}
	sess, err := st.CreateSession(ctx, sa.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AcquireTurn(ctx, sa.TurnLease{SessionID: sess.ID, RunnerID: "nul\x00"}); !errors.Is(err, sa.ErrInvalid) {
		t.Fatalf("lease for an impossible runner id: %v, want ErrInvalid", err)
	}
}
