package repl

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
)

func TestParseLine(t *testing.T) {
	tests := []struct {
		line    string
		message string
		command string
		args    string
		err     string
		// what the commands with a syntax (the task commands) read
		options map[string]string
		words   []string
		text    string
	}{
		{line: "", message: ""},
		{line: "   \t ", message: ""},
		{line: "What is 2+2?", message: "What is 2+2?"},
		{line: "  spaced out  ", message: "spaced out"},
		{line: "//etc/hosts is a file", message: "/etc/hosts is a file"},
		{line: "/fork", command: "fork"},
		{line: "/fork What was my first question?", command: "fork", args: "What was my first question?", text: "What was my first question?"},
		{line: `/fork "What is 2+2?"`, command: "fork", args: `"What is 2+2?"`, text: "What is 2+2?"},
		{line: `/fork what's "up"?`, command: "fork", args: `what's "up"?`, text: `what's "up"?`},
		{line: `/fork ""`, err: "/fork: the quoted text is empty (usage: /fork [prompt])"},
		{line: `/fork "unterminated`, err: "/fork: no closing \": quote the whole text"},
		{line: `/fork "one" two`, err: "/fork: text after the closing quote"},
		{line: "/switch abc123...", command: "switch", args: "abc123..."},
		{line: "/switch   abcd  ", command: "switch", args: "abcd"},
		{line: "/quit", command: "exit"},
		{line: "/?", command: "help"},
		{line: "/model anthropic/claude-sonnet-4-5", command: "model", args: "anthropic/claude-sonnet-4-5"},
		{line: "/", err: "type a command after /"},
		{line: "/bogus", err: "unknown command /bogus"},
		{line: "/etc/hosts", err: "unknown command /etc/hosts"},
		{line: "/clear now", err: `/clear takes no argument (got "now")`},
		{line: "/agents -a", err: "/agents takes no argument"},
		{line: "/switch", err: "/switch needs an argument: /switch ID"},
		{line: "/kill", err: "/kill needs an argument: /kill ID"},
		{line: "/kill abcd efgh", err: `/kill takes one ID, not "abcd efgh"`},

		{line: "/task general find the port", command: "task", args: `general find the port`, words: []string{"general"}, text: "find the port"},
		{line: `/task general "find the port"`, command: "task", args: `general "find the port"`, words: []string{"general"}, text: "find the port"},
		{line: `/task general 'say "hi"'`, command: "task", args: `general 'say "hi"'`, words: []string{"general"}, text: `say "hi"`},
		{line: `/task general "say \"hi\" \\ bye"`, command: "task", args: `general "say \"hi\" \\ bye"`, words: []string{"general"}, text: `say "hi" \ bye`},
		{line: "/task general what's up? it's \"fine\"", command: "task", args: "general what's up? it's \"fine\"", words: []string{"general"}, text: `what's up? it's "fine"`},
		{line: "/task --fork explore where is it?", command: "task", args: `--fork explore where is it?`, options: map[string]string{"fork": ""}, words: []string{"explore"}, text: "where is it?"},
		{line: `/task --desc "port hunt" --fork explore "where?"`, command: "task", args: `--desc "port hunt" --fork explore "where?"`, options: map[string]string{"fork": "", "desc": "port hunt"}, words: []string{"explore"}, text: "where?"},
		{line: `/task --desc=hunt general go`, command: "task", args: `--desc=hunt general go`, options: map[string]string{"desc": "hunt"}, words: []string{"general"}, text: "go"},
		{line: `/task --description hunt general go`, command: "task", args: `--description hunt general go`, options: map[string]string{"desc": "hunt"}, words: []string{"general"}, text: "go"},
		{line: "/task   general    spaced   out  ", command: "task", args: `general    spaced   out`, words: []string{"general"}, text: "spaced   out"},
		{line: "/output abcd", command: "output", args: `abcd`, words: []string{"abcd"}},
		{line: "/output --block abcd...", command: "output", args: `--block abcd...`, options: map[string]string{"block": ""}, words: []string{"abcd..."}},
		{line: "/cancel abcdef", command: "cancel", args: `abcdef`, words: []string{"abcdef"}},
		{line: `/resume abcd "and now?"`, command: "resume", args: `abcd "and now?"`, words: []string{"abcd"}, text: "and now?"},
		{line: "/resume abcd and now?", command: "resume", args: `abcd and now?`, words: []string{"abcd"}, text: "and now?"},
		{line: "/tasks", command: "tasks"},
		{line: "/send abcd... blue", command: "send", args: `abcd... blue`, words: []string{"abcd..."}, text: "blue"},
		{line: `/send abcd "skip the tests, then stop"`, command: "send", args: `abcd "skip the tests, then stop"`, words: []string{"abcd"}, text: "skip the tests, then stop"},

		{line: "/task", err: `/task: missing AGENT (usage: /task [options] AGENT "prompt")`},
		{line: "/task general", command: "task", args: "general", words: []string{"general"}},
		{line: "/task --timeout=60 --max-cost 0.5 --isolation worktree general go", command: "task", args: "--timeout=60 --max-cost 0.5 --isolation worktree general go",
			options: map[string]string{"timeout": "60", "max-cost": "0.5", "isolation": "worktree"}, words: []string{"general"}, text: "go"},
		{line: `/task general ""`, err: "the quoted text is empty"},
		{line: `/task general "unfinished`, err: "no closing \": quote the whole text"},
		{line: `/task general "one" two`, err: "text after the closing quote"},
		{line: `/task "general" go`, command: "task", args: `"general" go`, words: []string{"general"}, text: "go"},
		{line: `/task --desc "unfinished general go`, err: "no closing \""},
		{line: `/task --desc "x"y general go`, err: "a closing quote must end a word"},
		{line: "/task --desc", err: "--desc needs a value"},
		{line: `/task --desc "" general go`, err: "--desc needs a value"},
		{line: "/task --fork=yes general go", err: "--fork takes no value"},
		{line: "/task --forks general go", err: "unknown option --forks"},
		{line: "/task general --fork go", err: "options go before AGENT"},
		{line: "/output", err: "/output: missing ID (usage: /output [--block] ID)"},
		{line: "/output --wait abcd", err: "unknown option --wait"},
		{line: "/output abcd efgh", err: `unexpected "efgh"`},
		{line: "/cancel", err: "/cancel: missing ID"},
		{line: "/resume abcd", err: `/resume: missing "prompt"`},
		{line: "/tasks all", err: "/tasks takes no argument"},
		{line: "/send", err: "/send: missing ID"},
		{line: "/send abcd", err: `/send: missing "message" (usage: /send ID "message")`},
		{line: `/send abcd ""`, err: "the quoted text is empty"},
		{line: "/task --fork --fork general go", err: "/task: --fork given twice"},
		{line: "/task --desc a --description b general go", err: "/task: --desc given twice"},
		{line: "/output --block --block abcd", err: "/output: --block given twice"},
		{line: "/clear " + strings.Repeat("x", 100), err: `/clear takes no argument (got "` + strings.Repeat("x", 40) + `…")`},
		{line: "/kill abcd " + strings.Repeat("x", 100), err: `/kill takes one ID, not "abcd ` + strings.Repeat("x", 35) + `…"`},
		{line: "/output abcd " + strings.Repeat("x", 100), err: `unexpected "` + strings.Repeat("x", 40) + `…"`},
		{line: "/task --" + strings.Repeat("x", 100) + " general go", err: "unknown option --" + strings.Repeat("x", 38) + "… "},
		{line: "/" + strings.Repeat("x", 100), err: "unknown command /" + strings.Repeat("x", 40) + "…:"},
		{line: "/exit! now", err: "/exit! takes no argument"},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			in, err := ParseLine(tt.line)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseLine(%q) error = %v, want %q", tt.line, err, tt.err)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			name := ""
			if in.Command != nil {
				name = in.Command.Name
			}
			if in.Message != tt.message || name != tt.command || in.Args != tt.args {
				t.Fatalf("ParseLine(%q) = message %q, command %q, args %q", tt.line, in.Message, name, in.Args)
			}
			got := in.parsed
			if !maps.Equal(got.options, tt.options) || strings.Join(got.words, "|") != strings.Join(tt.words, "|") || got.text != tt.text {
				t.Fatalf("ParseLine(%q) read %+v, want options %v words %v text %q", tt.line, got, tt.options, tt.words, tt.text)
			}
		})
	}
}

// mustSubmit runs a command that must succeed and returns its reply.
func mustSubmit(t testing.TB, c *Chat, line string) Reply {
	t.Helper()
	r := c.Submit(context.Background(), line)
	if r.Failed {
		t.Fatalf("%q failed: %s", line, blockText(r))
	}
	return r
}

// mustFail runs a line that must be refused with an error mentioning
// want, and checks it left the agent in view alone.
func mustFail(t *testing.T, c *Chat, line, want string) {
	t.Helper()
	before := c.Current()
	r := c.Submit(context.Background(), line)
	if !r.Failed || r.Turn() != nil || len(r.Blocks) != 1 || r.Blocks[0].Kind != BlockError {
		t.Fatalf("%q: want one error block, got %+v", line, r)
	}
	if got := r.Blocks[0].Text; !strings.Contains(got, want) || strings.Contains(got, "\n") || strings.Contains(got, "invalid input") {
		t.Fatalf("%q: error %q, want one line with %q (and no category prefix)", line, got, want)
	}
	if c.Current().ID != before.ID {
		t.Fatalf("%q moved the view from %s to %s", line, before.ID, c.Current().ID)
	}
}

func TestForkInheritsWithoutCopying(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	parent := c.Current()
	ask(t, c, e, "What is 2+2?")
	ask(t, c, e, "What is 3+3?")
	parentHistory, _ := eng.Store.History(context.Background(), parent.ID)

	r := mustSubmit(t, c, "/fork")
	child := c.Current()
	if child.ID == parent.ID || child.ParentID != parent.ID || child.ForkMessageID != parentHistory[len(parentHistory)-1].ID {
		t.Fatalf("child %+v: want a fork of %s at message %d", child, parent.ID, parentHistory[len(parentHistory)-1].ID)
	}
	if len(r.Blocks) != 2 || r.Blocks[0].Kind != BlockHeader || r.Blocks[0].Session.ID != child.ID || r.Blocks[1].Text != "Forked from "+sa.ShortID(parent.ID) {
		t.Fatalf("/fork reply = %s", blockText(r))
	}
	list, _ := eng.Store.ListSessions(context.Background(), sa.SessionFilter{ParentID: parent.ID})
	if len(list) != 1 || list[0].MessageCount != 1 {
		t.Fatalf("children of the parent = %+v: want one child storing only its fork record", list)
	}
	if got := ask(t, c, e, "What was my first question?"); got != `Your first question was "What is 2+2?"` {
		t.Fatalf("child recalls %q", got)
	}
	// The parent's history did not change.
	after, _ := eng.Store.History(context.Background(), parent.ID)
	if len(after) != len(parentHistory) {
		t.Fatalf("the parent's history grew from %d to %d messages", len(parentHistory), len(after))
	}
}

func TestForkWithPrompt(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	ask(t, c, e, "What is 2+2?")
	r, text, end := submit(t, c, e, "/fork What was my first question?")
	if r.Failed || end.Err != nil || text != `Your first question was "What is 2+2?"` {
		t.Fatalf("/fork with a prompt: %s / %q / %+v", blockText(r), text, end)
	}
	if c.Current().ParentID == "" {
		t.Fatal("the view did not move to the child")
	}
}

// TestForkQuotedPrompt: /fork reads its prompt like the other commands:
// one quoted string is unquoted, and bad quoting forks nothing.
func TestForkQuotedPrompt(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	parent := c.Current()
	for _, line := range []string{`/fork ""`, `/fork "unterminated`, `/fork "What is 2+2?" now`} {
		mustFail(t, c, line, "(usage: /fork [prompt])")
	}
	if kids, err := eng.Store.ListSessions(context.Background(), sa.SessionFilter{ParentID: parent.ID}); err != nil || len(kids) != 0 {
		t.Fatalf("children after refused forks: %+v, %v", kids, err)
	}
	r, text, end := submit(t, c, e, `/fork "What is 2+2?"`)
	if r.Failed || end.Err != nil || text != "2+2 equals 4." {
		t.Fatalf("/fork with a quoted prompt: %s / %q / %+v", blockText(r), text, end)
	}
	history, err := eng.Store.History(context.Background(), c.Current().ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := history[1].Text(); got != "What is 2+2?" {
		t.Fatalf("the child was asked %q", got)
	}
}

// startSleep starts a turn that runs "sleep 30" and waits until the tool
// runs.
func startSleep(t *testing.T, c *Chat, e *eventLog) *Turn {
	t.Helper()
	r := c.Submit(context.Background(), "please sleep")
	turn := r.Turn()
	if turn == nil {
		t.Fatalf("no turn: %s", blockText(r))
	}
	turn.Start()
	ev := e.until(t, func(ev Event) bool { return ev.Kind == TurnTool })
	if last := ev[len(ev)-1]; last.Text != "→ bash sleep 30" {
		t.Fatalf("tool line %q", last.Text)
	}
	return turn
}

// waitEnd waits for a turn's end event.
func waitEnd(t *testing.T, e *eventLog, session string) Event {
	t.Helper()
	ev := e.until(t, func(ev Event) bool { return ev.Kind == TurnEnd && ev.Session == session })
	return ev[len(ev)-1]
}

func TestBusyAgentRefusesWhatNeedsItIdle(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	turn := startSleep(t, c, e)
	id := sa.ShortID(c.Current().ID)
	for _, line := range []string{"/fork", "/clear", "What is 2+2?"} {
		mustFail(t, c, line, id+" is still working")
	}
	if !c.Activity().Current {
		t.Fatal("Activity does not show the running turn")
	}
	if got := blockText(mustSubmit(t, c, "/agents")); !strings.Contains(got, "working ← current") {
		t.Fatalf("/agents during a turn:\n%s", got)
	}
	if !c.Interrupt() {
		t.Fatal("Interrupt found no turn")
	}
	if end := waitEnd(t, e, turn.Session()); !end.Cancelled {
		t.Fatalf("end = %+v, want cancelled", end)
	}
	if got := blockText(mustSubmit(t, c, "/agents")); !strings.Contains(got, "stopped ← current") {
		t.Fatalf("/agents after Ctrl+C:\n%s", got)
	}
	if c.Interrupt() {
		t.Fatal("Interrupt with nothing running reported a turn")
	}
	// The agent takes messages again.
	if got := ask(t, c, e, "What is 2+2?"); got != "2+2 equals 4." {
		t.Fatalf("after the cancel: %q", got)
	}
}

func TestClear(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	ask(t, c, e, "What is 2+2?")
	mustSubmit(t, c, "/fork")
	child := c.Current()
	mustSubmit(t, c, "/parent")
	r := mustSubmit(t, c, "/clear")
	if !strings.Contains(blockText(r), "Context cleared") {
		t.Fatalf("/clear said %q", blockText(r))
	}
	if got := ask(t, c, e, "What was my first question?"); !strings.Contains(got, "not asked anything") {
		t.Fatalf("after /clear the agent recalls %q", got)
	}
	mustSubmit(t, c, "/switch "+child.ID)
	if got := ask(t, c, e, "What was my first question?"); got != `Your first question was "What is 2+2?"` {
		t.Fatalf("the child lost what it inherited: %q", got)
	}
	mustFail(t, c, "/clear all", "/clear takes no argument")
}

func TestSwitchAndParent(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	root := c.Current()
	mustSubmit(t, c, "/fork")
	child := c.Current()
	mustSubmit(t, c, "/fork")
	grandchild := c.Current()

	r := mustSubmit(t, c, "/switch "+sa.ShortID(root.ID))
	if c.Current().ID != root.ID || len(r.Blocks) != 1 || r.Blocks[0].Kind != BlockHeader || r.Blocks[0].Session.ID != root.ID {
		t.Fatalf("/switch to the root: %s, now on %s", blockText(r), c.Current().ID)
	}
	mustSubmit(t, c, "/switch "+grandchild.ID[:5])
	if c.Current().ID != grandchild.ID {
		t.Fatal("/switch by prefix did not move")
	}
	if got := blockText(mustSubmit(t, c, "/switch "+grandchild.ID)); !strings.Contains(got, "Already on") {
		t.Fatalf("/switch to itself: %q", got)
	}
	mustSubmit(t, c, "/parent")
	if c.Current().ID != child.ID {
		t.Fatalf("/parent from the grandchild went to %s", c.Current().ID)
	}
	mustSubmit(t, c, "/parent")
	mustFail(t, c, "/parent", "is the root agent")
	mustFail(t, c, "/parent now", "/parent takes no argument")

	other, err := eng.Store.CreateSession(context.Background(), sa.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	mustFail(t, c, "/switch "+other.ID, "is not in this chat's tree")
	mustFail(t, c, "/switch zzzzzz", "no agent zzzzzz")
	mustFail(t, c, "/switch ab", `id prefix "ab" is too short`)
	mustFail(t, c, "/kill ab", `id prefix "ab" is too short`)
	mustFail(t, c, "/switch ABCD!", "may contain only")
	long := strings.Repeat("y", 100)
	mustFail(t, c, "/switch "+long, `id "`+strings.Repeat("y", 40)+`…" is longer than any id`)
	mustFail(t, c, "/switch", "needs an argument")
}

func TestKill(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	root := c.Current()
	mustSubmit(t, c, "/fork")
	child := c.Current()
	turn := startSleep(t, c, e)
	// Fork a grandchild from the root's side: a sibling must survive.
	mustSubmit(t, c, "/switch "+root.ID)
	mustSubmit(t, c, "/fork")
	sibling := c.Current()
	mustSubmit(t, c, "/switch "+child.ID)

	mustFail(t, c, "/kill "+root.ID, "is the root agent and cannot be killed")
	mustFail(t, c, "/kill zzzzzz", "no agent zzzzzz")
	r := mustSubmit(t, c, "/kill "+sa.ShortID(child.ID))
	if got := blockText(r); !strings.Contains(got, "Stopped "+sa.ShortID(child.ID)+" (1 running turn cancelled).") || !strings.Contains(got, "header "+root.ID) {
		t.Fatalf("/kill said:\n%s", got)
	}
	if c.Current().ID != root.ID {
		t.Fatalf("after killing the agent in view the view is on %s, want its parent", c.Current().ID)
	}
	if end := waitEnd(t, e, turn.Session()); !end.Cancelled {
		t.Fatalf("the killed agent's turn ended with %+v", end)
	}
	tree := blockText(mustSubmit(t, c, "/agents"))
	if !strings.Contains(tree, sa.ShortID(child.ID)+"] stopped") || !strings.Contains(tree, sa.ShortID(sibling.ID)+"] idle") {
		t.Fatalf("/agents after /kill:\n%s", tree)
	}
}

func TestKillStopsDescendants(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	e := collect(c)
	mustSubmit(t, c, "/fork")
	child := c.Current()
	mustSubmit(t, c, "/fork")
	turn := startSleep(t, c, e)
	mustSubmit(t, c, "/parent")
	got := blockText(mustSubmit(t, c, "/kill "+child.ID))
	if !strings.Contains(got, "and 1 agent forked from it (1 running turn cancelled)") {
		t.Fatalf("/kill said %q", got)
	}
	if end := waitEnd(t, e, turn.Session()); !end.Cancelled {
		t.Fatalf("the grandchild's turn ended with %+v", end)
	}
}

func TestModel(t *testing.T) {
	dataDir := t.TempDir()
	eng := testEngine(t, dataDir)
	c := openChat(t, eng, "")
	e := collect(c)
	id := sa.ShortID(c.Current().ID)
	if got := blockText(mustSubmit(t, c, "/model")); got != id+" uses offline; /model provider/model changes it." {
		t.Fatalf("/model said %q", got)
	}
	mustFail(t, c, "/model nope/x", `unknown provider "nope"`)
	mustFail(t, c, "/model gpt-4.1", "names no provider")
	mustFail(t, c, "/model anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY")
	if got := blockText(mustSubmit(t, c, "/model offline/other")); got != id+" uses offline/other from its next turn." {
		t.Fatalf("/model offline/other said %q", got)
	}
	ask(t, c, e, "What is 2+2?")
	history, _ := eng.Store.History(context.Background(), c.Current().ID)
	if last := history[len(history)-1]; last.Model != "offline/other" {
		t.Fatalf("the turn after /model used %q", last.Model)
	}
	mustSubmit(t, c, "/clear")
	// The setting survives a clear and a restart, and forks inherit it.
	again := openChat(t, testEngine(t, dataDir), c.Current().ID)
	if got := blockText(mustSubmit(t, again, "/model")); !strings.Contains(got, "uses offline/other") {
		t.Fatalf("after a restart /model said %q", got)
	}
	mustSubmit(t, again, "/fork")
	if got := blockText(mustSubmit(t, again, "/model")); !strings.Contains(got, "uses offline/other") {
		t.Fatalf("in a fork /model said %q", got)
	}
}

func TestHelpAndExit(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	help := blockText(mustSubmit(t, c, "/help"))
	for _, cmd := range Commands() {
		if !strings.Contains(help, "/"+cmd.Name) {
			t.Errorf("/help does not list /%s", cmd.Name)
		}
	}
	mustFail(t, c, "/help me", "/help takes no argument")
	for _, line := range []string{"/exit", "/quit"} {
		if r := mustSubmit(t, c, line); !r.Quit {
			t.Errorf("%s did not quit", line)
		}
	}
	mustFail(t, c, "/exit now", "/exit takes no argument")
	mustFail(t, c, "/nope", "unknown command /nope")
}

func TestTurnErrorIsReported(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	// A session whose model no longer exists (the configuration changed).
	sess, err := eng.Store.CreateSession(context.Background(), sa.NewSession{Model: "gone/model"})
	if err != nil {
		t.Fatal(err)
	}
	c := openChat(t, eng, sess.ID)
	e := collect(c)
	_, _, end := submit(t, c, e, "What is 2+2?")
	if end.Err == nil || !strings.Contains(end.Err.Error(), `unknown provider "gone"`) {
		t.Fatalf("the turn ended with %+v, want an unknown provider", end)
	}
	if got := blockText(mustSubmit(t, c, "/agents")); !strings.Contains(got, "failed") {
		t.Fatalf("/agents after a failed turn:\n%s", got)
	}
}

func TestCloseRemovesAnUnusedSession(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	ctx := context.Background()
	unused, err := Open(ctx, eng.options(""))
	if err != nil {
		t.Fatal(err)
	}
	id := unused.Current().ID
	if err := unused.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Store.Session(ctx, id); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("the unused session is still there: %v", err)
	}
	used := openChat(t, eng, "")
	e := collect(used)
	ask(t, used, e, "What is 2+2?")
	used.Close()
	if _, err := eng.Store.Session(ctx, used.Current().ID); err != nil {
		t.Fatalf("a session with messages was removed: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	ctx := context.Background()
	opts := eng.options("")
	opts.Agent = "nobody"
	if _, err := Open(ctx, opts); err == nil || !strings.Contains(err.Error(), "unknown agent") {
		t.Fatalf("Open with an unknown agent: %v", err)
	}
	if _, err := Open(ctx, eng.options("0000000000000000")); !errors.Is(err, sa.ErrNotFound) {
		t.Fatalf("Open of a missing session: %v", err)
	}
	if _, err := Open(ctx, Options{}); err == nil || !strings.Contains(err.Error(), "no runtime") {
		t.Fatalf("Open without a runtime: %v", err)
	}
}
