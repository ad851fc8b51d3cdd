package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/cli"
	"github.com/superagents/superagents/internal/frontends"
	"github.com/superagents/superagents/internal/proctest"
	"github.com/superagents/superagents/internal/sandboxtest"
)

// delegateScript makes the offline model hand arithmetic to a background
// task and acknowledge it; the task waits until a file named release
// exists in the workspace, then answers with the built-in arithmetic, and
// the woken parent with the built-in acknowledgement. Asked to delegate
// and check, the parent releases the task itself and waits for its end
// within its turn, so that it acknowledges the notification in the same
// turn.
const delegateScript = `
[[rules]]
contains = "delegate"
step = 1
tool_calls = [{ name = "superagents_task", input = { description = "add", prompt = "What is 2+2? (wait for release)", agent = "general" } }]

[[rules]]
contains = "and check"
after_tool = "superagents_task"
tool_calls = [
  { name = "bash", input = { command = "touch release" } },
  { name = "superagents_output", input = { task_id = '{{slice (tool_result "superagents_task") 5 21}}', block = true } },
]

[[rules]]
after_tool = "superagents_task"
reply = "Launched."

[[rules]]
contains = "wait for release"
step = 1
tool_calls = [{ name = "bash", input = { command = "while [ ! -e release ]; do sleep 0.02; done" } }]

[[rules]]
contains = "wait for release"
after_tool = "bash"
reply = "2+2 equals 4."

[[rules]]
contains = "sleep please"
step = 1
tool_calls = [{ name = "bash", input = { command = "echo SLEEP_ARG > sleeper.pid; sleep SLEEP_ARG", timeout_seconds = 300 } }]
`

// writeScript writes the offline model's script. Its sleeper's command
// writes its sleep's duration, unique to the script (proctest.SleepArg),
// which marks it in the process list: in the sandbox, the pids a command
// sees are its PID namespace's.
func writeScript(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.toml")
	script := strings.ReplaceAll(delegateScript, "SLEEP_ARG", proctest.SleepArg(t))
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// notice matches the first line of the task's notification.
var notice = regexp.MustCompile(`^✓ Agent "add" finished in \d+s\.$`)

// TestRunWaitForTasks: run --wait prints the answer, then the task's
// notification when it ends, then the answer of the agent it woke.
func TestRunWaitForTasks(t *testing.T) {
	h := newHarness(t)
	h.env["SUPERAGENTS_OFFLINE_SCRIPT"] = writeScript(t)
	ws := t.TempDir()
	var stdout, stderr syncBuffer
	exited := make(chan int, 1)
	go func() {
		exited <- frontends.Main(context.Background(), []string{"run", "--workspace", ws, "--wait", "please delegate the sum"}, cli.Env{
			Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
			Getenv: func(k string) string { return h.env[k] },
		})
	}()
	// The task ends once the parent's turn has: it waits for release.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(stdout.String(), "Launched.") {
		if time.Now().After(deadline) {
			t.Fatalf("no answer: stdout %q, stderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(ws, "release"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := <-exited; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := strings.TrimSpace(stdout.String())
	lines := strings.Split(out, "\n")
	if len(lines) != 4 || lines[0] != "Launched." || !notice.MatchString(lines[1]) ||
		lines[2] != "Task Progress: 1/1" || !strings.HasPrefix(lines[3], `Noted: ✓ Agent "add" finished in`) {
		t.Fatalf("run --wait printed:\n%s", out)
	}
	// The task's result is there to read.
	var list []struct {
		ID     string `json:"id"`
		Status string `json:"status"`
		Result string `json:"result"`
	}
	if err := json.Unmarshal([]byte(h.ok("", "tasks", "--json")), &list); err != nil || len(list) != 1 {
		t.Fatalf("tasks --json: %v %v", list, err)
	}
	if list[0].Status != "completed" || list[0].Result != "2+2 equals 4." {
		t.Fatalf("task = %+v", list[0])
	}
	table := h.ok("", "tasks")
	if !strings.Contains(table, list[0].ID[:6]+"...") || !strings.Contains(table, "completed") {
		t.Fatalf("tasks table:\n%s", table)
	}
	if got := h.ok("", "task", "output", list[0].ID[:8]); !strings.Contains(got, "2+2 equals 4.") {
		t.Fatalf("task output = %q", got)
	}
}

// TestRunWaitNotificationInTheTurn: a notification the turn read before
// its answer is printed before that answer, plain or as JSON.
func TestRunWaitNotificationInTheTurn(t *testing.T) {
	h := newHarness(t)
	h.env["SUPERAGENTS_OFFLINE_SCRIPT"] = writeScript(t)
	out := h.ok("", "run", "--workspace", t.TempDir(), "--wait", "please delegate and check")
	lines := strings.Split(out, "\n")
	if len(lines) != 3 || !notice.MatchString(lines[0]) || lines[1] != "Task Progress: 1/1" || lines[2] != "Noted: "+lines[0] {
		t.Fatalf("run --wait printed:\n%s", out)
	}

	out = h.ok("", "run", "--workspace", t.TempDir(), "--wait", "--json", "please delegate and check")
	var types []string
	for _, line := range strings.Split(out, "\n") {
		var e struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		if e.Type == "notification" || e.Type == "done" {
			types = append(types, e.Type+" "+strings.SplitN(e.Text, "\n", 2)[0])
		}
	}
	if len(types) != 2 || !notice.MatchString(strings.TrimPrefix(types[0], "notification ")) || types[1] != "done Noted: "+strings.TrimPrefix(types[0], "notification ") {
		t.Fatalf("run --wait --json: %q in\n%s", types, out)
	}
}

func TestRunWithoutWaitWarnsAboutStoppedTasks(t *testing.T) {
	h := newHarness(t)
	script := filepath.Join(t.TempDir(), "s.toml")
	// The child sleeps, so it is still running when run exits.
	err := os.WriteFile(script, []byte(`
[[rules]]
contains = "delegate"
step = 1
tool_calls = [{ name = "superagents_task", input = { description = "slow", prompt = "sleep please", agent = "general" } }]
[[rules]]
after_tool = "superagents_task"
reply = "Launched."
[[rules]]
contains = "sleep please"
step = 1
tool_calls = [{ name = "bash", input = { command = "sleep 60" } }]
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	h.env["SUPERAGENTS_OFFLINE_SCRIPT"] = script
	r := h.runIn("", "run", "--workspace", t.TempDir(), "delegate it")
	if r.code != 0 || !strings.Contains(r.stderr, "1 background task(s) of this session stop now that run exits") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	out := h.ok("", "tasks", "--json")
	if !strings.Contains(out, `"status": "error"`) || !strings.Contains(out, "superagents stopped") {
		t.Fatalf("the stopped task = %s", out)
	}
}

func TestTaskCommandErrors(t *testing.T) {
	h := newHarness(t)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"task", "output", "zzzzzz"}, 1, "no task with id zzzzzz"},
		{[]string{"task", "output", "abc"}, 2, "too short"},
		{[]string{"task", "cancel"}, 2, "takes one task id"},
		{[]string{"task", "launch", "--agent", "general", "x"}, 2, "--session is required"},
		{[]string{"task", "resume", "abcd"}, 2, "requires at least 2 arg"},
		{[]string{"task", "launch", "--session", "s", "--agent", "general", "--description", "d", "--max-cost", "-1", "x"}, 2, "--max-cost must be a number of dollars"},
		{[]string{"task", "launch", "--session", "s", "--agent", "general", "--description", "d", "--max-tokens", "-5", "x"}, 2, "--max-tokens cannot be negative"},
		{[]string{"task", "launch", "--session", "s", "--agent", "general", "--description", "d", "--isolation", "vm", "x"}, 2, `--isolation "vm" is unknown`},
		{[]string{"tasks", "--status", "sleeping"}, 2, `unknown --status "sleeping"`},
		{[]string{"tasks", "--status", "Completed"}, 0, ""}, // case does not matter
		{[]string{"task", "output", "zzzzzz", "--timeout", "-1"}, 2, "--timeout must be between 1 and 600 seconds, not -1"},
		{[]string{"task", "output", "zzzzzz", "--timeout", "0"}, 2, "--timeout must be between 1 and 600 seconds, not 0"},
		{[]string{"task", "output", "zzzzzz", "--timeout", "601"}, 2, "--timeout must be between 1 and 600 seconds, not 601"},
	}
	for _, tt := range tests {
		r := h.run(tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, r.code, r.stderr, tt.code, tt.want)
		}
	}
}

// TestTaskLaunchBudget: --max-tokens holds the task's tree to a budget;
// the offline model reports the tokens it would have used, so a small one
// is reached at the first answer and the task ends as an error saying so.
func TestTaskLaunchBudget(t *testing.T) {
	h := newHarness(t)
	parent := h.ok(seedParent, "import", "-")
	r := h.run("task", "launch", "--session", parent, "--agent", "general", "--description", "small", "--max-tokens", "10", "--wait", "--json", "What is 2+2?")
	var task struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Budget struct {
			MaxTokens int64 `json:"max_tokens"`
		} `json:"budget"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &task); err != nil {
		t.Fatalf("task launch --json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	if task.Status != "error" || !strings.Contains(task.Error, "budget reached") || task.Budget.MaxTokens != 10 {
		t.Fatalf("task = %+v, want an error for its budget of 10 tokens", task)
	}
}

// TestTaskLaunchWorktree: --isolation worktree runs the task in a git
// worktree of its own in the data directory; one that changed nothing
// leaves none. A workspace that is no repository is refused.
func TestTaskLaunchWorktree(t *testing.T) {
	h := newHarness(t)
	parent := h.ok(seedParent, "import", "-")
	repo := t.TempDir()
	launch := func() result {
		return h.run("--workspace", repo, "task", "launch", "--session", parent, "--agent", "general", "--description", "apart",
			"--isolation", "worktree", "--wait", "--json", "What is 2+2?")
	}
	if r := launch(); r.code == 0 || !strings.Contains(r.stderr, "is not inside a git repository") {
		t.Fatalf("launch in a workspace without a repository: exit %d, stderr %q", r.code, r.stderr)
	}
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "--quiet"}, {"add", "a.txt"}, {"commit", "--quiet", "-m", "first"}} {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	r := launch()
	var task struct {
		Status   string           `json:"status"`
		Worktree *sa.TaskWorktree `json:"worktree"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &task); err != nil {
		t.Fatalf("task launch --json: %v\n%s%s", err, r.stdout, r.stderr)
	}
	w := task.Worktree
	if task.Status != "completed" || w == nil || !strings.HasPrefix(w.Path, filepath.Join(h.dataDir, "worktrees")+string(filepath.Separator)) || !w.Removed {
		t.Fatalf("task = %+v, worktree %+v; want completed, its worktree in the data directory, removed as it changed nothing", task, w)
	}
}

// TestTaskLaunchFork: a task launched with --fork starts from the digest
// of its session's conversation, and recalls what was asked there.
func TestTaskLaunchFork(t *testing.T) {
	h := newHarness(t)
	parent := h.ok(seedParent, "import", "-")
	for _, tt := range []struct {
		fork bool
		want string
	}{
		{true, `Your first question was "What is 2+2?"`},
		{false, "You have not asked anything before this question."},
	} {
		args := []string{"task", "launch", "--session", parent, "--agent", "general", "--description", "recall", "--wait"}
		if tt.fork {
			args = append(args, "--fork")
		}
		out := h.ok("", append(args, "What was my first question?")...)
		if !strings.Contains(out, tt.want) {
			t.Errorf("fork %v: output %q, want %q", tt.fork, out, tt.want)
		}
	}
	var list []struct {
		IsForked bool `json:"is_forked"`
	}
	if err := json.Unmarshal([]byte(h.ok("", "tasks", "--session", parent, "--json")), &list); err != nil || len(list) != 2 {
		t.Fatalf("tasks --json: %v %v", list, err)
	}
	if !list[1].IsForked || list[0].IsForked { // newest first
		t.Fatalf("is_forked of the tasks, newest first: %v, %v", list[0].IsForked, list[1].IsForked)
	}
}

// binary builds superagents once for the tests that need a real process.
var binary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "superagents-bin")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "superagents")
	out, err := exec.Command("go", "build", "-o", path, "../../cmd/superagents").CombinedOutput()
	if err != nil {
		return "", errors.New(string(out))
	}
	return path, nil
})

// proc runs the real binary with a test environment.
type proc struct {
	t   *testing.T
	bin string
	env []string
}

func newProc(t *testing.T) *proc {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	home := t.TempDir()
	return &proc{t: t, bin: bin, env: []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"SUPERAGENTS_DATA_DIR=" + filepath.Join(home, "data"),
	}}
}

func (p *proc) run(args ...string) (string, string, int) {
	p.t.Helper()
	cmd := exec.Command(p.bin, args...)
	cmd.Env = p.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		p.t.Fatal(err)
	}
	return strings.TrimSpace(out.String()), errOut.String(), code
}

func (p *proc) ok(args ...string) string {
	p.t.Helper()
	out, errOut, code := p.run(args...)
	if code != 0 {
		p.t.Fatalf("superagents %v: exit %d: %s", args, code, errOut)
	}
	return out
}

// TestDetachedTasks drives the real binary: launch returns at once while a
// background worker runs the task; output blocks for it; resume continues
// it; a cancel from another process stops the worker's task for real; a
// worker killed outright has its task reconciled by the next process.
func TestDetachedTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	p := newProc(t)
	ws := t.TempDir()
	p.env = append(p.env, "SUPERAGENTS_OFFLINE_SCRIPT="+writeScript(t))
	session := p.ok("run", "--workspace", ws, "--json", "What is 1+1?")
	var done struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(session[strings.LastIndex(session, "\n")+1:]), &done); err != nil {
		t.Fatal(err)
	}
	sid := done.SessionID

	id := p.ok("task", "launch", "--workspace", ws, "--session", sid, "--agent", "general", "--description", "add", "What is 2+2?")
	if !regexp.MustCompile(`^[0-9a-z]{16}$`).MatchString(id) {
		t.Fatalf("launch printed %q", id)
	}
	if out := p.ok("task", "output", id, "--block", "--timeout", "60"); !strings.Contains(out, "completed") || !strings.Contains(out, "2+2 equals 4.") {
		t.Fatalf("output = %q", out)
	}
	if out := p.ok("tasks", "--session", sid); !strings.Contains(out, id[:6]) {
		t.Fatalf("tasks = %q", out)
	}
	hist := p.ok("history", sid)
	if !strings.Contains(hist, `Notification: ✓ Agent "add" finished in`) {
		t.Fatalf("the parent has no notification:\n%s", hist)
	}

	if rid := p.ok("task", "resume", "--workspace", ws, id, "What is 3+3?"); rid != id {
		t.Fatalf("resume printed %q", rid)
	}
	if out := p.ok("task", "output", id, "--block"); !strings.Contains(out, "3+3 equals 6.") || !strings.Contains(out, "resume #1") {
		t.Fatalf("output after resume = %q", out)
	}
	if _, errOut, code := p.run("task", "resume", id); code != 2 || !strings.Contains(errOut, "requires at least 2") {
		t.Fatalf("resume without prompt: %d %s", code, errOut)
	}

	// Cancel from another process while the task's command runs.
	slow := p.ok("task", "launch", "--workspace", ws, "--session", sid, "--agent", "general", "--description", "sleeper", "sleep please")
	pidFile := filepath.Join(ws, "sleeper.pid")
	sleeper := waitSleeper(t, pidFile)
	if out := p.ok("task", "cancel", slow); !strings.Contains(out, "cancelled") {
		t.Fatalf("cancel = %q", out)
	}
	proctest.WaitNoneFound(t, sleeper)
	if out := p.ok("task", "output", slow); !strings.Contains(out, "was cancelled") {
		t.Fatalf("output of the cancelled task = %q", out)
	}
	// What the task's state refuses fails the same way, whether a worker
	// or this process tried it: exit 1, the reason alone.
	for _, args := range [][]string{
		{"task", "resume", "--workspace", ws, slow, "more"},
		{"task", "resume", "--workspace", ws, "--wait", slow, "more"},
		{"task", "cancel", slow},
	} {
		_, errOut, code := p.run(args...)
		want := "only completed tasks can be resumed"
		if args[1] == "cancel" {
			want = "is cancelled already"
		}
		if code != 1 || !strings.Contains(errOut, want) || strings.Contains(errOut, "conflict") {
			t.Fatalf("%v: exit %d, %q; want 1 and %q alone", args, code, errOut, want)
		}
	}

	// A worker killed outright: the next process ends its task.
	os.Remove(pidFile)
	doomed := p.ok("task", "launch", "--workspace", ws, "--session", sid, "--agent", "general", "--description", "doomed", "sleep please")
	sleeper = waitSleeper(t, pidFile)
	worker := workerPID(t, p, doomed)
	if err := syscall.Kill(worker, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	proctest.WaitGone(t, worker)
	if sandboxtest.Isolates(t) {
		proctest.WaitNoneFound(t, sleeper) // its command died with it
	}
	for _, pid := range proctest.Find(sleeper) {
		_ = syscall.Kill(pid, syscall.SIGKILL) // unconfined, the crash left its command behind
	}
	out := p.ok("task", "output", doomed)
	if !strings.Contains(out, "interrupted by restart") {
		t.Fatalf("output after the worker died = %q", out)
	}
	if hist := p.ok("history", sid); !strings.Contains(hist, `✗ Agent "doomed" failed`) {
		t.Fatalf("no notification for the interrupted task:\n%s", hist)
	}
}

// waitSleeper waits until the sleeper's command runs, and returns what
// marks its processes (see writeScript).
func waitSleeper(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			marker := strings.TrimSpace(string(b))
			proctest.WaitFound(t, marker)
			return marker
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
	return ""
}

// workerPID finds the worker running a task: the process whose command
// line holds "task work" and this test's data directory.
func workerPID(t *testing.T, p *proc, _ string) int {
	t.Helper()
	var dataDir string
	for _, e := range p.env {
		if v, ok := strings.CutPrefix(e, "SUPERAGENTS_DATA_DIR="); ok {
			dataDir = v
		}
	}
	out, err := exec.Command("pgrep", "-f", "task work").Output()
	if err != nil {
		t.Fatalf("pgrep: %v", err)
	}
	for _, field := range strings.Fields(string(out)) {
		pid, _ := strconv.Atoi(field)
		cmdline, _ := os.ReadFile("/proc/" + field + "/cmdline")
		if strings.Contains(string(cmdline), dataDir) {
			return pid
		}
	}
	t.Fatal("no worker process found")
	return 0
}
