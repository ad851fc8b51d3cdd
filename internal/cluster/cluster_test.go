package cluster_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/httpapi"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/postgres/pgtest"
	"github.com/superagents/superagents/internal/tasks"
)

const token = "cluster-test-token-0123456789"

// Settings of the test: the tasks, and the heartbeats that bound how
// long a dead node's tasks stay running (stale after 3 s, looked at
// every second).
const (
	totalTasks  = 300
	nodeCount   = 3
	modelDelay  = 150 * time.Millisecond
	projectTOML = `[tasks]
concurrency = 8
heartbeat = "1s"
stale_after = "3s"
`
)

// buildBinary builds superagents into dir.
func buildBinary(t testing.TB, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "superagents")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/superagents/superagents/cmd/superagents").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// serveNode is one serve process.
type serveNode struct {
	name string
	cmd  *exec.Cmd
	url  string
	log  *bytes.Buffer
	// client keeps a connection open for each of many callers at once
	// (the default client keeps two, and opens a new one for each other
	// call).
	client *http.Client
	// ends counts the task endings its event stream delivered.
	mu   sync.Mutex
	ends map[string]int
}

func startNode(t testing.TB, bin, name, workspace string, env []string) *serveNode {
	t.Helper()
	return startNodeIn(t, bin, name, workspace, filepath.Join(t.TempDir(), "data"), env)
}

// startNodeIn starts a serve process on the data directory dataDir, which
// other serve processes may share (on SQLite, their one database file):
// its URL is read from the discovery file once the process wrote it.
func startNodeIn(t testing.TB, bin, name, workspace, dataDir string, env []string) *serveNode {
	t.Helper()
	n := &serveNode{name: name, log: &bytes.Buffer{}, ends: map[string]int{},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}}
	n.cmd = exec.Command(bin, "--data-dir", dataDir, "--workspace", workspace, "serve", "--addr", "127.0.0.1:0", "--rate-limit", "0")
	n.cmd.Env = env
	n.cmd.Stdout, n.cmd.Stderr = n.log, n.log
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if n.cmd.ProcessState == nil {
			_ = n.cmd.Process.Signal(syscall.SIGTERM)
			_ = n.cmd.Wait()
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", n.name, n.log)
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		d, err := httpapi.ReadDiscovery(dataDir)
		if err == nil && d.PID == n.cmd.Process.Pid {
			n.url = d.URL
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start: %v\n%s", name, err, n.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// do calls the node's API with the cluster's token.
func (n *serveNode) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, n.url+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s on %s: %s: %s", method, path, n.name, resp.Status, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// follow reads the node's event stream until ctx ends or the node dies,
// counting task endings; ready is closed once the stream is open.
func (n *serveNode) follow(ctx context.Context, ready chan<- struct{}) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.url+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	close(ready)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ch sa.Change
		if json.Unmarshal([]byte(data), &ch) != nil {
			continue
		}
		if tasks.EndsTask(ch) {
			n.mu.Lock()
			n.ends[ch.TaskID]++
			n.mu.Unlock()
		}
	}
}

// TestClusterSurvivesANodesDeath runs three serve processes on one
// database, launches 300 tasks through their HTTP APIs in turn, kills
// one node with SIGKILL while it runs tasks, and checks that every task
// ended exactly once with exactly one notification, that each surviving
// node's event stream delivered every ending, and that nothing is left
// queued or running.
func TestClusterSurvivesANodesDeath(t *testing.T) {
	url := pgtest.URL(t) // skips without a database
	if testing.Short() {
		t.Skip("builds the binary and runs three servers")
	}
	ctx := context.Background()
	bin := buildBinary(t, t.TempDir())

	model := llmtest.NewAnthropic(t)
	model.Handle(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "done", HeaderDelay: modelDelay}
	})
	workspace := t.TempDir()
	if err := os.MkdirAll(filepath.Join(workspace, ".superagents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(workspace, ".superagents", "config.toml"), []byte(projectTOML), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"SUPERAGENTS_DATABASE_URL=" + url, "SUPERAGENTS_TOKEN=" + token,
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + model.BaseURL(), "SUPERAGENTS_MODEL=anthropic/claude-test",
	}
	var nodes []*serveNode
	for i := range nodeCount {
		nodes = append(nodes, startNode(t, bin, fmt.Sprintf("node%d", i+1), workspace, env))
	}
	streams, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	var following sync.WaitGroup
	for _, n := range nodes {
		ready := make(chan struct{})
		following.Go(func() { n.follow(streams, ready) })
		<-ready
	}

	var parent struct{ ID string }
	if err := nodes[0].do(ctx, http.MethodPost, "/v1/sessions", map[string]any{"agent": "general"}, &parent); err != nil {
		t.Fatal(err)
	}
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	victim := nodes[nodeCount-1]
	launch := func(i int) string {
		t.Helper()
		// Round robin through the nodes; the dead one's turn goes to the
		// next.
		n := nodes[i%nodeCount]
		if n == victim && victim.cmd.ProcessState != nil {
			n = nodes[(i+1)%nodeCount]
		}
		var task sa.Task
		err := n.do(ctx, http.MethodPost, "/v1/tasks", map[string]any{"session_id": parent.ID,
			"description": fmt.Sprintf("task %d", i), "prompt": fmt.Sprintf("say done (%d)", i), "agent": "general"}, &task)
		if err != nil {
			t.Fatal(err)
		}
		return task.ID
	}
	var ids []string
	for i := range totalTasks / 2 {
		ids = append(ids, launch(i))
	}
	// Kill the victim while it runs tasks of its own (launching more
	// through it, on a machine too slow to have any running yet).
	victimRunner := ""
	waitFor(t, "the victim to run a task", func() bool {
		runners, err := st.Runners(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runners {
			if r.PID == victim.cmd.Process.Pid {
				victimRunner = r.ID
			}
		}
		running, err := st.ListTasks(ctx, sa.TaskFilter{RunnerID: victimRunner, Active: true, IncludeCleared: true})
		if err == nil && victimRunner != "" && len(running) > 0 {
			return true
		}
		if len(ids) < totalTasks {
			ids = append(ids, launch(nodeCount*len(ids)+nodeCount-1))
		}
		return false
	})
	if err := victim.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	_ = victim.cmd.Wait()
	for i := len(ids); i < totalTasks; i++ {
		ids = append(ids, launch(i))
	}

	// Everything ends: no task queued or running.
	waitFor(t, "every task to end", func() bool {
		active, err := st.CountTasks(ctx, sa.TaskFilter{ParentSessionID: parent.ID, Active: true, IncludeCleared: true})
		return err == nil && active == 0
	})
	t.Logf("all %d tasks ended %s after the kill", totalTasks, time.Since(killed).Round(time.Millisecond))

	// Exactly once: one ending in the change log and one notification
	// each.
	endings := map[string]int{}
	for after := int64(0); ; {
		changes, err := st.Changes(ctx, after, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) == 0 {
			break
		}
		for _, c := range changes {
			if tasks.EndsTask(c) {
				endings[c.TaskID]++
			}
		}
		after = changes[len(changes)-1].ID
	}
	history, err := st.History(ctx, parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	notes := map[string]int{}
	for _, m := range history {
		if m.Kind != sa.KindNotification {
			continue
		}
		// The hidden hint names the task that ended as "task ID (";
		// the other tasks of its batch may be listed after it.
		for _, id := range ids {
			if strings.Contains(m.Parts[len(m.Parts)-1].Text, "task "+id+" (") {
				notes[id]++
			}
		}
	}
	interrupted := 0
	for _, id := range ids {
		task, err := st.Task(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case task.Status == sa.TaskCompleted:
		case task.Status == sa.TaskError && strings.Contains(task.Error, "interrupted"):
			interrupted++
			if task.RunnerID != "" {
				t.Errorf("task %s ended still naming runner %s", id, task.RunnerID)
			}
		default:
			t.Errorf("task %s ended %s: %s", id, task.Status, task.Error)
		}
		if endings[id] != 1 || notes[id] != 1 {
			t.Errorf("task %s: %d endings, %d notifications; want 1 and 1", id, endings[id], notes[id])
		}
	}
	if interrupted == 0 {
		t.Error("no task of the killed node was interrupted")
	}
	t.Logf("%d tasks completed, %d interrupted with the killed node", totalTasks-interrupted, interrupted)

	// Each surviving node's event stream delivered every ending, once.
	waitFor(t, "the survivors' streams to deliver every ending", func() bool {
		for _, n := range nodes[:nodeCount-1] {
			n.mu.Lock()
			got := len(n.ends)
			n.mu.Unlock()
			if got < len(ids) {
				return false
			}
		}
		return true
	})
	for _, n := range nodes[:nodeCount-1] {
		n.mu.Lock()
		for _, id := range ids {
			if n.ends[id] != 1 {
				t.Errorf("%s's event stream delivered task %s's ending %d times", n.name, id, n.ends[id])
			}
		}
		n.mu.Unlock()
	}
	stopStreams()
	following.Wait()
}

// waitFor waits, up to a generous deadline, for cond.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCancelReachesTheRunningProcess cancels a task through the HTTP API
// of the node that does not run it: the running process, woken through
// the database, cuts its model stream, and the task ends cancelled once.
func TestCancelReachesTheRunningProcess(t *testing.T) {
	url := pgtest.URL(t)
	if testing.Short() {
		t.Skip("builds the binary and runs two servers")
	}
	ctx := context.Background()
	bin := buildBinary(t, t.TempDir())
	model := llmtest.NewAnthropic(t)
	model.Handle(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "never finished", Fault: llmtest.Stall, FaultAfter: 1}
	})
	workspace, home := t.TempDir(), t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"SUPERAGENTS_DATABASE_URL=" + url, "SUPERAGENTS_TOKEN=" + token,
		"ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL=" + model.BaseURL(), "SUPERAGENTS_MODEL=anthropic/claude-test",
	}
	nodes := []*serveNode{startNode(t, bin, "node1", workspace, env), startNode(t, bin, "node2", workspace, env)}
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var parent struct{ ID string }
	if err := nodes[0].do(ctx, http.MethodPost, "/v1/sessions", map[string]any{"agent": "general"}, &parent); err != nil {
		t.Fatal(err)
	}
	var task sa.Task
	if err := nodes[0].do(ctx, http.MethodPost, "/v1/tasks", map[string]any{"session_id": parent.ID,
		"description": "stall", "prompt": "wait", "agent": "general"}, &task); err != nil {
		t.Fatal(err)
	}
	var running sa.Task
	waitFor(t, "the task to run", func() bool {
		running, err = st.Task(ctx, task.ID)
		return err == nil && running.Status == sa.TaskRunning && len(model.Requests()) > 0
	})
	// Cancel through the node whose process does not run it.
	other := nodes[0]
	runners, err := st.Runners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runners {
		if r.ID == running.RunnerID && r.PID == nodes[0].cmd.Process.Pid {
			other = nodes[1]
		}
	}
	start := time.Now()
	if err := other.do(ctx, http.MethodPost, "/v1/tasks/"+task.ID+"/cancel", nil, nil); err != nil {
		t.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := model.WaitDisconnect(wait); err != nil {
		t.Fatalf("the running process did not cut its model stream: %v", err)
	}
	t.Logf("cancelled through %s; the other process cut its model stream %s later", other.name, time.Since(start).Round(time.Microsecond))
	ended, err := st.Task(ctx, task.ID)
	if err != nil || ended.Status != sa.TaskCancelled {
		t.Fatalf("task after cancel: %+v, %v", ended, err)
	}
	history, err := st.History(ctx, parent.ID)
	if err != nil {
		t.Fatal(err)
	}
	notes := 0
	for _, m := range history {
		if m.Kind == sa.KindNotification && strings.Contains(m.Parts[len(m.Parts)-1].Text, "task "+task.ID+" (") {
			notes++
		}
	}
	if notes != 1 {
		t.Fatalf("%d notifications, want 1", notes)
	}
}
