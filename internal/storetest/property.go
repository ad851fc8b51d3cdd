package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	sa "github.com/superagents/superagents"
)

// copyModel is the naive reference for delta storage: every session holds
// a full copy of its effective history, copied whole at each fork.
type copyModel struct {
	history map[string][]string // live sessions' histories
	live    []string            // live sessions, in creation order
	deleted []string
	next    int // for unique message texts
}

func (m *copyModel) text() string {
	m.next++
	return fmt.Sprintf("m%d", m.next)
}

// testReplayProperty runs random sequences of creates, appends, clears,
// forks, deletes and restarts, and compares the store's replayed history
// of each session with the copy model: the touched session after every
// step, and every session (and the listing) at the end of each run. A
// history that leaked into a relative stays wrong until then, and checking
// everything after every step makes the suite too slow under -race.
func testReplayProperty(t *testing.T, factory Factory) {
	ctx := context.Background()
	// One store for all runs (opening one per run is slow under -race):
	// each run tracks only the sessions it made, which are independent of
	// any other run's.
	open := factory(t, Options{})
	st := open()
	t.Cleanup(func() { st.Close() })

	rapid.Check(t, func(rt *rapid.T) {
		m := &copyModel{history: map[string][]string{}}
		check := func(rt *rapid.T, id string) {
			hist, err := st.History(ctx, id)
			if err != nil {
				rt.Fatalf("History(%s): %v", id, err)
			}
			got := make([]string, len(hist))
			for i, msg := range hist {
				got[i] = msg.Text()
			}
			if !slices.Equal(got, m.history[id]) {
				rt.Fatalf("history of %s = %q, the copy model says %q", id, got, m.history[id])
			}
			// The same history in chunks, as it is read.
			size := rapid.IntRange(1, 4).Draw(rt, "chunk size")
			got = got[:0]
			err = st.HistoryChunks(ctx, id, size, func(chunk []sa.Message) error {
				if len(chunk) == 0 || len(chunk) > size {
					rt.Fatalf("a chunk of %d messages, want 1 to %d", len(chunk), size)
				}
				for _, msg := range chunk {
					got = append(got, msg.Text())
				}
				return nil
			})
			if err != nil {
				rt.Fatalf("HistoryChunks(%s): %v", id, err)
			}
			if !slices.Equal(got, m.history[id]) {
				rt.Fatalf("history of %s in chunks of %d = %q, the copy model says %q", id, size, got, m.history[id])
			}
		}
		pick := func(rt *rapid.T) string {
			if len(m.live) == 0 {
				rt.Skip("no live session")
			}
			return rapid.SampledFrom(m.live).Draw(rt, "session")
		}

		rt.Repeat(map[string]func(*rapid.T){
			"create": func(rt *rapid.T) {
				var msgs []sa.Message
				var want []string
				for range rapid.IntRange(0, 3).Draw(rt, "messages") {
					text := m.text()
					msgs = append(msgs, user(text))
					want = append(want, text)
				}
				s, err := st.CreateSession(ctx, sa.NewSession{Messages: msgs})
				if err != nil {
					rt.Fatal(err)
				}
				m.history[s.ID] = want
				m.live = append(m.live, s.ID)
				check(rt, s.ID)
			},
			"append": func(rt *rapid.T) {
				id := pick(rt)
				var msgs []sa.Message
				for range rapid.IntRange(1, 3).Draw(rt, "messages") {
					text := m.text()
					msgs = append(msgs, agent(text))
					m.history[id] = append(m.history[id], text)
				}
				if _, err := st.Append(ctx, id, msgs...); err != nil {
					rt.Fatal(err)
				}
				check(rt, id)
			},
			"clear": func(rt *rapid.T) {
				id := pick(rt)
				if _, err := st.Append(ctx, id, sa.ClearMessage()); err != nil {
					rt.Fatal(err)
				}
				m.history[id] = nil
				check(rt, id)
			},
			"fork": func(rt *rapid.T) {
				id := pick(rt)
				child, err := st.Fork(ctx, id, sa.ForkOptions{})
				if err != nil {
					rt.Fatal(err)
				}
				m.history[child.ID] = slices.Clone(m.history[id])
				m.live = append(m.live, child.ID)
				check(rt, child.ID)
			},
			"delete": func(rt *rapid.T) {
				id := pick(rt)
				if err := st.DeleteSession(ctx, id); err != nil {
					rt.Fatal(err)
				}
				delete(m.history, id)
				m.live = slices.DeleteFunc(m.live, func(s string) bool { return s == id })
				m.deleted = append(m.deleted, id)
			},
			"restart": func(rt *rapid.T) {
				if err := st.Close(); err != nil {
					rt.Fatal(err)
				}
				st = open()
			},
		})

		for _, id := range m.live {
			check(rt, id)
		}
		list, err := st.ListSessions(ctx, sa.SessionFilter{})
		if err != nil {
			rt.Fatal(err)
		}
		listed := map[string]bool{}
		for _, s := range list {
			listed[s.ID] = true
		}
		for _, id := range m.live {
			if !listed[id] {
				rt.Fatalf("live session %s is not listed", id)
			}
		}
		for _, id := range m.deleted {
			if listed[id] {
				rt.Fatalf("deleted session %s is listed", id)
			}
		}
	})
}
