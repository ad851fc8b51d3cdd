package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/golden"
	"github.com/superagents/superagents/internal/repl"
	"github.com/superagents/superagents/internal/termtest"
)

// The tests here drive the real binary: in a real terminal (tmux) and
// through a pipe, with the offline model.

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// build compiles the command once for all the tests of this package.
func build(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "superagents-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "superagents")
		out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			binary = string(out)
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, binary)
	}
	return binary
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary != "" && buildErr == nil {
		os.RemoveAll(filepath.Dir(binary))
	}
	os.Exit(code)
}

// home is a user's world in temp dirs: the data directory, the config
// directory, a workspace; nothing of the real user's is touched.
type home struct {
	dir, workspace string
	env            []string
}

func newHome(t *testing.T) home {
	t.Helper()
	dir := t.TempDir()
	h := home{dir: dir, workspace: filepath.Join(dir, "work")}
	script := filepath.Join(dir, "script.toml")
	for _, err := range []error{os.Mkdir(h.workspace, 0o755), os.WriteFile(script, []byte(termtest.OfflineScript), 0o600)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	h.env = []string{
		"HOME=" + dir,
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"SUPERAGENTS_DATA_DIR=" + filepath.Join(dir, "data"),
		"SUPERAGENTS_OFFLINE_SCRIPT=" + script,
		"PATH=" + os.Getenv("PATH"),
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
	}
	return h
}

// terminal runs superagents with args in a 100×50 terminal.
func (h home) terminal(t *testing.T, args ...string) *termtest.Terminal {
	t.Helper()
	return h.terminalOf(t, 100, 50, args...)
}

// terminalOf runs superagents with args in a terminal of that size.
func (h home) terminalOf(t *testing.T, width, height int, args ...string) *termtest.Terminal {
	t.Helper()
	return termtest.Start(t, termtest.Options{Width: width, Height: height, Dir: h.workspace, Env: h.env,
		Args: append([]string{build(t)}, args...)})
}

// piped runs superagents with the input on standard input.
func (h home) piped(t *testing.T, input string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(build(t), args...)
	cmd.Dir, cmd.Env, cmd.Stdin = h.workspace, h.env, strings.NewReader(input)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// header matches an agent's header line and captures its short id.
var header = regexp.MustCompile(`(?m)^─{3,} agent \[([0-9a-z]{6})\.\.\.\] ─{3,}$`)

// headers returns the short ids of the headers on a screen, in order.
func headers(screen string) []string {
	var out []string
	for _, m := range header.FindAllStringSubmatch(screen, -1) {
		out = append(out, m[1])
	}
	return out
}

const recallQ1 = `Your first question was "What is 2+2?"`

// TestTerminalWalkthrough is FORK-HIST-4's transcript typed into a real
// terminal, with the multi-level part, then a restart with --continue.
func TestTerminalWalkthrough(t *testing.T) {
	h := newHome(t)
	term := h.terminal(t) // the chat is the default command
	screen := term.Wait("the first header", func(s string) bool { return len(headers(s)) == 1 })
	a := headers(screen)[0]

	term.Type("What is 2+2?")
	term.WaitText("2+2 equals 4.", 1)
	term.Type("What is 3+3?")
	term.WaitText("3+3 equals 6.", 1)
	term.Type("/fork")
	screen = term.WaitText("Forked from "+a+"...", 1)
	b := headers(screen)[1]
	if b == a {
		t.Fatalf("the fork's header shows the parent's id %s", a)
	}
	term.Type("What was my first question?")
	term.WaitText(recallQ1, 1)

	// Multi-level: B gets its own exchange, then C is forked from B.
	term.Type("What is 5+5?")
	term.WaitText("5+5 equals 10.", 1)
	term.Type("/fork")
	screen = term.WaitText("Forked from "+b+"...", 1)
	c := headers(screen)[2]
	term.Type("What was my first question?")
	term.WaitText(recallQ1, 2)

	term.Type("/agents")
	screen = term.WaitText("← current", 1)
	tree := treeLines(screen)
	want := []string{
		"agent [" + a + "...] idle",
		"└── agent [" + b + "...] idle",
		"    └── agent [" + c + "...] idle ← current",
	}
	if strings.Join(tree, "\n") != strings.Join(want, "\n") {
		t.Fatalf("/agents shows\n%s\nwant\n%s", strings.Join(tree, "\n"), strings.Join(want, "\n"))
	}

	term.Keys("C-c")
	term.WaitText("Press Ctrl+C again to exit", 1)
	term.Keys("C-c")
	if code := term.WaitExit(); code != 0 {
		t.Fatalf("exit status %d", code)
	}

	// Restart: the latest session is C; its tree and history come back.
	again := h.terminal(t, "chat", "--continue")
	screen = again.Wait("C's header", func(s string) bool { return len(headers(s)) > 0 })
	if got := headers(screen)[0]; got != c {
		t.Fatalf("--continue opened %s, want the grandchild %s", got, c)
	}
	again.Type("/agents")
	screen = again.WaitText("← current", 1)
	if got := treeLines(screen); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("/agents after the restart shows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	before := strings.Count(screen, recallQ1)
	again.Type("What was my first question?")
	again.WaitText(recallQ1, before+1)
	again.Type("/exit")
	if code := again.WaitExit(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}

// treeLines returns the last /agents output on a screen.
func treeLines(screen string) []string {
	lines := strings.Split(screen, "\n")
	end := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasSuffix(strings.TrimRight(lines[i], " "), "← current") {
			end = i
			break
		}
	}
	start := end
	for start > 0 && strings.Contains(lines[start-1], "agent [") && !header.MatchString(lines[start-1]) {
		start--
	}
	var out []string
	for _, l := range lines[max(start, 0) : end+1] {
		out = append(out, strings.TrimRight(l, " "))
	}
	return out
}

// TestTerminalCtrlC: Ctrl+C stops a running turn (its tool too) without
// preparing to exit; at the idle prompt it clears what was typed and says
// how to exit, a hint that goes when typing goes on; a second Ctrl+C at
// the empty prompt exits.
func TestTerminalCtrlC(t *testing.T) {
	const again = "Press Ctrl+C again to exit"
	h := newHome(t)
	term := h.terminal(t, "chat")
	term.Wait("the header", func(s string) bool { return len(headers(s)) == 1 })
	term.Type("please sleep")
	term.WaitText("→ bash sleep 30", 1)
	term.Keys("-l", "typed meanwhile")
	term.WaitText("> typed meanwhile", 1)
	term.Keys("C-c")
	screen := term.WaitText("Cancelled.", 1)
	if strings.Contains(screen, exitMark) || strings.Contains(screen, again) {
		t.Fatalf("the Ctrl+C that stopped the turn exited or prepares to:\n%s", screen)
	}
	term.Keys("C-c")
	term.Wait("the draft cleared and the hint", func(s string) bool {
		return !strings.Contains(s, "typed meanwhile") && strings.Contains(s, again)
	})
	// Typing takes the hint away (a view that shrank left it on the
	// screen), and the agent answers again after the cancel.
	term.Keys("-l", "What")
	term.Wait("the hint gone", func(s string) bool { return strings.Contains(s, "> What") && !strings.Contains(s, again) })
	term.Type(" is 2+2?")
	term.WaitText("2+2 equals 4.", 1)
	term.Keys("C-c")
	term.WaitText(again, 1)
	term.Keys("C-c")
	if code := term.WaitExit(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}

// TestTerminalHelpFits: on a narrow terminal /help is wrapped at word
// boundaries, with no blank rows between its lines.
func TestTerminalHelpFits(t *testing.T) {
	h := newHome(t)
	term := h.terminalOf(t, 80, 60)
	term.Wait("the header", func(s string) bool { return len(headers(s)) == 1 })
	term.Type("/help")
	screen := term.WaitText("Ctrl+D, leaves.", 1)
	first, last := strings.Index(screen, "Type a message to talk"), strings.Index(screen, "Ctrl+D, leaves.")
	if first < 0 || last < first {
		t.Fatalf("no /help on the screen:\n%s", screen)
	}
	help := screen[first:last]
	if strings.Contains(help, "\n\n") || strings.Contains(help, "\n \n") {
		t.Fatalf("blank rows in /help:\n%s", help)
	}
	words := strings.Join(strings.Fields(help), " ")
	for _, cmd := range repl.Commands() {
		if want := strings.Join(strings.Fields(cmd.Help), " "); !strings.Contains(words, want) {
			t.Errorf("/help does not show %q whole:\n%s", want, help)
		}
	}
}

// TestTerminalFirstStartNotice: the notice of the first start (no model
// configured) is shown whole, above the first header, and only once.
func TestTerminalFirstStartNotice(t *testing.T) {
	h := newHome(t)
	term := h.terminalOf(t, 80, 40)
	screen := term.Wait("the header", func(s string) bool { return len(headers(s)) == 1 })
	notice := strings.Index(screen, "No model is configured")
	end := strings.Index(screen, "to use a real model.")
	first := header.FindStringIndex(screen)
	if notice < 0 || end < notice || first[0] < end {
		t.Fatalf("the notice is not whole above the header:\n%s", screen)
	}
	term.Keys("C-d")
	term.WaitExit()
	again := h.terminalOf(t, 80, 40)
	screen = again.Wait("the header", func(s string) bool { return len(headers(s)) == 1 })
	if strings.Contains(screen, "No model is configured") {
		t.Fatalf("the notice is shown again:\n%s", screen)
	}
}

// TestTerminalKeepsTheScreenAbove: the chat starts below what the
// terminal showed, overwriting none of it, and what it prints stays in
// order, however soon the first line is typed.
func TestTerminalKeepsTheScreenAbove(t *testing.T) {
	h := newHome(t)
	term := termtest.Start(t, termtest.Options{Width: 80, Height: 20, Dir: h.workspace, Env: h.env,
		Args: []string{"/bin/sh", "-c", `for i in 1 2 3 4 5 6 7 8; do echo "shell line $i"; done; exec "$0"`, build(t)}})
	term.Wait("the header", func(s string) bool { return len(headers(s)) == 1 })
	term.Type("What is 2+2?")
	screen := term.WaitText("2+2 equals 4.", 1)
	var want []string
	for i := 1; i <= 8; i++ {
		want = append(want, fmt.Sprintf("shell line %d\n", i))
	}
	want = append(want, "No model is configured", "to use a real model.", "─ agent [", "> What is 2+2?", "2+2 equals 4.", "> ")
	at := 0
	for _, w := range want {
		i := strings.Index(screen[at:], w)
		if i < 0 {
			t.Fatalf("%q is missing or out of order; the screen:\n%s", w, screen)
		}
		at += i + len(w)
	}
	term.Keys("C-d")
	term.WaitExit()
}

// exitMark is what the terminal shows once the program has ended.
const exitMark = "[exited "

// TestTerminalHistoryKeys: the arrow keys bring back lines typed, also
// those of an earlier chat.
func TestTerminalHistoryKeys(t *testing.T) {
	h := newHome(t)
	term := h.terminal(t)
	term.Wait("the header", func(s string) bool { return len(headers(s)) == 1 })
	term.Type("What is 6*7?")
	term.WaitText("6*7 equals 42.", 1)
	term.Type("/exit")
	term.WaitExit()

	again := h.terminal(t)
	again.Wait("the header", func(s string) bool { return len(headers(s)) == 1 })
	again.Keys("Up", "Up", "Enter")
	again.WaitText("6*7 equals 42.", 1)
}

// TestPipedWalkthrough (FORK-HIST-4): the same script through a pipe gives a plain,
// deterministic transcript; --continue restores the tree.
func TestPipedWalkthrough(t *testing.T) {
	h := newHome(t)
	out, stderr, code := h.piped(t, termtest.WalkthroughScript)
	if code != 0 {
		t.Fatalf("exit status %d: %s", code, stderr)
	}
	if strings.Contains(out, "\x1b") {
		t.Fatalf("escape codes in piped output: %q", out)
	}
	golden.Check(t, "chat_piped.golden", []byte(termtest.NormalizeIDs(out)))

	out, stderr, code = h.piped(t, "/agents\nWhat was my first question?\n", "chat", "--continue")
	if code != 0 {
		t.Fatalf("exit status %d: %s", code, stderr)
	}
	golden.Check(t, "chat_continue.golden", []byte(termtest.NormalizeIDs(out)))

	out, stderr, code = h.piped(t, "/kill nope\n")
	if code != 1 || !strings.Contains(out, "error: no agent nope") || !strings.Contains(stderr, "1 line of the chat failed") {
		t.Fatalf("a failed line: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
}

// release lets the background tasks of the chat script end (they wait
// for this file in the workspace).
func (h home) release(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(h.workspace, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestTerminalBackgroundTask: the agent launches a background task; its
// progress shows in the status line; when it ends its notification is
// printed, and the agent, woken, answers it. Quitting while a task runs
// asks first.
func TestTerminalBackgroundTask(t *testing.T) {
	h := newHome(t)
	term := h.terminal(t)
	term.Wait("the header", func(s string) bool { return len(headers(s)) == 1 })
	term.Type("please delegate the sum")
	term.Wait("the turn's end, the task running", func(s string) bool {
		return strings.Contains(s, "Launched.") && strings.Contains(s, "1 background task running (add), 1 tool call") && !strings.Contains(s, "is working (Esc")
	})
	h.release(t)
	screen := term.WaitText(`Noted: ✓ Agent "add" finished in`, 1)
	launched, notice := strings.Index(screen, "Launched."), strings.Index(screen, `✓ Agent "add" finished in`)
	progress, answer := strings.Index(screen, "Task Progress: 1/1"), strings.Index(screen, "Noted: ✓")
	if !(launched < notice && notice < progress && progress < answer) {
		t.Fatalf("out of order:\n%s", screen)
	}

	// A task that runs when the user leaves: the chat asks first.
	if err := os.Remove(filepath.Join(h.workspace, "release")); err != nil {
		t.Fatal(err)
	}
	term.Type(`/task --desc waiter general wait for release, again`)
	term.WaitText("1 background task running (waiter)", 1)
	term.Type("/exit")
	term.WaitText("quitting stops it (it ends as interrupted). Type /exit again", 1)
	term.Type("/exit")
	if code := term.WaitExit(); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}

// TestPipedBackgroundTask: piped, the chat waits for the task once the
// input ends, and prints the notification and the woken answer.
func TestPipedBackgroundTask(t *testing.T) {
	h := newHome(t)
	cmd := exec.Command(build(t))
	cmd.Dir, cmd.Env = h.workspace, h.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out := &watchedOutput{t: t}
	cmd.Stdout = out
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	io.WriteString(stdin, "please delegate the sum\n")
	out.waitFor("Launched.")
	stdin.Close()
	out.waitFor("Waiting for 1 background task to end…")
	h.release(t)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	golden.Check(t, "chat_tasks.golden", []byte(termtest.NormalizeDurations(termtest.NormalizeIDs(out.String()))))
}

// watchedOutput is a process's output that the test reads as it comes.
type watchedOutput struct {
	t   *testing.T
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *watchedOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *watchedOutput) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// waitFor waits (a minute at most: more means the test hung) until the
// output holds text.
func (w *watchedOutput) waitFor(text string) {
	w.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(w.String(), text) {
		if time.Now().After(deadline) {
			w.t.Fatalf("no %q in the output:\n%s", text, w.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestChatFlags(t *testing.T) {
	h := newHome(t)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"chat", "--session", "abcd", "--continue"}, "--session and --continue together"},
		{[]string{"--continue", "--agent", "explore"}, "--agent starts a new chat"},
		{[]string{"chat", "--continue"}, "there is no session yet"},
		{[]string{"chat", "--session", "zzzzzz"}, "no session with id zzzzzz"},
		{[]string{"chat", "--agent", "nobody"}, "unknown agent"},
		{[]string{"chat", "--model", "nope/x"}, `unknown provider "nope"`},
		{[]string{"chat", "extra"}, "takes no arguments"},
	} {
		_, stderr, code := h.piped(t, "", tt.args...)
		if code != 2 && code != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("superagents %s: exit %d, stderr %q; want %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}
}
