package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/superagents/superagents/internal/proctest"
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
		{"killed by a signal", "kill -TERM $$", "(no output)\n[killed by signal terminated]", true},
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

// startBackgroundSleep is a script that leaves a sleep running in the
// command's process group, records its pid, then waits.
const startBackgroundSleep = `sleep 300 & echo $! > sleep.pid; echo started; wait`

func TestBashTimeoutKillsTheProcessGroup(t *testing.T) {
	ws, set := newTestWorkspace(t, nil, Options{Bash: BashOptions{Timeout: 300 * time.Millisecond}})
	res := call(t, set, Bash, obj{"command": startBackgroundSleep})
	if !res.IsError || !strings.Contains(res.Output, "started\n[timed out after 300ms: the command and its processes were killed]") {
		t.Fatalf("got %+v", res)
	}
	proctest.WaitGone(t, readPid(t, ws))
}

func TestBashLeavesNothingBehindOnExit(t *testing.T) {
	ws, set := newTestWorkspace(t, nil, Options{})
	res := call(t, set, Bash, obj{"command": `sleep 300 > /dev/null 2>&1 & echo $! > sleep.pid; echo bye`})
	if res.IsError || res.Output != "bye\n[exit code 0]" {
		t.Fatalf("got %+v", res)
	}
	proctest.WaitGone(t, readPid(t, ws))
}

func TestBashCancelKillsTheProcessGroup(t *testing.T) {
	ws, set := newTestWorkspace(t, nil, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	var res Result
	var err error
	go func() {
		defer close(done)
		res, err = set.Call(ctx, Bash, []byte(fmt.Sprintf(`{"command":%q}`, startBackgroundSleep)))
	}()
	pid := waitForPid(t, ws)
	cancel()
	<-done
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if !res.IsError || !strings.Contains(res.Output, "[cancelled: the command and its processes were killed]") {
		t.Errorf("result = %+v", res)
	}
	proctest.WaitGone(t, pid)
}

// TestBashDoesNotHangOnEscapedProcess: a process that leaves the group
// (setsid) and keeps the output pipe open cannot block the call forever.
func TestBashDoesNotHangOnEscapedProcess(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	ws, set := newTestWorkspace(t, nil, Options{})
	res := call(t, set, Bash, obj{"command": `setsid sh -c 'echo $$ > sleep.pid; exec sleep 300' & while [ ! -s sleep.pid ]; do sleep 0.01; done; echo parent done`})
	pid := readPid(t, ws)
	_ = unix.Kill(pid, unix.SIGKILL) // it escaped on purpose: clean up
	if res.IsError || !strings.Contains(res.Output, "parent done\n[exit code 0]") {
		t.Errorf("got %+v", res)
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

func readPid(t *testing.T, ws *Workspace) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ws.Dir(), "sleep.pid"))
	must(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	must(t, err)
	return pid
}

// waitForPid waits until the script has written its child's pid.
func waitForPid(t *testing.T, ws *Workspace) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(filepath.Join(ws.Dir(), "sleep.pid")); err == nil && strings.HasSuffix(string(data), "\n") {
			return readPid(t, ws)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the command never wrote its pid")
	return 0
}
