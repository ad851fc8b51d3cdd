package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	sa "github.com/superagents/superagents"
)

// testHistoryWalkthrough is FORK-HIST-1/2's own scenario: A asks Q1 and Q2, is
// forked into B, B asks Q3 and is forked into C.
func testHistoryWalkthrough(t *testing.T, factory Factory) {
	st, _ := openStore(t, factory)
	a := mustCreate(t, st, user("Q1"), agent("A1"), user("Q2"))
	a2 := mustAppend(t, st, a.ID, agent("A2"))

	b := mustFork(t, st, a.ID)
	if b.ForkMessageID != a2[0].ID {
		t.Fatalf("fork_message_id = %d, want the id of A2 (%d), the parent's last message", b.ForkMessageID, a2[0].ID)
	}
	wantTexts(t, st, b.ID, "Q1", "A1", "Q2", "A2")
	mustAppend(t, st, b.ID, user("Q3"), agent("A3"))

	c := mustFork(t, st, b.ID)
	wantTexts(t, st, c.ID, "Q1", "A1", "Q2", "A2", "Q3", "A3")

	t.Run("parent's later messages are invisible to children", func(t *testing.T) {
		mustAppend(t, st, a.ID, user("A-after-fork"))
		wantTexts(t, st, b.ID, "Q1", "A1", "Q2", "A2", "Q3", "A3")
		wantTexts(t, st, c.ID, "Q1", "A1", "Q2", "A2", "Q3", "A3")
	})
	t.Run("child's messages are invisible to the parent", func(t *testing.T) {
		mustAppend(t, st, b.ID, user("B-after-C"))
		mustAppend(t, st, c.ID, user("Q4"))
		wantTexts(t, st, a.ID, "Q1", "A1", "Q2", "A2", "A-after-fork")
		wantTexts(t, st, b.ID, "Q1", "A1", "Q2", "A2", "Q3", "A3", "B-after-C")
		wantTexts(t, st, c.ID, "Q1", "A1", "Q2", "A2", "Q3", "A3", "Q4")
	})
	t.Run("grandchild sees the grandparent's first question", func(t *testing.T) {
		hist := texts(t, st, c.ID)
		if hist[0] != "Q1" {
			t.Fatalf("grandchild's first message = %q, want Q1", hist[0])
		}
	})
}

// testForkAndClear covers every position of a clear relative to a fork.
func testForkAndClear(t *testing.T, factory Factory) {
	st, _ := openStore(t, factory)
	tests := []struct {
		name   string
		build  func(t *testing.T) (child string)
		parent []string // the parent's history, when checked
		want   []string
	}{
		{
			name: "clear in the child",
			build: func(t *testing.T) string {
				p := mustCreate(t, st, user("P1"), agent("P2"))
				c := mustFork(t, st, p.ID)
				mustAppend(t, st, c.ID, user("C1"))
				mustClear(t, st, c.ID)
				mustAppend(t, st, c.ID, user("C2"))
				return c.ID
			},
			want: []string{"C2"},
		},
		{
			name: "clear in the parent before the fork point",
			build: func(t *testing.T) string {
				p := mustCreate(t, st, user("P1"))
				mustClear(t, st, p.ID)
				mustAppend(t, st, p.ID, user("P2"), agent("P3"))
				c := mustFork(t, st, p.ID)
				mustAppend(t, st, c.ID, user("C1"))
				return c.ID
			},
			want: []string{"P2", "P3", "C1"},
		},
		{
			name: "clear exactly at the fork point",
			build: func(t *testing.T) string {
				p := mustCreate(t, st, user("P1"), agent("P2"))
				mustClear(t, st, p.ID)
				c := mustFork(t, st, p.ID)
				mustAppend(t, st, c.ID, user("C1"))
				return c.ID
			},
			want: []string{"C1"},
		},
		{
			name: "clear in the parent after the fork point is ignored by the child",
			build: func(t *testing.T) string {
				p := mustCreate(t, st, user("P1"), agent("P2"))
				c := mustFork(t, st, p.ID)
				mustClear(t, st, p.ID)
				mustAppend(t, st, p.ID, user("P3"))
				mustAppend(t, st, c.ID, user("C1"))
				return c.ID
			},
			want: []string{"P1", "P2", "C1"},
		},
		{
			name: "fork of an empty parent inherits nothing",
			build: func(t *testing.T) string {
				p := mustCreate(t, st)
				c := mustFork(t, st, p.ID)
				if c.ForkMessageID != 0 {
					t.Fatalf("fork point of an empty parent = %d, want 0", c.ForkMessageID)
				}
				// The parent's messages after the fork must not leak in:
				// "no fork point yet" is not "unbounded".
				mustAppend(t, st, p.ID, user("P-later"))
				mustAppend(t, st, c.ID, user("C1"))
				return c.ID
			},
			want: []string{"C1"},
		},
		{
			name: "fork of a fork with no messages of its own still inherits the grandparent",
			build: func(t *testing.T) string {
				g := mustCreate(t, st, user("G1"))
				p := mustFork(t, st, g.ID)
				c := mustFork(t, st, p.ID)
				mustAppend(t, st, p.ID, user("P-later"))
				mustAppend(t, st, g.ID, user("G-later"))
				return c.ID
			},
			want: []string{"G1"},
		},
		{
			name: "clear in the grandparent stops the walk there",
			build: func(t *testing.T) string {
				g := mustCreate(t, st, user("G1"))
				mustClear(t, st, g.ID)
				mustAppend(t, st, g.ID, user("G2"))
				p := mustFork(t, st, g.ID)
				mustAppend(t, st, p.ID, user("P1"))
				c := mustFork(t, st, p.ID)
				mustAppend(t, st, c.ID, user("C1"))
				return c.ID
			},
			want: []string{"G2", "P1", "C1"},
		},
		{
			name: "clear in the middle of a chain hides everything older",
			build: func(t *testing.T) string {
				g := mustCreate(t, st, user("G1"))
				p := mustFork(t, st, g.ID)
				mustAppend(t, st, p.ID, user("P1"))
				mustClear(t, st, p.ID)
				mustAppend(t, st, p.ID, user("P2"))
				c := mustFork(t, st, p.ID)
				return c.ID
			},
			want: []string{"P2"},
		},
		{
			name: "a clear as the only message leaves an empty history",
			build: func(t *testing.T) string {
				p := mustCreate(t, st, user("P1"))
				mustClear(t, st, p.ID)
				return p.ID
			},
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.build(t)
			wantTexts(t, st, id, tt.want...)
		})
	}
}

// testForkWritesNoMessages checks that a fork copies nothing: the number
// of stored messages is the same before and after, at any history size.
func testForkWritesNoMessages(t *testing.T, factory Factory) {
	st, _ := openStore(t, factory)
	p := mustCreate(t, st)
	batch := make([]sa.Message, 500)
	for i := range batch {
		batch[i] = user("m")
	}
	mustAppend(t, st, p.ID, batch...)
	before := storedMessages(t, st)
	sessionsBefore := len(mustList(t, st))
	for range 5 {
		mustFork(t, st, p.ID)
	}
	if after := storedMessages(t, st); after != before {
		t.Fatalf("forking changed the number of stored messages: %d → %d", before, after)
	}
	if got := len(mustList(t, st)); got != sessionsBefore+5 {
		t.Fatalf("5 forks made %d sessions, want 5", got-sessionsBefore)
	}
}

func mustList(t *testing.T, st sa.Store) []sa.SessionSummary {
	t.Helper()
	list, err := st.ListSessions(context.Background(), sa.SessionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func storedMessages(t *testing.T, st sa.Store) int {
	t.Helper()
	n := 0
	for _, s := range mustList(t, st) {
		n += s.MessageCount
	}
	return n
}

// testReopen checks that a history read after a restart is identical to
// the one read live: one code path builds both.
func testReopen(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, reopen := openStore(t, factory)
	a := mustCreate(t, st, user("Q1"), agent("A1"))
	b := mustFork(t, st, a.ID)
	mustAppend(t, st, b.ID, user("Q2"), sa.Message{Role: sa.RoleAssistant, Usage: sa.Usage{InputTokens: 5},
		Parts: []sa.Part{{Type: sa.PartToolCall, CallID: "x", Name: "ls", Input: []byte(`{}`)}}})
	c := mustFork(t, st, b.ID)
	mustClear(t, st, a.ID)

	live := map[string][]sa.Message{}
	for _, id := range []string{a.ID, b.ID, c.ID} {
		h, err := st.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		live[id] = h
	}
	st = reopen()
	for id, want := range live {
		got, err := st.History(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("history of %s after reopening differs (-live +reopened):\n%s", id, diff)
		}
	}
	sess, err := st.Session(ctx, c.ID)
	if err != nil || sess.ParentID != b.ID || sess.ForkMessageID != c.ForkMessageID {
		t.Fatalf("session after reopening = %s, %v; want %s", describe(sess), err, describe(c))
	}
}

func diffMessages(want, got sa.Message) string {
	return cmp.Diff(want, got, cmpopts.EquateEmpty())
}

// testMessagesAfter: a session's own messages after one of them, oldest
// first; nothing a fork inherited, and a clear changes nothing of them.
func testMessagesAfter(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	parent := mustCreate(t, st, user("p1"), agent("p2"))
	child := mustFork(t, st, parent.ID)
	p3 := mustAppend(t, st, parent.ID, user("p3"))[0] // the parent's, after the fork
	own := mustAppend(t, st, child.ID, user("c1"), sa.Message{Role: sa.RoleUser, Kind: sa.KindClear}, agent("c2"))
	textsOf := func(msgs []sa.Message) []string {
		out := []string{}
		for _, m := range msgs {
			out = append(out, m.Text()+"/"+string(m.Kind))
		}
		return out
	}
	for _, tt := range []struct {
		name    string
		session string
		after   int64
		want    []string
	}{
		{"all of a fork's own", child.ID, 0, []string{"c1/message", "/clear", "c2/message"}},
		{"after one of them", child.ID, own[0].ID, []string{"/clear", "c2/message"}},
		{"after the last", child.ID, own[2].ID, []string{}},
		{"the parent's, after the fork", parent.ID, p3.ID - 1, []string{"p3/message"}},
	} {
		got, err := st.MessagesAfter(ctx, tt.session, tt.after)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, textsOf(got)); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tt.name, diff)
		}
		for _, m := range got {
			if m.SessionID != tt.session || m.ID <= tt.after {
				t.Errorf("%s: message %d of session %s", tt.name, m.ID, m.SessionID)
			}
		}
	}
	if _, err := st.MessagesAfter(ctx, "no-such-session-000000000000", 0); !errors.Is(err, sa.ErrNotFound) {
		t.Errorf("an unknown session: %v, want not found", err)
	}
}

// testHistoryChunks: a history in chunks is History cut into pieces of
// at most the size asked, oldest first, each a slice of its own (the
// replay property test compares them on random lineages); an error of
// the callee stops the reading and comes back.
func testHistoryChunks(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	parent := mustCreate(t, st, user("p1"), agent("p2"), user("p3"))
	child := mustFork(t, st, parent.ID)
	mustAppend(t, st, child.ID, agent("c1"), user("c2"), agent("c3"), user("c4"))
	whole, err := st.History(ctx, child.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 2, 3, 7, 100} {
		var chunks [][]sa.Message
		err := st.HistoryChunks(ctx, child.ID, size, func(chunk []sa.Message) error {
			chunks = append(chunks, chunk)
			return nil
		})
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		for i, c := range chunks {
			if len(c) == 0 || len(c) > size {
				t.Errorf("size %d: chunk %d has %d messages", size, i, len(c))
			}
		}
		// Kept chunks stay as they were: each is a slice of its own.
		if diff := cmp.Diff(whole, slices.Concat(chunks...), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("size %d: chunks differ from History (-History +chunks)\n%s", size, diff)
		}
	}
	stop := errors.New("the reader went away")
	calls := 0
	err = st.HistoryChunks(ctx, child.ID, 2, func([]sa.Message) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("a callee's error: %v after %d calls, want it after 1", err, calls)
	}
	wantErrIs(t, st.HistoryChunks(ctx, child.ID, 0, func([]sa.Message) error { return nil }), sa.ErrInvalid, "chunks of 0 messages")
	wantErrIs(t, st.HistoryChunks(ctx, "no-such-session-000000000000", 5, func([]sa.Message) error { return nil }), sa.ErrNotFound, "an unknown session")
}

// testLatestMessage: the newest match of a session's history, its own
// messages first, then what it inherited up to its fork point, never
// past a clear; always the last match of what History returns.
func testLatestMessage(t *testing.T, factory Factory) {
	ctx := context.Background()
	st, _ := openStore(t, factory)
	note := func(text string) sa.Message {
		return sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart(text)}}
	}
	parent := mustCreate(t, st, user("p1"), note("p2"), agent("p3"), note("p4"), user("p5"))
	child := mustFork(t, st, parent.ID)
	mustAppend(t, st, parent.ID, note("p6"), agent("p7")) // after the fork: not the child's
	mustAppend(t, st, child.ID, user("c1"))
	cleared := mustFork(t, st, parent.ID)
	mustAppend(t, st, cleared.ID, sa.Message{Role: sa.RoleUser, Kind: sa.KindClear}, user("k1"))
	grandchild := mustFork(t, st, child.ID)
	mustAppend(t, st, grandchild.ID, agent("g1"), user("g2"))

	notes := sa.MessageMatch{Kinds: []sa.Kind{sa.KindNotification}}
	notesOrAnswers := sa.MessageMatch{Kinds: []sa.Kind{sa.KindNotification}, Roles: []sa.Role{sa.RoleAssistant}}
	for _, tt := range []struct {
		name    string
		session string
		match   sa.MessageMatch
		want    string // the text of the match; "" for none
	}{
		{"the session's own newest", parent.ID, notesOrAnswers, "p7"},
		{"by kind alone", parent.ID, notes, "p6"},
		{"by role alone", parent.ID, sa.MessageMatch{Roles: []sa.Role{sa.RoleUser}}, "p6"},
		{"inherited, up to the fork point", child.ID, notesOrAnswers, "p4"},
		{"two generations up", grandchild.ID, notes, "p4"},
		{"own before inherited", grandchild.ID, notesOrAnswers, "g1"},
		{"nothing before a clear", cleared.ID, notesOrAnswers, ""},
		{"the zero match matches nothing", parent.ID, sa.MessageMatch{}, ""},
	} {
		got, ok, err := st.LatestMessage(ctx, tt.session, tt.match)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if ok != (tt.want != "") || got.Text() != tt.want {
			t.Errorf("%s: got %q (found %v), want %q", tt.name, got.Text(), ok, tt.want)
		}
		// The same as the last match of the whole history.
		hist, err := st.History(ctx, tt.session)
		if err != nil {
			t.Fatal(err)
		}
		var last sa.Message
		for _, m := range slices.Backward(hist) {
			if tt.match.Matches(m) {
				last = m
				break
			}
		}
		if diff := cmp.Diff(last, got); diff != "" {
			t.Errorf("%s: not the history's last match (-history +latest)\n%s", tt.name, diff)
		}
	}
	if _, _, err := st.LatestMessage(ctx, "no-such-session-000000000000", notes); !errors.Is(err, sa.ErrNotFound) {
		t.Errorf("an unknown session: %v, want not found", err)
	}
}
