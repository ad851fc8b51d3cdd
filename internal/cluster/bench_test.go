package cluster_test

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/postgres"
	"github.com/superagents/superagents/internal/postgres/pgtest"
)

// benchEnv is the environment of nodes that use the offline model (no
// provider is configured), on url (SQLite in each data directory when
// empty).
func benchEnv(b *testing.B, url string) []string {
	home := b.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, "config"),
		"SUPERAGENTS_TOKEN=" + token}
	if url != "" {
		env = append(env, "SUPERAGENTS_DATABASE_URL="+url)
	}
	return env
}

// BenchmarkThroughput launches b.N tasks through the HTTP APIs of the
// nodes in turn (from 8 clients at once, or clients) and waits until all
// have completed: tasks/s is b.N over that time, server-cpu-us/task the
// CPU time the first node's process spent per task meanwhile (on Linux).
// The tasks use the offline model, so what is measured is the system:
// HTTP, the store, the queue. concurrency is tasks.concurrency, the tasks
// each node runs at once (8 by default). Each client waits for its launch
// to commit before the next: with many tasks running, 8 of them do not
// launch as fast as the node can run the tasks.
func BenchmarkThroughput(b *testing.B) {
	for _, bc := range []struct {
		name        string
		nodes       int
		pg          bool
		concurrency int
		clients     int
	}{
		{"sqlite/1node/concurrency=1", 1, false, 1, 0},
		{"sqlite/1node", 1, false, 0, 0},
		{"sqlite/1node/concurrency=64", 1, false, 64, 0},
		{"sqlite/1node/concurrency=64/clients=16", 1, false, 64, 16},
		{"postgres/1node", 1, true, 0, 0},
		{"postgres/3nodes", 3, true, 0, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			url := ""
			if bc.pg {
				url = pgtest.URL(b)
			}
			bin := buildBinary(b, b.TempDir())
			workspace := b.TempDir()
			env := benchEnv(b, url)
			if bc.concurrency > 0 {
				writeUserConfig(b, env, fmt.Sprintf("[tasks]\nconcurrency = %d\n", bc.concurrency))
			}
			var nodes []*serveNode
			for i := range bc.nodes {
				nodes = append(nodes, startNode(b, bin, fmt.Sprintf("node%d", i+1), workspace, env))
			}
			ctx := context.Background()
			var parent struct{ ID string }
			if err := nodes[0].do(ctx, http.MethodPost, "/v1/sessions", map[string]any{"agent": "general"}, &parent); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu, cpuKnown := processCPU(nodes[0].cmd.Process.Pid)
			start := time.Now()
			var wg sync.WaitGroup
			next := make(chan int)
			for range cmp.Or(bc.clients, 8) {
				wg.Go(func() {
					for i := range next {
						err := nodes[i%len(nodes)].do(ctx, http.MethodPost, "/v1/tasks", map[string]any{"session_id": parent.ID,
							"description": fmt.Sprintf("sum %d", i), "prompt": fmt.Sprintf("what is %d+1", i), "agent": "general"}, nil)
						if err != nil {
							b.Error(err)
						}
					}
				})
			}
			for i := range b.N {
				next <- i
			}
			close(next)
			wg.Wait()
			waitEnded(b, nodes[0], parent.ID, b.N)
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "tasks/s")
			if after, ok := processCPU(nodes[0].cmd.Process.Pid); ok && cpuKnown {
				b.ReportMetric(float64((after-cpu).Microseconds())/float64(b.N), "server-cpu-us/task")
			}
		})
	}
}

// processCPU is the CPU time a process has used (user and system), from
// /proc: false where there is none.
func processCPU(pid int) (time.Duration, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: utime and stime are the 12th and 13th, in clock ticks
	// (USER_HZ, 100 on Linux).
	i := strings.LastIndex(string(raw), ") ")
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(string(raw[i+2:]))
	if len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, true
}

// writeUserConfig writes the user configuration file of nodes started
// with env.
func writeUserConfig(b testing.TB, env []string, text string) {
	for _, kv := range env {
		if dir, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			path := filepath.Join(dir, "superagents", "config.toml")
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				b.Fatal(err)
			}
			return
		}
	}
	b.Fatal("no XDG_CONFIG_HOME in the environment")
}

// waitEnded waits until the parent's n tasks have all completed, asking
// the API.
func waitEnded(b *testing.B, n *serveNode, parent string, want int) {
	b.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		var list struct {
			Total int `json:"total"`
		}
		err := n.do(context.Background(), http.MethodGet, "/v1/tasks?session_id="+parent+"&status=completed&limit=1", nil, &list)
		if err != nil {
			b.Fatal(err)
		}
		if list.Total >= want {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d tasks completed after 5 minutes", list.Total, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BenchmarkDeathToEnds stops a node that runs tasks and measures how
// long until the other node has ended them all (as interrupted, one
// notification each), with the default heartbeat settings. kill is
// SIGKILL: the nodes share one machine, so the survivor sees at its next
// reconcile that the process is gone. stop is SIGSTOP: the process still
// exists, so the survivor has only the heartbeat's age to go by, as a
// node on another machine has. The tasks' model streams stall, so they
// are running when the node dies. Each iteration starts two nodes afresh.
func BenchmarkDeathToEnds(b *testing.B) {
	for _, bc := range []struct {
		name string
		sig  syscall.Signal
	}{{"kill", syscall.SIGKILL}, {"stop", syscall.SIGSTOP}} {
		b.Run(bc.name, func(b *testing.B) { benchDeath(b, bc.sig) })
	}
}

func benchDeath(b *testing.B, sig syscall.Signal) {
	url := pgtest.URL(b)
	bin := buildBinary(b, b.TempDir())
	model := llmtest.NewAnthropic(b)
	model.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "never", Fault: llmtest.Stall} })
	st, err := postgres.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	workspace := b.TempDir()
	ctx := context.Background()
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		env := append(benchEnv(b, url), "ANTHROPIC_API_KEY=test-key", "ANTHROPIC_BASE_URL="+model.BaseURL(),
			"SUPERAGENTS_MODEL=anthropic/claude-test")
		survivor := startNode(b, bin, "survivor", workspace, env)
		victim := startNode(b, bin, "victim", workspace, env)
		var parent struct{ ID string }
		if err := victim.do(ctx, http.MethodPost, "/v1/sessions", map[string]any{"agent": "general"}, &parent); err != nil {
			b.Fatal(err)
		}
		victimRunner := runnerOf(b, st, victim)
		running := 0
		for i := 0; running == 0; i++ {
			if i == 100 {
				b.Fatal("the victim never ran a task")
			}
			err := victim.do(ctx, http.MethodPost, "/v1/tasks", map[string]any{"session_id": parent.ID,
				"description": fmt.Sprintf("stall %d", i), "prompt": "wait", "agent": "general"}, nil)
			if err != nil {
				b.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
			if running, err = st.CountTasks(ctx, sa.TaskFilter{RunnerID: victimRunner, Active: true, IncludeCleared: true}); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		died := time.Now()
		if err := victim.cmd.Process.Signal(sig); err != nil {
			b.Fatal(err)
		}
		for {
			n, err := st.CountTasks(ctx, sa.TaskFilter{RunnerID: victimRunner, Active: true, IncludeCleared: true})
			if err != nil {
				b.Fatal(err)
			}
			if n == 0 {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		took := time.Since(died)
		b.StopTimer()
		total += took
		b.Logf("%d tasks of the dead node ended %s after its death", running, took.Round(time.Millisecond))
		for _, n := range []*serveNode{victim, survivor} {
			_ = n.cmd.Process.Kill()
			_ = n.cmd.Wait()
		}
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/death")
}

// runnerOf returns the runner id of a node's process.
func runnerOf(b *testing.B, st *postgres.Store, n *serveNode) string {
	b.Helper()
	runners, err := st.Runners(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for _, r := range runners {
		if r.PID == n.cmd.Process.Pid {
			return r.ID
		}
	}
	b.Fatalf("%s has no runner", n.name)
	return ""
}
