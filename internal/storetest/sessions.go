package storetest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	sa "github.com/superagents/superagents"
)

func testSessions(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)

	root, err := st.CreateSession(ctx, sa.NewSession{Agent: "general", Model: "offline", Title: "first",
		Messages: []sa.Message{user("Q1"), agent("A1")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(root.ID) != 16 || root.ParentID != "" || root.CreatedAt.IsZero() {
		t.Fatalf("new root session = %+v", root)
	}
	got, err := st.Session(ctx, root.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != root.ID || got.Agent != "general" || got.Model != "offline" || got.Title != "first" || !got.CreatedAt.Equal(root.CreatedAt) {
		t.Fatalf("Session() = %+v, want %+v", got, root)
	}

	child, err := st.Fork(ctx, root.ID, sa.ForkOptions{Title: "child", Agent: "explore"})
	if err != nil {
		t.Fatal(err)
	}
	if child.ParentID != root.ID || child.Agent != "explore" || child.Model != "offline" {
		t.Fatalf("fork = %+v: want parent %s, agent explore, the parent's model", child, root.ID)
	}
	mustAppend(t, st, child.ID, user("Q2"))
	other := mustCreate(t, st)

	list, err := st.ListSessions(ctx, sa.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{other.ID, child.ID, root.ID}; !slices.Equal(ids(list), want) {
		t.Fatalf("ListSessions order = %v, want newest first %v", ids(list), want)
	}
	counts := map[string]int{}
	for _, s := range list {
		counts[s.ID] = s.MessageCount
	}
	if counts[root.ID] != 2 || counts[child.ID] != 1 || counts[other.ID] != 0 {
		t.Fatalf("message counts = %v: want own messages only (root 2, child 1, other 0)", counts)
	}
	last := map[string]int64{}
	for _, s := range list {
		last[s.ID] = s.LastMessageID
	}
	if rootLast := lastID(t, st, root.ID); last[root.ID] != rootLast || last[other.ID] != 0 || last[child.ID] <= rootLast {
		t.Fatalf("last message ids = %v: want root %d, child's own newer, other 0", last, rootLast)
	}
	children, err := st.ListSessions(ctx, sa.SessionFilter{ParentID: root.ID})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(children), []string{child.ID}) {
		t.Fatalf("children of root = %v, want [%s]", ids(children), child.ID)
	}
	limited, err := st.ListSessions(ctx, sa.SessionFilter{Limit: 2})
	if err != nil || len(limited) != 2 {
		t.Fatalf("ListSessions(limit 2) = %d sessions, %v", len(limited), err)
	}

	_, err = st.Session(ctx, "0000000000000000")
	wantErrIs(t, err, sa.ErrNotFound, "Session(unknown)")
	_, err = st.Fork(ctx, "0000000000000000", sa.ForkOptions{})
	wantErrIs(t, err, sa.ErrNotFound, "Fork(unknown)")
	_, err = st.History(ctx, "0000000000000000")
	wantErrIs(t, err, sa.ErrNotFound, "History(unknown)")
}

func testResolveSession(t *testing.T, factory Factory) {
	ctx := context.Background()
	// Ids handed out in order: two share the prefix "abcd", one is a
	// prefix-free neighbour, the last is deleted.
	st, _ := openStoreWith(t, factory, Options{NewID: idsInOrder("abcd000000000001", "abcd000000000002", "abce000000000003", "xyz7890000000004",
		"dead000000000005")})
	for range 5 {
		mustCreate(t, st)
	}
	if err := st.DeleteSession(ctx, "dead000000000005"); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		ref  string
		want string
		err  error
	}{
		{"full id", "abcd000000000001", "abcd000000000001", nil},
		{"unique prefix", "abce", "abce000000000003", nil},
		{"displayed short form", "xyz789...", "xyz7890000000004", nil},
		{"longer than any id", "abcd0000000000002", "", sa.ErrInvalid},
		{"unique after enough characters", "abcd000000000002", "abcd000000000002", nil},
		{"ambiguous prefix", "abcd", "", sa.ErrInvalid},
		{"too short", "abc", "", sa.ErrInvalid},
		{"bad characters", "ab-cd", "", sa.ErrInvalid},
		{"wildcards are not patterns", "abc%", "", sa.ErrInvalid},
		{"unknown", "zzzz", "", sa.ErrNotFound},
		{"unknown full id", "zzzz000000000009", "", sa.ErrNotFound},
		{"deleted, by full id", "dead000000000005", "", sa.ErrNotFound},
		{"deleted, by prefix", "dead", "", sa.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := st.ResolveSession(ctx, tt.ref)
			if tt.err != nil {
				wantErrIs(t, err, tt.err, "ResolveSession("+tt.ref+")")
				return
			}
			if err != nil || got.ID != tt.want {
				t.Fatalf("ResolveSession(%q) = %s, %v; want %s", tt.ref, got.ID, err, tt.want)
			}
		})
	}

	_, err := st.ResolveSession(ctx, "abcd")
	var amb *sa.AmbiguousIDError
	if !errors.As(err, &amb) || !slices.Equal(amb.Candidates, []string{"abcd000000000001", "abcd000000000002"}) {
		t.Fatalf("ResolveSession(abcd) = %v, want an ambiguity error listing both candidates", err)
	}
	if !strings.Contains(err.Error(), "abcd000000000001") || !strings.Contains(err.Error(), "abcd000000000002") {
		t.Fatalf("the ambiguity message %q must name the candidates", err)
	}
}

func testAppend(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	a := mustCreate(t, st)
	b := mustCreate(t, st)

	var last int64
	for i := range 10 {
		target := a.ID
		if i%2 == 1 {
			target = b.ID
		}
		got := mustAppend(t, st, target, user("m"), agent("r"))
		for _, m := range got {
			if m.ID <= last {
				t.Fatalf("message id %d after %d: ids must be store-wide and strictly increasing", m.ID, last)
			}
			last = m.ID
			if m.SessionID != target || m.Kind != sa.KindMessage || m.CreatedAt.IsZero() {
				t.Fatalf("stored message = %+v", m)
			}
		}
	}

	// A batch with one bad message writes nothing at all.
	before := texts(t, st, a.ID)
	_, err := st.Append(ctx, a.ID, user("fine"), sa.Message{Role: "robot", Parts: []sa.Part{sa.TextPart("x")}})
	wantErrIs(t, err, sa.ErrInvalid, "Append(bad role)")
	if !strings.Contains(err.Error(), "message 2") {
		t.Fatalf("error %q should say which message is wrong", err)
	}
	if after := texts(t, st, a.ID); !slices.Equal(before, after) {
		t.Fatalf("a rejected batch changed the history: %q → %q", before, after)
	}
	_, err = st.Append(ctx, "0000000000000000", user("x"))
	wantErrIs(t, err, sa.ErrNotFound, "Append(unknown session)")

	// Everything a message holds comes back.
	full := sa.Message{
		Role:    sa.RoleAssistant,
		Summary: true,
		Model:   "anthropic/claude",
		Usage:   sa.Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 3, CacheWriteTokens: 4},
		Parts: []sa.Part{
			{Type: sa.PartReasoning, Text: "thinking", Signature: "sig"},
			{Type: sa.PartText, Text: "visible"},
			{Type: sa.PartText, Text: "hint", Hidden: true},
			{Type: sa.PartToolCall, CallID: "c1", Name: "read", Input: []byte(`{"path":"a.go"}`)},
		},
	}
	result := sa.Message{Role: sa.RoleTool, Parts: []sa.Part{
		{Type: sa.PartToolResult, CallID: "c1", Name: "read", Output: "package a", IsError: true, Compacted: true},
	}}
	marker := sa.Message{Role: sa.RoleUser, Parts: []sa.Part{{Type: sa.PartCompaction}}}
	note := sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("done")}}
	c := mustCreate(t, st)
	stored := mustAppend(t, st, c.ID, marker, full, result, note)
	hist, err := st.History(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 4 {
		t.Fatalf("history has %d messages, want 4", len(hist))
	}
	for i := range hist {
		if diff := diffMessages(stored[i], hist[i]); diff != "" {
			t.Fatalf("message %d read back differs (-stored +read):\n%s", i, diff)
		}
	}
}

func testConcurrentWrites(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	s := mustCreate(t, st)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if _, err := st.Append(ctx, s.ID, user(string(rune('a'+w))+string(rune('0'+i%10)))); err != nil {
					errs <- err
					return
				}
				if _, err := st.History(ctx, s.ID); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent append/read: %v", err)
	}
	hist, err := st.History(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != writers*each {
		t.Fatalf("history has %d messages, want %d", len(hist), writers*each)
	}
	for i := 1; i < len(hist); i++ {
		if hist[i].ID <= hist[i-1].ID {
			t.Fatalf("history not in id order at %d", i)
		}
	}
}
