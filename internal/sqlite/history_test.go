package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	sa "github.com/superagents/superagents"
)

// A history of two long segments is read straight into one slice: it
// comes back whole and in order, and a message whose parts are unreadable
// is named, wherever it is.
func TestLongHistoryReadWhole(t *testing.T) {
	ctx := context.Background()
	st := openTemp(t)
	var msgs []sa.Message
	for i := range 1300 {
		m := user(fmt.Sprintf("question %d %s", i, strings.Repeat("x", i%50)))
		if i%3 == 1 {
			m = sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{
				sa.TextPart("calling " + strconv.Itoa(i)),
				{Type: sa.PartToolCall, CallID: "c" + strconv.Itoa(i), Name: "read", Input: []byte(`{"path":"f` + strconv.Itoa(i) + `"}`)},
			}}
		}
		msgs = append(msgs, m)
	}
	parent, err := st.CreateSession(ctx, sa.NewSession{Messages: msgs[:1000]})
	if err != nil {
		t.Fatal(err)
	}
	child, err := st.Fork(ctx, parent.ID, sa.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, child.ID, msgs[1000:]...); err != nil {
		t.Fatal(err)
	}
	history, err := st.History(ctx, child.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(history) != len(msgs) {
		t.Fatalf("history has %d messages, want %d", len(history), len(msgs))
	}
	for i, m := range history {
		if diff := cmp.Diff(msgs[i].Parts, m.Parts); diff != "" {
			t.Fatalf("message %d (id %d): parts differ (-want +got):\n%s", i, m.ID, diff)
		}
		if i > 0 && m.ID <= history[i-1].ID {
			t.Fatalf("message %d: id %d after %d", i, m.ID, history[i-1].ID)
		}
	}
	after, err := st.MessagesAfter(ctx, parent.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(history[:1000], after); diff != "" {
		t.Fatalf("MessagesAfter differs from the history (-history +after):\n%s", diff)
	}

	// In this order, as each case leaves its message unreadable: the
	// child's segment, then the parent's.
	for _, i := range []int{1000 + 280, 700, 10} {
		t.Run("unreadable "+strconv.Itoa(i), func(t *testing.T) {
			bad := history[i].ID
			corrupt(t, st, `UPDATE messages SET parts = '{not json' WHERE id = `+strconv.FormatInt(bad, 10))
			_, err := st.History(ctx, child.ID)
			if !errors.Is(err, sa.ErrCorrupt) || !strings.Contains(err.Error(), "message "+strconv.FormatInt(bad, 10)+" ") {
				t.Fatalf("History = %v, want ErrCorrupt naming message %d", err, bad)
			}
		})
	}
}
