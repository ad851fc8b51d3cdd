// Package storetest is the conformance suite for superagents.Store: every
// implementation runs the same tests by calling Run with its own factory.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	sa "github.com/superagents/superagents"
)

// Factory prepares fresh, empty backing storage for one test and returns
// a function that opens a Store on it with the given options. The suite
// may Close that store and call open again to simulate a restart: the data
// must still be there.
type Factory func(t *testing.T, opts Options) (open func() sa.Store)

// Options are what the suite needs to control in a store.
type Options struct {
	// NewID, when set, replaces the store's id generator, so tests can make
	// ids that share a prefix.
	NewID func() string
}

// Run runs the whole conformance suite.
func Run(t *testing.T, factory Factory) {
	t.Run("Sessions", func(t *testing.T) { testSessions(t, factory) })
	t.Run("ResolveSession", func(t *testing.T) { testResolveSession(t, factory) })
	t.Run("Append", func(t *testing.T) { testAppend(t, factory) })
	t.Run("HistoryWalkthrough", func(t *testing.T) { testHistoryWalkthrough(t, factory) })
	t.Run("ForkAndClear", func(t *testing.T) { testForkAndClear(t, factory) })
	t.Run("ForkWritesOneRow", func(t *testing.T) { testForkWritesNoMessages(t, factory) })
	t.Run("MessagesAfter", func(t *testing.T) { testMessagesAfter(t, factory) })
	t.Run("HistoryChunks", func(t *testing.T) { testHistoryChunks(t, factory) })
	t.Run("LatestMessage", func(t *testing.T) { testLatestMessage(t, factory) })
	t.Run("Reopen", func(t *testing.T) { testReopen(t, factory) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, factory) })
	t.Run("ReplayMatchesCopyModel", func(t *testing.T) { testReplayProperty(t, factory) })
	t.Run("Tasks", func(t *testing.T) { testTasks(t, factory) })
	t.Run("ResolveTask", func(t *testing.T) { testResolveTask(t, factory) })
	t.Run("TaskListing", func(t *testing.T) { testTaskListing(t, factory) })
	t.Run("TaskSearch", func(t *testing.T) { testTaskSearch(t, factory) })
	t.Run("SessionPaging", func(t *testing.T) { testSessionPaging(t, factory) })
	t.Run("TaskTransitions", func(t *testing.T) { testTaskTransitions(t, factory) })
	t.Run("TaskBudget", func(t *testing.T) { testTaskBudget(t, factory) })
	t.Run("TaskWorktree", func(t *testing.T) { testTaskWorktree(t, factory) })
	t.Run("TaskLauncher", func(t *testing.T) { testTaskLauncher(t, factory) })
	t.Run("UsageSums", func(t *testing.T) { testUsageSums(t, factory) })
	t.Run("ConcurrentWrites", func(t *testing.T) { testConcurrentWrites(t, factory) })
	t.Run("Changes", func(t *testing.T) { testChanges(t, factory) })
	t.Run("ChangesFromConcurrentWriters", func(t *testing.T) { testChangesFromConcurrentWriters(t, factory) })
	t.Run("ChangeNotifier", func(t *testing.T) { testChangeNotifier(t, factory) })
	t.Run("FinishTask", func(t *testing.T) { testFinishTask(t, factory) })
	t.Run("JoinActiveBatch", func(t *testing.T) { testJoinActiveBatch(t, factory) })
	t.Run("Runners", func(t *testing.T) { testRunners(t, factory) })
	t.Run("TurnLeases", func(t *testing.T) { testTurnLeases(t, factory) })
	t.Run("TaskSessionLease", func(t *testing.T) { testTaskSessionLease(t, factory) })
	t.Run("ConcurrentLeases", func(t *testing.T) { testConcurrentLeases(t, factory) })
	t.Run("ForkWithMessages", func(t *testing.T) { testForkWithMessages(t, factory) })
	t.Run("Origin", func(t *testing.T) { testOrigin(t, factory) })
	t.Run("HostLinks", func(t *testing.T) { testHostLinks(t, factory) })
	t.Run("HostLinkNotices", func(t *testing.T) { testHostLinkNotices(t, factory) })
	t.Run("Inputs", func(t *testing.T) { testInputs(t, factory) })
	t.Run("Inbox", func(t *testing.T) { testInbox(t, factory) })
	t.Run("InboxRace", func(t *testing.T) { testInboxRace(t, factory) })
	t.Run("UnstorableKeys", func(t *testing.T) { testUnstorableKeys(t, factory) })
	t.Run("UnstorableInputKeys", func(t *testing.T) { testUnstorableInputKeys(t, factory) })
}

// idsInOrder is an id generator that hands out ids in the order given,
// so that tests can make ids that share a prefix.
func idsInOrder(ids ...string) func() string {
	var mu sync.Mutex
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		id := ids[0]
		ids = ids[1:]
		return id
	}
}

// openStore opens a fresh store that is closed when the test ends, and
// returns a reopen function that closes it and opens the same data again.
func openStore(t *testing.T, factory Factory) (sa.Store, func() sa.Store) {
	t.Helper()
	return openStoreWith(t, factory, Options{})
}

func openStoreWith(t *testing.T, factory Factory, opts Options) (sa.Store, func() sa.Store) {
	t.Helper()
	open := factory(t, opts)
	st := open()
	t.Cleanup(func() { st.Close() })
	reopen := func() sa.Store {
		t.Helper()
		if err := st.Close(); err != nil {
			t.Fatalf("close store: %v", err)
		}
		st = open()
		return st
	}
	return st, reopen
}

func user(text string) sa.Message {
	return sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(text)}}
}

func agent(text string) sa.Message {
	return sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{sa.TextPart(text)}}
}

func mustCreate(t *testing.T, st sa.Store, msgs ...sa.Message) sa.Session {
	t.Helper()
	s, err := st.CreateSession(context.Background(), sa.NewSession{Agent: "general", Model: "offline", Messages: msgs})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return s
}

func mustAppend(t *testing.T, st sa.Store, id string, msgs ...sa.Message) []sa.Message {
	t.Helper()
	out, err := st.Append(context.Background(), id, msgs...)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	return out
}

func mustFork(t *testing.T, st sa.Store, id string) sa.Session {
	t.Helper()
	s, err := st.Fork(context.Background(), id, sa.ForkOptions{})
	if err != nil {
		t.Fatalf("Fork: %v", err)
	}
	return s
}

func mustClear(t *testing.T, st sa.Store, id string) {
	t.Helper()
	mustAppend(t, st, id, sa.ClearMessage())
}

// texts renders a history as the texts of its messages, for comparison.
func texts(t *testing.T, st sa.Store, id string) []string {
	t.Helper()
	hist, err := st.History(context.Background(), id)
	if err != nil {
		t.Fatalf("History(%s): %v", id, err)
	}
	out := make([]string, len(hist))
	for i, m := range hist {
		out[i] = m.Text()
	}
	return out
}

func wantTexts(t *testing.T, st sa.Store, id string, want ...string) {
	t.Helper()
	got := texts(t, st, id)
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("history of %s = %q, want %q", sa.ShortID(id), got, want)
	}
}

func wantErrIs(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error = %v, want %v", what, err, target)
	}
}

func ids(list []sa.SessionSummary) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.ID
	}
	return out
}

func describe(s sa.Session) string {
	return fmt.Sprintf("%s(parent=%s fork=%d)", s.ID, s.ParentID, s.ForkMessageID)
}

// lastID returns the id of the newest message in a session's history.
func lastID(t *testing.T, st sa.Store, id string) int64 {
	t.Helper()
	h, err := st.History(context.Background(), id)
	if err != nil || len(h) == 0 {
		t.Fatalf("History(%s) = %d messages, %v", id, len(h), err)
	}
	return h[len(h)-1].ID
}
