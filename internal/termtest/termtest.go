// Package termtest runs programs in a real terminal for tests: a private
// tmux server that the test types into (send-keys) and reads the screen
// of (capture-pane). Tests that need it skip when tmux is not installed.
package termtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// exitMark is printed after the program ends, with its exit status.
const exitMark = "[exited "

// waitLimit is how long Wait waits before the test fails. It is generous:
// it bounds a hung test, it does not measure speed.
const waitLimit = 60 * time.Second

// Terminal is one program running in a tmux window.
type Terminal struct {
	t      testing.TB
	socket string
}

// Options describe the terminal and the program.
type Options struct {
	Width, Height int
	// Dir is the program's working directory.
	Dir string
	// Env is the program's whole environment (nothing else is inherited).
	Env []string
	// Args is the program and its arguments.
	Args []string
}

// Start runs a program in a new terminal, which the test's cleanup kills.
// It skips the test when tmux is missing, or fails it when
// SUPERAGENTS_REQUIRE_TMUX=1 (scripts/test installs tmux and sets it).
func Start(t testing.TB, o Options) *Terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("SUPERAGENTS_REQUIRE_TMUX") == "1" {
			t.Fatal("tmux is not installed, and SUPERAGENTS_REQUIRE_TMUX=1 requires the terminal tests")
		}
		t.Skip("tmux is not installed (apt-get install tmux): the terminal tests need it")
	}
	term := &Terminal{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	// env -i: the program sees exactly o.Env. After it ends the window
	// stays, so its last screen and exit status can be read.
	script := "cd " + quote(o.Dir) + " && env -i " + quoteAll(o.Env) + " " + quoteAll(o.Args) +
		"; echo \"" + exitMark + "$?]\"; sleep 600"
	term.tmux("-f", "/dev/null", "new-session", "-d", "-s", "test",
		"-x", fmt.Sprint(o.Width), "-y", fmt.Sprint(o.Height), script)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", term.socket, "kill-server").Run() })
	return term
}

func (term *Terminal) tmux(args ...string) string {
	term.t.Helper()
	cmd := exec.Command("tmux", append([]string{"-S", term.socket}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		term.t.Fatalf("tmux %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// Type types text as it is, then presses Enter.
func (term *Terminal) Type(text string) {
	term.t.Helper()
	term.tmux("send-keys", "-t", "test", "-l", text)
	term.Keys("Enter")
}

// Keys presses keys by their tmux names: "Enter", "C-c", "Up", "Escape".
func (term *Terminal) Keys(keys ...string) {
	term.t.Helper()
	term.tmux(append([]string{"send-keys", "-t", "test"}, keys...)...)
}

// Screen returns the screen and the scrollback above it.
func (term *Terminal) Screen() string {
	term.t.Helper()
	return term.tmux("capture-pane", "-p", "-t", "test", "-S", "-")
}

// Wait waits until the screen satisfies ok and returns it; the test fails
// with the screen when it does not come.
func (term *Terminal) Wait(what string, ok func(screen string) bool) string {
	term.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		screen := term.Screen()
		if ok(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("waited %v for %s; the screen:\n%s", waitLimit, what, screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitText waits until text is on the screen count times.
func (term *Terminal) WaitText(text string, count int) string {
	term.t.Helper()
	return term.Wait(fmt.Sprintf("%q ×%d", text, count), func(s string) bool { return strings.Count(s, text) >= count })
}

// WaitExit waits for the program to end and returns its exit status.
func (term *Terminal) WaitExit() int {
	term.t.Helper()
	screen := term.WaitText(exitMark, 1)
	var code int
	rest := screen[strings.Index(screen, exitMark)+len(exitMark):]
	if _, err := fmt.Sscanf(rest, "%d]", &code); err != nil {
		term.t.Fatalf("read the exit status in %q: %v", rest, err)
	}
	return code
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func quoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = quote(a)
	}
	return strings.Join(q, " ")
}

// ids matches a session id, whole or shortened ("abc123...").
var ids = regexp.MustCompile(`\b([0-9a-z]{6})([0-9a-z]{10}\b|\.\.\.)`)

// NormalizeIDs replaces session ids by agentA, agentB... in order of
// appearance, keeping their length, so that transcripts compare across
// runs.
func NormalizeIDs(s string) string {
	names := map[string]string{}
	return ids.ReplaceAllStringFunc(s, func(m string) string {
		prefix, rest := m[:6], m[6:]
		n, ok := names[prefix]
		if !ok {
			n = fmt.Sprintf("agent%c", 'A'+len(names))
			names[prefix] = n
		}
		if rest != "..." {
			rest = strings.Repeat("_", len(rest))
		}
		return n + rest
	})
}

// OfflineScript is an offline model script for chat tests: asked to
// sleep, the model runs "sleep 30" (a turn to cancel); asked to list, it
// runs "echo one two"; asked to break something, it runs a command that
// clears the screen, prints "broken" in red and fails. Asked to delegate,
// it launches a background task ("delegate three": three at once) and
// says "Launched."; each task waits until a file named release exists in
// the workspace, so that a test decides when the tasks end. Woken by the notification, the model
// answers "Noted: " and the notification's first line.
const OfflineScript = `
[[rules]]
contains = "sleep"
step = 1
reply = "Sleeping now."
tool_calls = [{ name = "bash", input = { command = "sleep 30" } }]

[[rules]]
contains = "break something"
step = 1
reply = "Trying."
tool_calls = [{ name = "bash", input = { command = "printf '\u001b[2J\u001b[31mbroken\u001b[0m\r\n'; exit 3" } }]

[[rules]]
contains = "list"
step = 1
reply = "Let me look."
tool_calls = [{ name = "bash", input = { command = "echo one two" } }]

[[rules]]
contains = "delegate three"
step = 1
tool_calls = [
  { name = "superagents_task", input = { description = "one", prompt = "wait for release", agent = "general" } },
  { name = "superagents_task", input = { description = "two", prompt = "wait for release", agent = "general" } },
  { name = "superagents_task", input = { description = "three", prompt = "wait for release", agent = "general" } },
]

[[rules]]
contains = "delegate"
step = 1
tool_calls = [{ name = "superagents_task", input = { description = "add", prompt = "wait for release", agent = "general" } }]

[[rules]]
after_tool = "superagents_task"
reply = "Launched."

[[rules]]
contains = "wait for release"
step = 1
tool_calls = [{ name = "bash", input = { command = "while [ ! -e release ]; do sleep 0.02; done; echo released" } }]
`

// WalkthroughScript is the chat of FORK-HIST-4 with its multi-level part: A gets
// Q1 and Q2, B is forked from A and gets Q3, C is forked from B, and both
// children recall A's first question.
const WalkthroughScript = `What is 2+2?
What is 3+3?
/fork
What was my first question?
What is 5+5?
/fork
What was my first question?
/agents
`

// durations matches how long a task took in its notification: "in 3s",
// "after 1m 2s".
var durations = regexp.MustCompile(`\b(in|after) (\d+h )?(\d+m )?\d+s\b`)

// NormalizeDurations replaces those durations by "N s", so that
// transcripts compare across runs.
func NormalizeDurations(s string) string { return durations.ReplaceAllString(s, "$1 Ns") }
