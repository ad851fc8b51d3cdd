package repl

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/agents"
	"github.com/superagents/superagents/config"
	"github.com/superagents/superagents/engine"
	"github.com/superagents/superagents/internal/termtest"
	"github.com/superagents/superagents/sqlite"
)

// testEngine builds an engine over a real store in dataDir and a real
// workspace, with the offline model and the sleep script.
func testEngine(t testing.TB, dataDir string) *engine.Engine {
	t.Helper()
	ws := t.TempDir()
	script := filepath.Join(t.TempDir(), "script.toml")
	if err := os.WriteFile(script, []byte(termtest.OfflineScript), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{config.EnvOfflineScript: script}
	cfg, err := config.Load(config.Options{Workspace: ws, UserDir: t.TempDir(), LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := sqlite.OpenDir(context.Background(), dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	eng, problems, err := engine.New(engine.Options{Store: st, Config: cfg, Workspace: ws,
		AgentDirs: agents.Dirs{Project: agents.ProjectDir(ws)}, BashEnv: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil || len(problems) > 0 {
		t.Fatalf("engine: %v %v", err, problems)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// openChat opens a chat (a new one when session is "") and closes it at
// the end of the test.
func openChat(t testing.TB, eng *engine.Engine, session string) *Chat {
	t.Helper()
	c, err := Open(context.Background(), Options{Engine: eng, Session: session})
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

// events collects a chat's turn events.
type events struct {
	ch chan TurnEvent
}

func collect(c *Chat) *events {
	e := &events{ch: make(chan TurnEvent, 1000)}
	c.SetSink(func(ev TurnEvent) { e.ch <- ev })
	return e
}

// submit sends a line; a turn it starts runs to its end, whose event it
// returns with the text streamed.
func submit(t *testing.T, c *Chat, e *events, line string) (Reply, string, TurnEvent) {
	t.Helper()
	r := c.Submit(context.Background(), line)
	turn := r.Turn()
	if turn == nil {
		return r, "", TurnEvent{}
	}
	<-turn.Start()
	var text strings.Builder
	for {
		ev := <-e.ch
		switch ev.Kind {
		case TurnText:
			text.WriteString(ev.Text)
		case TurnEnd:
			return r, text.String(), ev
		}
	}
}

// ask sends a message and returns the answer, failing on anything else.
func ask(t *testing.T, c *Chat, e *events, line string) string {
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
