package repl

import (
	"context"
	sa "github.com/superagents/superagents"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/agents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/runtime"
	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/tasktools"
	"github.com/superagents/superagents/internal/termtest"
)

// rig is a chat's world for tests: an engine over a real store in a
// data directory and a real workspace, with the offline model and the
// chat script, the event bus and the task manager.
type rig struct {
	// Store is the whole store.
	Store sa.Store
	rt    *runtime.Runtime
	ws    string
}

// testEngine builds a rig on the offline model.
func testEngine(t testing.TB, dataDir string) *rig {
	t.Helper()
	return scriptedEngine(t, dataDir, "")
}

// scriptedEngine builds a rig on the offline model whose script has the
// rules given before the chat script's.
func scriptedEngine(t testing.TB, dataDir, rules string) *rig {
	t.Helper()
	script := filepath.Join(t.TempDir(), "script.toml")
	if err := os.WriteFile(script, []byte(rules+termtest.OfflineScript), 0o600); err != nil {
		t.Fatal(err)
	}
	return testRig(t, dataDir, map[string]string{config.EnvOfflineScript: script})
}

// testRig builds a rig whose configuration sees env as its environment.
func testRig(t testing.TB, dataDir string, env map[string]string) *rig {
	t.Helper()
	ws := t.TempDir()
	cfg, err := config.Load(config.Options{Workspace: ws, UserDir: t.TempDir(), LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.OpenDir(ctx, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rt, problems, err := runtime.Open(ctx, runtime.Options{Store: st, Config: cfg, Workspace: ws,
		AgentDirs: agents.Dirs{Project: agents.ProjectDir(ws)}, BashEnv: []string{"PATH=" + os.Getenv("PATH")},
		PollInterval: 50 * time.Millisecond, TaskTools: tasktools.For})
	if err != nil || len(problems) > 0 {
		t.Fatalf("runtime: %v %v", err, problems)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := rt.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return &rig{Store: st, rt: rt, ws: ws}
}

// options are the options of a chat on the rig.
func (r *rig) options(session string) Options {
	return Options{Runtime: r.rt, Session: session}
}

// release lets the tasks waiting for release go on (see termtest's
// script).
func (r *rig) release(t testing.TB) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(r.ws, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// openChat opens a chat (a new one when session is "") and closes it at
// the end of the test.
func openChat(t testing.TB, r *rig, session string) *Chat {
	t.Helper()
	c, err := Open(context.Background(), r.options(session))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// eventLog collects a chat's events, however many come, in order.
type eventLog struct {
	mu     sync.Mutex
	queue  []Event
	signal chan struct{}
}

func newEventLog() *eventLog { return &eventLog{signal: make(chan struct{}, 1)} }

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	l.queue = append(l.queue, e)
	l.mu.Unlock()
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

// next returns the next event. A test that waits a minute for one has
// hung: it fails rather than wait forever.
func (l *eventLog) next(t testing.TB) Event {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		l.mu.Lock()
		if len(l.queue) > 0 {
			e := l.queue[0]
			l.queue = l.queue[1:]
			l.mu.Unlock()
			return e
		}
		l.mu.Unlock()
		select {
		case <-l.signal:
		case <-timeout:
			t.Fatal("no event from the chat for a minute")
		}
	}
}

// until returns the events up to the first that matches, that one
// included.
func (l *eventLog) until(t testing.TB, match func(Event) bool) []Event {
	t.Helper()
	var seen []Event
	for {
		e := l.next(t)
		seen = append(seen, e)
		if match(e) {
			return seen
		}
	}
}

func collect(c *Chat) *eventLog {
	l := newEventLog()
	c.SetSink(l.add)
	return l
}

// submit sends a line; a turn it starts runs to its end, whose event it
// returns with the text streamed.
func submit(t *testing.T, c *Chat, e *eventLog, line string) (Reply, string, Event) {
	t.Helper()
	r := c.Submit(context.Background(), line)
	turn := r.Turn()
	if turn == nil {
		return r, "", Event{}
	}
	<-turn.Start()
	var text strings.Builder
	for {
		ev := e.next(t)
		switch ev.Kind {
		case TurnText:
			text.WriteString(ev.Text)
		case TurnEnd:
			return r, text.String(), ev
		}
	}
}

// ask sends a message and returns the answer, failing on anything else.
func ask(t *testing.T, c *Chat, e *eventLog, line string) string {
	t.Helper()
	r, text, end := submit(t, c, e, line)
	if r.Failed || r.Turn() == nil || end.Err != nil || end.Cancelled {
		t.Fatalf("%q: reply %+v, end %+v", line, r, end)
	}
	return text
}

// blockText joins the text of a reply's blocks.
func blockText(r Reply) string {
	var parts []string
	for _, b := range r.Blocks {
		if b.Kind == BlockHeader {
			parts = append(parts, "header "+b.Session.ID)
			continue
		}
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}
