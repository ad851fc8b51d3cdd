package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/superagents/superagents/internal/proctest"
	"github.com/superagents/superagents/internal/sandboxtest"
	"github.com/superagents/superagents/sandbox"
)

func TestBashResults(t *testing.T) {
	ws, set := newTestWorkspace(t, map[string]string{"hello.txt": "hi\n"}, Options{})
	tests := []struct {
		name    string
		command string
		want    string
		isError bool
	}{
		{"runs in the workspace", "cat hello.txt; pwd", "hi\n" + ws.Dir() + "\n[exit code 0]", false},
		{"stderr is kept", "echo out; echo err >&2", "out\nerr\n[exit code 0]", false},
		{"non-zero exit", "echo failing; exit 3", "failing\n[exit code 3]", true},
		{"no output", "true", "(no output)\n[exit code 0]", false},
		{"stdin is empty", "cat; echo done", "done\n[exit code 0]", false},
		// In the sandbox the command's shell is the child of the PID
		// namespace's first process, which reports its death by a
		// signal as a shell does.
		{"killed by a signal", "kill -TERM $$", "(no output)\n" + killedBySIGTERM(t), true},
		{"syntax error", "if then", "syntax error", true},
		{"empty command", "  ", "command is empty", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, set, Bash, obj{"command": tc.command})
			if res.IsError != tc.isError || !strings.Contains(res.Output, tc.want) {
				t.Errorf("got %+v\nwant %q (IsError=%v)", res, tc.want, tc.isError)
			}
		})
	}
}

// killedBySIGTERM is how a bash call killed by SIGTERM ends.
func killedBySIGTERM(t *testing.T) string {
	if sandboxtest.Isolates(t) {
		return "[exit code 143]"
	}
	return "[killed by signal terminated]"
}

func TestBashTimeoutArgument(t *testing.T) {
	_, set := newTestWorkspace(t, nil, Options{})
	for _, tc := range []struct {
		seconds int
		want    string
	}{
		{-1, "timeout_seconds must be positive"},
		{601, "timeout_seconds may be at most 600"},
	} {
		res := call(t, set, Bash, obj{"command": "true", "timeout_seconds": tc.seconds})
		if !res.IsError || res.Output != tc.want {
			t.Errorf("timeout %d: got %+v, want %q", tc.seconds, res, tc.want)
		}
	}
}

func TestBashHidesProviderKeys(t *testing.T) {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"ANTHROPIC_API_KEY=sk-ant-secret", "OPENAI_API_KEY=sk-openai-secret",
		"OPENROUTER_API_KEY=sk-or-secret", "ANTHROPIC_AUTH_TOKEN=token-secret",
		"SUPERAGENTS_TOKEN=api-token-secret", "SUPERAGENTS_DATABASE_URL=postgres://u:secret@db/sa",
		"KEEP_ME=visible", "PWD=/somewhere/else",
	}
	ws, set := newTestWorkspace(t, nil, Options{Bash: BashOptions{Env: env}})
	res := call(t, set, Bash, obj{"command": "env"})
	if strings.Contains(res.Output, "secret") {
		t.Errorf("a key reached the command:\n%s", res.Output)
	}
	for _, want := range []string{"KEEP_ME=visible", "PWD=" + ws.Dir()} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("env lacks %s:\n%s", want, res.Output)
		}
	}

	// The default environment is the process's own, less the same keys.
	t.Setenv("OPENAI_API_KEY", "sk-from-process-env")
	_, set = newTestWorkspace(t, nil, Options{})
	if res := call(t, set, Bash, obj{"command": "echo \"[$OPENAI_API_KEY]\""}); !strings.HasPrefix(res.Output, "[]\n") {
		t.Errorf("the process's key reached the command: %q", res.Output)
	}
}

// backgroundSleep is a script that leaves a sleep (of duration arg, see
// proctest.SleepArg) running in the command's process group, then waits.
func backgroundSleep(arg string) string {
	return `sleep ` + arg + ` & echo started; wait`
}

// bashProcessTests run the bash tool's process handling with the sandbox
// off (a process group) and on (a PID namespace of its own).
func bashProcessTests() []struct {
	name   string
	policy sandbox.Policy
} {
	return []struct {
		name   string
		policy sandbox.Policy
	}{{"unconfined", sandbox.Policy{Mode: sandbox.Off}}, {"sandboxed", sandbox.Policy{}}}
}

func TestBashTimeoutKillsTheProcessGroup(t *testing.T) {
	for _, tc := range bashProcessTests() {
		t.Run(tc.name, func(t *testing.T) {
			_, set := newTestWorkspace(t, nil, Options{Sandbox: tc.policy, Bash: BashOptions{Timeout: 300 * time.Millisecond}})
			arg := proctest.SleepArg(t)
			res := call(t, set, Bash, obj{"command": backgroundSleep(arg)})
			if !res.IsError || !strings.Contains(res.Output, "started\n[timed out after 300ms: the command and its processes were killed]") {
				t.Fatalf("got %+v", res)
			}
			proctest.WaitNoneFound(t, arg)
		})
	}
}

func TestBashLeavesNothingBehindOnExit(t *testing.T) {
	for _, tc := range bashProcessTests() {
		t.Run(tc.name, func(t *testing.T) {
			_, set := newTestWorkspace(t, nil, Options{Sandbox: tc.policy})
			arg := proctest.SleepArg(t)
			res := call(t, set, Bash, obj{"command": `sleep ` + arg + ` > /dev/null 2>&1 & echo bye`})
			if res.IsError || res.Output != "bye\n[exit code 0]" {
				t.Fatalf("got %+v", res)
			}
			proctest.WaitNoneFound(t, arg)
		})
	}
}

func TestBashCancelKillsTheProcessGroup(t *testing.T) {
	for _, tc := range bashProcessTests() {
		t.Run(tc.name, func(t *testing.T) {
			_, set := newTestWorkspace(t, nil, Options{Sandbox: tc.policy})
			arg := proctest.SleepArg(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			var res Result
			var err error
			go func() {
				defer close(done)
				res, err = set.Call(ctx, Bash, []byte(fmt.Sprintf(`{"command":%q}`, backgroundSleep(arg))))
			}()
			proctest.WaitFound(t, arg)
			cancel()
			<-done
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error = %v, want context.Canceled", err)
			}
			if !res.IsError || !strings.Contains(res.Output, "[cancelled: the command and its processes were killed]") {
				t.Errorf("result = %+v", res)
			}
			proctest.WaitNoneFound(t, arg)
		})
	}
}

// TestBashDoesNotHangOnEscapedProcess: a process that leaves the group
// (setsid) and keeps the output pipe open cannot block the call forever;
// in the sandbox it does not even outlive the call.
func TestBashDoesNotHangOnEscapedProcess(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	for _, tc := range bashProcessTests() {
		t.Run(tc.name, func(t *testing.T) {
			_, set := newTestWorkspace(t, nil, Options{Sandbox: tc.policy})
			arg := proctest.SleepArg(t)
			res := call(t, set, Bash, obj{"command": `setsid sh -c 'echo $$ > sleep.pid; exec sleep ` + arg + `' & while [ ! -s sleep.pid ]; do sleep 0.01; done; echo parent done`})
			if res.IsError || !strings.Contains(res.Output, "parent done\n[exit code 0]") {
				t.Errorf("got %+v", res)
			}
			if tc.policy.Mode == sandbox.Off {
				for _, pid := range proctest.Find(arg) {
					_ = unix.Kill(pid, unix.SIGKILL) // it escaped on purpose: clean up
				}
				return
			}
			sandboxtest.RequireIsolation(t)
			proctest.WaitNoneFound(t, arg)
		})
	}
}

func TestBashOutputCapKeepsHeadAndTail(t *testing.T) {
	_, set := newTestWorkspace(t, nil, Options{})
	res := call(t, set, Bash, obj{"command": `echo FIRST-LINE; yes 0123456789 | head -n 20000; echo LAST-LINE`})
	out := res.Output
	if !strings.HasPrefix(out, "FIRST-LINE\n") || !strings.HasSuffix(out, "LAST-LINE\n[exit code 0]") {
		t.Errorf("head or tail lost: %q ... %q", out[:40], out[len(out)-40:])
	}
	total := len("FIRST-LINE\n") + 20000*11 + len("LAST-LINE\n")
	cut := total - MaxBashOutputChars
	if marker := fmt.Sprintf("\n[... %d characters cut from the middle of the output ...]\n", cut); !strings.Contains(out, marker) {
		t.Errorf("no marker %q in the output", marker)
	}
	body := strings.TrimSuffix(out, "\n[exit code 0]")
	if n := len(body); n > MaxBashOutputChars+100 {
		t.Errorf("output has %d characters, above the cap", n)
	}
}

func TestHeadTail(t *testing.T) {
	const limit = 10
	for _, tc := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"fits", []string{"abc", "def"}, "abcdef"},
		{"exactly the limit", []string{"0123456789"}, "0123456789"},
		{"cut", []string{"abcdefghijklmnopqrstuvwxyz"}, "abcde\n[... 16 characters cut from the middle of the output ...]\nvwxyz"},
		{"cut across writes", []string{"abc", "defghijklmnop", "qrstuvwxyz"}, "abcde\n[... 16 characters cut from the middle of the output ...]\nvwxyz"},
		{"multi-byte characters", []string{"ééééé", "ü", "ààààà"}, "ééééé\n[... 1 characters cut from the middle of the output ...]\nààààà"},
		{"a character split between writes", []string{"a\xc3", "\xa9b"}, "aéb"},
		{"invalid UTF-8 becomes valid", []string{"a\xffb"}, "a\uFFFDb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHeadTail(limit)
			for _, w := range tc.writes {
				if n, err := h.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got := h.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("long stream in small writes", func(t *testing.T) {
		h := newHeadTail(limit)
		total := 0
		for i := range 100_000 {
			s := strconv.Itoa(i % 10)
			h.Write([]byte(s))
			total += len(s)
		}
		want := fmt.Sprintf("01234\n[... %d characters cut from the middle of the output ...]\n56789", total-10)
		if got := h.String(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		if cap(h.tail) > 4*h.tailCap {
			t.Errorf("tail buffer grew to %d bytes", cap(h.tail))
		}
	})
}
