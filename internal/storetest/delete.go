package storetest

import (
	"context"
	"slices"
	"testing"

	sa "github.com/superagents/superagents"
)

func testDelete(t *testing.T, factory Factory) {
	ctx := context.Background()

	t.Run("a deleted session is gone everywhere", func(t *testing.T) {
		st, _ := openStore(t, factory)
		s := mustCreate(t, st, user("Q1"))
		if err := st.DeleteSession(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ids(mustList(t, st)), s.ID) {
			t.Fatal("a deleted session is still listed")
		}
		_, err := st.Session(ctx, s.ID)
		wantErrIs(t, err, sa.ErrNotFound, "Session(deleted)")
		_, err = st.ResolveSession(ctx, s.ID[:6])
		wantErrIs(t, err, sa.ErrNotFound, "ResolveSession(deleted)")
		_, err = st.History(ctx, s.ID)
		wantErrIs(t, err, sa.ErrNotFound, "History(deleted)")
		_, err = st.Append(ctx, s.ID, user("x"))
		wantErrIs(t, err, sa.ErrNotFound, "Append(deleted)")
		_, err = st.Fork(ctx, s.ID, sa.ForkOptions{})
		wantErrIs(t, err, sa.ErrNotFound, "Fork(deleted)")
		wantErrIs(t, st.DeleteSession(ctx, s.ID), sa.ErrNotFound, "DeleteSession(deleted)")
	})

	t.Run("deleting a parent changes no other history", func(t *testing.T) {
		st, reopen := openStore(t, factory)
		a := mustCreate(t, st, user("Q1"), agent("A1"))
		b := mustFork(t, st, a.ID)
		mustAppend(t, st, b.ID, user("Q2"), agent("A2"))
		c := mustFork(t, st, b.ID)
		mustAppend(t, st, c.ID, user("Q3"))
		mustAppend(t, st, b.ID, user("B-after-C")) // not inherited by C: reclaimable
		other := mustFork(t, st, a.ID)

		before := map[string][]string{}
		for _, id := range []string{a.ID, c.ID, other.ID} {
			before[id] = texts(t, st, id)
		}
		if err := st.DeleteSession(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
		for id, want := range before {
			wantTexts(t, st, id, want...)
		}
		_, err := st.Fork(ctx, b.ID, sa.ForkOptions{})
		wantErrIs(t, err, sa.ErrNotFound, "Fork(hidden parent)")

		// The root goes too; the grandchild still sees everything.
		if err := st.DeleteSession(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		wantTexts(t, st, c.ID, before[c.ID]...)
		wantTexts(t, st, other.ID, before[other.ID]...)
		st = reopen()
		wantTexts(t, st, c.ID, before[c.ID]...)

		// Deleting the last descendants reclaims the hidden ancestors;
		// nothing left behind may break the remaining sessions.
		if err := st.DeleteSession(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
		wantTexts(t, st, other.ID, before[other.ID]...)
		if err := st.DeleteSession(ctx, other.ID); err != nil {
			t.Fatal(err)
		}
		if n := len(mustList(t, st)); n != 0 {
			t.Fatalf("%d sessions listed after deleting all", n)
		}
	})
}
