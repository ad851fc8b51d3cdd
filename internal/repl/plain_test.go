package repl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/golden"
	"github.com/superagents/superagents/internal/termtest"
)

// runPlain runs a piped chat and returns its transcript.
func runPlain(t *testing.T, c *Chat, input string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := RunPlain(context.Background(), c, strings.NewReader(input), &out)
	return out.String(), err
}

func TestPlainWalkthrough(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	out, err := runPlain(t, openChat(t, eng, ""), termtest.WalkthroughScript)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"> What is 2+2?\n\n2+2 equals 4.\n\n",
		"> What is 3+3?\n\n3+3 equals 6.\n\n",
		"> /fork\n\n─",
		"> What was my first question?\n\nYour first question was \"What is 2+2?\"\n\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, `Your first question was "What is 2+2?"`); n != 2 {
		t.Errorf("the child and the grandchild should both recall Q1; %d did:\n%s", n, out)
	}
	golden.Check(t, "walkthrough.golden", []byte(termtest.NormalizeIDs(out)))
}

// TestPlainRestart: a new chat on the latest session restores the tree and
// the history of every agent.
func TestPlainRestart(t *testing.T) {
	dataDir := t.TempDir()
	eng := testEngine(t, dataDir)
	first := openChat(t, eng, "")
	if _, err := runPlain(t, first, termtest.WalkthroughScript); err != nil {
		t.Fatal(err)
	}
	before := blockText(first.Submit(context.Background(), "/agents"))

	latest, err := LatestSession(context.Background(), eng.Store)
	if err != nil {
		t.Fatal(err)
	}
	if latest.ID != first.Current().ID {
		t.Fatalf("latest session = %s, want the grandchild %s the chat ended on", latest.ID, first.Current().ID)
	}
	second := openChat(t, testEngine(t, dataDir), latest.ID)
	out, err := runPlain(t, second, "/agents\nWhat was my first question?\n/parent\nWhat was my last question?\n")
	if err != nil {
		t.Fatal(err)
	}
	if after := blockText(second.Submit(context.Background(), "/switch "+latest.ID)); !strings.Contains(after, "header") {
		t.Fatalf("switch back: %s", after)
	}
	if got := blockText(second.Submit(context.Background(), "/agents")); got != before {
		t.Errorf("tree after the restart:\n%s\nwant\n%s", got, before)
	}
	golden.Check(t, "restart.golden", []byte(termtest.NormalizeIDs(out)))
}

func TestPlainFailuresSetTheResult(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	out, err := runPlain(t, openChat(t, eng, ""), "/bogus\n\nWhat is 1+1?\n/kill\nbreak something\n")
	if err == nil || !strings.Contains(err.Error(), "2 lines of the chat failed") {
		t.Fatalf("err = %v, want 2 failed lines", err)
	}
	for _, want := range []string{"> /bogus\n\nerror: unknown command /bogus", "1+1 equals 2.", "error: /kill needs an argument", "✗ bash: broken [exit code 3]"} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsFunc(out, isControl) {
		t.Errorf("piped output has escape codes or control characters:\n%q", out)
	}
}

func TestPlainExitStopsReading(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	out, err := runPlain(t, openChat(t, eng, ""), "What is 1+1?\n/exit\nWhat is 2+2?\n")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "2+2") {
		t.Fatalf("a line after /exit was read:\n%s", out)
	}
}

func TestPlainInterrupted(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	var out bytes.Buffer
	go func() { done <- RunPlain(ctx, c, r, &out) }()
	w.Write([]byte("What is 1+1?\n"))
	cancel()
	if err := <-done; !errors.Is(err, ErrInterrupted) {
		t.Fatalf("RunPlain after cancel = %v, want ErrInterrupted", err)
	}
	w.Close()
}

// syncBuffer is an output that a test reads while RunPlain writes it.
type syncBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	signal chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{signal: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	defer func() {
		select {
		case b.signal <- struct{}{}:
		default:
		}
	}()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the output holds text; a minute without it means
// the test hung.
func (b *syncBuffer) waitFor(t *testing.T, text string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for !strings.Contains(b.String(), text) {
		select {
		case <-b.signal:
		case <-timeout:
			t.Fatalf("no %q in the output:\n%s", text, b.String())
		}
	}
}

// pipedChat runs a piped chat whose input the test writes line by line.
type pipedChat struct {
	in   *io.PipeWriter
	out  *syncBuffer
	done chan error
}

func startPlain(t *testing.T, c *Chat) *pipedChat {
	t.Helper()
	r, w := io.Pipe()
	p := &pipedChat{in: w, out: newSyncBuffer(), done: make(chan error, 1)}
	go func() { p.done <- RunPlain(context.Background(), c, r, p.out) }()
	t.Cleanup(func() { w.Close() })
	return p
}

func (p *pipedChat) line(t *testing.T, text string) {
	t.Helper()
	if _, err := io.WriteString(p.in, text+"\n"); err != nil {
		t.Fatal(err)
	}
}

// end closes the input and returns what RunPlain returned.
func (p *pipedChat) end() error {
	p.in.Close()
	return <-p.done
}

// TestPlainWaitsForTasks: when the input ends, the piped chat waits for
// the task, prints its notification, and the turn it wakes.
func TestPlainWaitsForTasks(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	p := startPlain(t, openChat(t, eng, ""))
	p.line(t, "please delegate the sum")
	p.out.waitFor(t, "Launched.\n\n")
	p.in.Close()
	p.out.waitFor(t, "Waiting for 1 background task to end…")
	eng.release(t)
	if err := <-p.done; err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "tasks.golden", []byte(termtest.NormalizeDurations(termtest.NormalizeIDs(p.out.String()))))
}

// TestPlainStreamedEscapes: an escape sequence split between two pieces
// of a streamed answer is removed whole.
func TestPlainStreamedEscapes(t *testing.T) {
	c := openChat(t, testEngine(t, t.TempDir()), "")
	var out bytes.Buffer
	p := &plainPrinter{chat: c, w: &writer{out: &out, style: plainStyle{}}, turns: map[*Turn]*turnTranscript{}}
	turn := &Turn{}
	id := c.Current().ID
	for _, e := range []Event{
		{Kind: TurnStart}, {Kind: TurnText, Text: "a \x1b[3"}, {Kind: TurnText, Text: "1mred\x1b"}, {Kind: TurnText, Text: "[0m word"},
		{Kind: TurnTool, Text: "→ bash ls"}, {Kind: TurnText, Text: "done"}, {Kind: TurnEnd},
	} {
		e.Session, e.turn = id, turn
		p.event(e)
	}
	if want := "a red word\n\n→ bash ls\n\ndone\n\n"; out.String() != want {
		t.Fatalf("transcript %q, want %q", out.String(), want)
	}
}

// TestPlainLineWaitsForAWake: a line typed while the agent in view runs a
// turn its tasks woke is carried out after that turn, not refused: a
// script cannot tell when an agent is busy.
func TestPlainLineWaitsForAWake(t *testing.T) {
	// Woken, the model runs a command that waits for a file named
	// wake-release, so the test decides when the wake ends.
	eng := scriptedEngine(t, t.TempDir(), `
[[rules]]
contains = "finished in"
step = 1
tool_calls = [{ name = "bash", input = { command = "while [ ! -e wake-release ]; do sleep 0.02; done; echo woken" } }]
`)
	c := openChat(t, eng, "")
	p := startPlain(t, c)
	p.line(t, "please delegate the sum")
	p.out.waitFor(t, "Launched.\n\n")
	eng.release(t)
	p.out.waitFor(t, `✓ Agent "add" finished in`)
	deadline := time.Now().Add(time.Minute)
	for c.runningTurn(c.Current().ID) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the agent was not woken:\n%s", p.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A command that does not need the agent idle does not wait.
	p.line(t, "/agents")
	p.out.waitFor(t, "working ← current")
	p.line(t, "What is 2+2?")
	time.Sleep(200 * time.Millisecond) // time enough to be refused
	if out := p.out.String(); strings.Contains(out, "2+2") || strings.Contains(out, "still working") {
		t.Fatalf("the line did not wait for the wake:\n%s", out)
	}
	if err := os.WriteFile(filepath.Join(eng.ws, "wake-release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.end(); err != nil {
		t.Fatalf("%v:\n%s", err, p.out.String())
	}
	out := p.out.String()
	woken, asked := strings.Index(out, "→ bash while"), strings.Index(out, "> What is 2+2?\n\n2+2 equals 4.\n\n")
	if woken < 0 || asked < woken {
		t.Fatalf("want the wake, then the line and its answer:\n%s", out)
	}
}

// TestPlainNoticeDuringTheLine: the notification of a task of the agent
// answering the line is printed when it comes, not after the answer,
// which may read it.
func TestPlainNoticeDuringTheLine(t *testing.T) {
	eng := scriptedEngine(t, t.TempDir(), `
[[rules]]
contains = "slow question"
step = 1
tool_calls = [{ name = "bash", input = { command = "while [ ! -e answer-release ]; do sleep 0.02; done" } }]
`)
	p := startPlain(t, openChat(t, eng, ""))
	p.line(t, `/task --desc add general "wait for release"`)
	p.line(t, "a slow question")
	p.out.waitFor(t, "> a slow question")
	eng.release(t)
	// The line's turn still runs: the notification is there already.
	p.out.waitFor(t, `✓ Agent "add" finished in`)
	if err := os.WriteFile(filepath.Join(eng.ws, "answer-release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := p.end(); err != nil {
		t.Fatalf("%v:\n%s", err, p.out.String())
	}
	out := p.out.String()
	if line, notice, answer := strings.Index(out, "> a slow question"), strings.Index(out, `✓ Agent "add"`), strings.Index(out, "→ bash while"); line < 0 || notice < line || answer < notice {
		t.Fatalf("want the line, the notification, then the answer:\n%s", out)
	}
}

// TestPlainNoticeOutOfView: the notification of an agent out of view, and
// the turn it wakes, name the agent.
func TestPlainNoticeOutOfView(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	p := startPlain(t, c)
	p.line(t, "/fork")
	p.line(t, "please delegate the sum")
	p.line(t, "/parent")
	p.out.waitFor(t, "> /parent")
	child := c.agentIDs()
	eng.release(t)
	if err := p.end(); err != nil {
		t.Fatal(err)
	}
	out := p.out.String()
	var label string
	for _, id := range child {
		if id != c.Current().ID {
			label = "agent [" + sa.ShortID(id) + "]"
		}
	}
	for _, want := range []string{
		label + `: ✓ Agent "add" finished in `,
		label + ":\nNoted: ✓ Agent \"add\" finished in ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, out)
		}
	}
	if i, j := strings.Index(out, label+": ✓"), strings.Index(out, label+":\nNoted"); i < 0 || j < i {
		t.Errorf("the wake is printed before the notification:\n%s", out)
	}
}

// TestPlainExit: /exit waits for the tasks like the end of input, within
// the settle limit; /exit! does not wait.
func TestPlainExit(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	opts := eng.options("")
	opts.SettleLimit = 200 * time.Millisecond
	c, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := runPlain(t, c, "please delegate the sum\n/exit\nWhat is 2+2?\n")
	if err == nil || !strings.Contains(err.Error(), "1 line of the chat failed") {
		t.Fatalf("err = %v", err)
	}
	want := "Waiting for 1 background task to end…\n\nerror: gave up waiting for the background tasks after 200ms: 1 background task is still running: quitting stops it (it ends as interrupted).\n\n"
	if !strings.HasSuffix(out, want) || strings.Contains(out, "2+2") {
		t.Fatalf("the transcript:\n%s", out)
	}

	c2 := openChat(t, eng, "")
	out, err = runPlain(t, c2, "please delegate the sum\n/exit!\n")
	if err != nil || !strings.HasSuffix(out, "> /exit!\n\n") {
		t.Fatalf("/exit!: %v\n%s", err, out)
	}
	if n := c2.RunningTasks(); n != 1 {
		t.Fatalf("%d tasks running after /exit!, want the one left running", n)
	}
	eng.release(t)
	settle(t, c)
	settle(t, c2)
}
