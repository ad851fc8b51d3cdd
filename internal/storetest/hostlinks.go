package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"

	sa "github.com/superagents/superagents"
)

// testHostLinks checks the optional HostLinker: a host session creates one
// session, later imports append to it and move the position in the same
// transaction, a stale position is refused, and the link follows the
// session's deletion.
func testHostLinks(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, reopen := openStore(t, factory)
	if _, ok := st.(sa.HostLinker); !ok {
		t.Skip("the store keeps no host links")
	}
	hl := func() sa.HostLinker { return st.(sa.HostLinker) }
	link := sa.HostLink{Host: "claude-code", HostSessionID: "host-1", Position: `{"offset":10}`}

	if _, err := hl().HostLink(ctx, "claude-code", "host-1"); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("HostLink before any import: %v, want ErrNotFound", err)
	}
	if _, _, err := hl().CreateHostSession(ctx, sa.NewSession{Agent: "general"}, sa.HostLink{Host: "claude-code"}); !errors.Is(err, sa.ErrInvalid) {
		t.Fatalf("CreateHostSession without a host session id: %v, want ErrInvalid", err)
	}
	sess, got, err := hl().CreateHostSession(ctx, sa.NewSession{Agent: "general", Title: "imported", Messages: []sa.Message{user("Q1"), agent("A1")}}, link)
	if err != nil {
		t.Fatal(err)
	}
	if got.SessionID != sess.ID || got.Position != link.Position || got.UpdatedAt.IsZero() {
		t.Fatalf("CreateHostSession link = %+v for session %s", got, sess.ID)
	}
	if _, _, err := hl().CreateHostSession(ctx, sa.NewSession{Agent: "general", Messages: []sa.Message{user("again")}}, link); !errors.Is(err, sa.ErrConflict) {
		t.Fatalf("importing the same host session as a new session: %v, want ErrConflict", err)
	}

	// A fork made before the next import stays one row and keeps its
	// history.
	child, err := st.Fork(ctx, sess.ID, sa.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next := link
	next.Position = `{"offset":20}`
	stored, got, err := hl().AppendHost(ctx, next, link.Position, user("Q2"), agent("A2"))
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 2 || stored[0].ID == 0 || got.Position != next.Position || got.SessionID != sess.ID {
		t.Fatalf("AppendHost = %+v, link %+v", stored, got)
	}
	if _, _, err := hl().AppendHost(ctx, next, link.Position, user("Q2 again")); !errors.Is(err, sa.ErrConflict) {
		t.Fatalf("AppendHost from a stale position: %v, want ErrConflict", err)
	}
	bad := next
	bad.Position = `{"offset":30}`
	if _, _, err := hl().AppendHost(ctx, bad, next.Position, sa.Message{Role: "robot", Parts: []sa.Part{sa.TextPart("x")}}); !errors.Is(err, sa.ErrInvalid) {
		t.Fatalf("AppendHost of an invalid message: %v, want ErrInvalid", err)
	}

	st = reopen()
	cur, err := hl().HostLink(ctx, "claude-code", "host-1")
	if err != nil {
		t.Fatal(err)
	}
	if cur.Position != next.Position || cur.SessionID != sess.ID {
		t.Fatalf("after reopening, link = %+v; want position %s (the invalid append wrote nothing)", cur, next.Position)
	}
	if h := history(t, st, sess.ID); h != "Q1 A1 Q2 A2" {
		t.Fatalf("session history = %q", h)
	}
	if h := history(t, st, child.ID); h != "Q1 A1" {
		t.Fatalf("the fork's history = %q, want what it had at the fork", h)
	}
	links, err := hl().SessionHostLinks(ctx, []string{sess.ID, child.ID, "nosuchsession00"})
	if err != nil {
		t.Fatal(err)
	}
	if len(links) != 1 || links[sess.ID].HostSessionID != "host-1" {
		t.Fatalf("SessionHostLinks = %+v, want only %s's", links, sess.ID)
	}

	// Two imports at once: exactly one moves the position.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			n := next
			n.Position = `{"offset":40}`
			_, _, errs[i] = hl().AppendHost(ctx, n, next.Position, user("Q3"))
		})
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) || !errors.Is(errors.Join(errs[0], errs[1]), sa.ErrConflict) {
		t.Fatalf("concurrent imports: %v and %v, want one success and one conflict", errs[0], errs[1])
	}

	// Deleting the session frees the host session for a new import.
	if err := st.DeleteSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := hl().HostLink(ctx, "claude-code", "host-1"); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("HostLink after deleting its session: %v, want ErrNotFound", err)
	}
	again, _, err := hl().CreateHostSession(ctx, sa.NewSession{Agent: "general", Messages: []sa.Message{user("Q1")}}, link)
	if err != nil {
		t.Fatalf("importing again after the delete: %v", err)
	}
	if cur, err := hl().HostLink(ctx, "claude-code", "host-1"); err != nil || cur.SessionID != again.ID {
		t.Fatalf("HostLink = %+v, %v; want session %s", cur, err, again.ID)
	}
}

// testHostLinkNotices checks a link's notices delivered: they only grow,
// apart from the position, survive a reopen, and a link to no live
// session is not found.
func testHostLinkNotices(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, reopen := openStore(t, factory)
	if _, ok := st.(sa.HostLinker); !ok {
		t.Skip("the store keeps no host links")
	}
	hl := func() sa.HostLinker { return st.(sa.HostLinker) }
	if _, err := hl().MoveNotices(ctx, "mcp:codex", "conv-1", 3); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("MoveNotices without a link: %v, want ErrNotFound", err)
	}
	sess, link, err := hl().CreateHostSession(ctx, sa.NewSession{Agent: "general", Origin: sa.OriginMCP}, sa.HostLink{Host: "mcp:codex", HostSessionID: "conv-1"})
	if err != nil {
		t.Fatal(err)
	}
	if link.NoticesDelivered != 0 || link.Position != "" {
		t.Fatalf("new link = %+v, want no notices delivered and no position", link)
	}
	for _, step := range []struct{ upTo, want int64 }{{5, 5}, {3, 5}, {9, 9}} {
		got, err := hl().MoveNotices(ctx, "mcp:codex", "conv-1", step.upTo)
		if err != nil {
			t.Fatal(err)
		}
		if got.NoticesDelivered != step.want || got.SessionID != sess.ID || got.Position != "" {
			t.Fatalf("MoveNotices(%d) = %+v, want %d delivered", step.upTo, got, step.want)
		}
	}
	st = reopen()
	if cur, err := hl().HostLink(ctx, "mcp:codex", "conv-1"); err != nil || cur.NoticesDelivered != 9 {
		t.Fatalf("after reopening, link = %+v, %v; want 9 delivered", cur, err)
	}
	if links, err := hl().SessionHostLinks(ctx, []string{sess.ID}); err != nil || links[sess.ID].NoticesDelivered != 9 {
		t.Fatalf("SessionHostLinks = %+v, %v; want 9 delivered", links, err)
	}
	if err := st.DeleteSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := hl().MoveNotices(ctx, "mcp:codex", "conv-1", 10); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("MoveNotices after deleting the session: %v, want ErrNotFound", err)
	}
}

// CheckUpgradedNotices checks, for the upgrade tests of the stores, the
// links of a store written before NoticesDelivered existed and then
// opened: session s1's link of host "mcp:codex" (an MCP conversation's),
// whose position was "42", and session s2's of host "codex" (an import's),
// at position {"offset":7}. The notice position moved to
// NoticesDelivered; the import's position stayed.
func CheckUpgradedNotices(t *testing.T, st sa.HostLinkReader) {
	t.Helper()
	links, err := st.SessionHostLinks(context.Background(), []string{"s1", "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if l := links["s1"]; l.NoticesDelivered != 42 || l.Position != "" {
		t.Errorf("the MCP conversation's link after the upgrade = %+v, want 42 delivered and no position", l)
	}
	if l := links["s2"]; l.NoticesDelivered != 0 || l.Position != `{"offset":7}` {
		t.Errorf("the import's link after the upgrade = %+v, want its position kept", l)
	}
}

// history returns a session's message texts joined by spaces.
func history(t *testing.T, st sa.Store, id string) string {
	t.Helper()
	msgs, err := st.History(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for _, m := range msgs {
		if out != "" {
			out += " "
		}
		out += m.Text()
	}
	return out
}
