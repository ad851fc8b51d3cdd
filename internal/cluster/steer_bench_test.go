package cluster_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/postgres/pgtest"
)

// BenchmarkSteerLatency measures, for a message sent over MCP
// (superagents_send) to a running task, the time from the send to the
// task's next model request carrying it, as the scripted model server
// receives it. The task works in one of two ways:
//
//   - steps: each of its steps is a 0.2 s command (bash sleep 0.2): the
//     run reads its inbox before each model request, so a message waits
//     for the step under way to end.
//   - waiting: it launched a task of its own, whose model never answers,
//     and ended its turn: its run waits for that task, and is woken by
//     the message's change (task.message) as the change bus hears of it.
//
// The send goes through a serve process's MCP server over HTTP (the
// 2026-07-28 revision, the cluster's token) and the task runs in the
// same process (1process), in a task worker on the same SQLite file
// (sqlite/2processes), or on another node of a PostgreSQL cluster
// (postgres/2nodes). Sends come at moments at random, one at a time:
// on SQLite, a process hears of another's writes when its change bus
// polls (every 500 ms), or at once after a write of its own; on
// PostgreSQL, through LISTEN/NOTIFY.
// Reported: the mean (ms/send, also ns/op), median, 90th percentile and
// worst time from send to request, and how long the MCP call took.
// Run it with a count of sends, e.g. -benchtime 40x.
func BenchmarkSteerLatency(b *testing.B) {
	bin := buildBinary(b, b.TempDir())
	for _, mode := range []string{"steps", "waiting"} {
		for _, where := range []string{"1process", "sqlite/2processes", "postgres/2nodes"} {
			b.Run(mode+"/"+where, func(b *testing.B) { benchSteer(b, bin, mode, where) })
		}
	}
}

// steerBenchPrompt starts the prompt of the task the benchmark sends to,
// childPrompt that of the task it waits for, which never ends.
const (
	steerBenchPrompt = "steer-bench:"
	childPrompt      = "stalled-child:"
)

func benchSteer(b *testing.B, bin, mode, where string) {
	url, nodes := "", 1
	if where == "postgres/2nodes" {
		url, nodes = pgtest.URL(b), 2
	}
	probe := &llmtest.Arrival{}
	c := startSteerCluster(b, bin, nodes, url, "[limits]\nmax_steps = 1000000\n", steerBenchModel(mode, probe))
	launcher := connectMCP(b, c.nodes[0])
	prompt := steerBenchPrompt + " " + mode
	var id string
	if where == "sqlite/2processes" {
		id = c.launchByCLI(b, c.tokenSession(b, launcher), "steered", prompt)
	} else {
		id = launcher.launch("steered", prompt)
	}
	launcher.cancelLater(id)
	runner := c.runnerOf(b, id)
	sender := connectMCP(b, c.otherThan(runner))
	if (where == "1process") != (sender.node.cmd.Process.Pid == runner.PID) {
		b.Fatalf("%s: the task runs in %s, the message is sent through %s", where, c.nameOf(runner), sender.node.name)
	}
	// The task is at work: steps made, or waiting for its child.
	for len(c.requestsOf(childPrompt)) == 0 && len(c.requestsOf(steerBenchPrompt)) < 3 {
		time.Sleep(10 * time.Millisecond)
	}
	// Each send at a moment at random in a step; or in the wait, once
	// the run has saved its progress after its last turn (200 ms later:
	// a write of its process, which would wake its change bus at once).
	pause, spread := 100*time.Millisecond, 300*time.Millisecond
	if mode == "waiting" {
		pause, spread = 600*time.Millisecond, 500*time.Millisecond
	}
	var latencies, calls []time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		time.Sleep(pause + rand.N(spread))
		marker := fmt.Sprintf("steer-note-%d-%d", i, rand.Int64())
		arrived := probe.Expect(func(r llmtest.Request) bool { return bytes.Contains(r.Body, []byte(marker)) })
		b.StartTimer()
		start := time.Now()
		sender.call("superagents_send", map[string]any{"task_id": id, "message": "Note " + marker + "."})
		calls = append(calls, time.Since(start))
		select {
		case at := <-arrived:
			latencies = append(latencies, at.Sub(start))
		case <-time.After(time.Minute):
			b.Fatalf("no model request carried message %d a minute after it was sent", i)
		}
	}
	reportLatencies(b, latencies, calls)
}

// reportLatencies reports the times from send to request, and the MCP
// calls' mean.
func reportLatencies(b *testing.B, latencies, calls []time.Duration) {
	if len(latencies) == 0 {
		return
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var sum, callSum time.Duration
	for i, l := range latencies {
		sum += l
		callSum += calls[i]
	}
	slices.Sort(latencies)
	n := len(latencies)
	b.ReportMetric(ms(sum)/float64(n), "ms/send")
	b.ReportMetric(ms(latencies[n/2]), "p50-ms")
	b.ReportMetric(ms(latencies[(n*9)/10]), "p90-ms")
	b.ReportMetric(ms(latencies[n-1]), "max-ms")
	b.ReportMetric(ms(callSum)/float64(n), "mcp-call-ms")
}

// steerBenchModel is the scripted model of BenchmarkSteerLatency: the
// steered task runs 0.2 s commands (steps), or launches a task whose
// model stalls and ends its turn, saying so again at each wake
// (waiting). probe hears of every request of the steered task.
func steerBenchModel(mode string, probe *llmtest.Arrival) func(llmtest.Request) llmtest.Reply {
	var steps atomic.Int64
	return func(r llmtest.Request) llmtest.Reply {
		first := r.FirstText()
		switch {
		case strings.Contains(first, childPrompt):
			return llmtest.Reply{Fault: llmtest.Stall}
		case !strings.Contains(first, steerBenchPrompt):
			return llmtest.Reply{Text: "not the steered task"}
		}
		probe.Saw(r)
		switch {
		case mode == "steps":
			// Each call its own: the same call made again and again is
			// stopped as a loop.
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{bashCall(fmt.Sprintf("sleep 0.2 # step %d", steps.Add(1)))}}
		case !bytes.Contains(r.Body, []byte(`"tool_use"`)):
			raw := fmt.Sprintf(`{"description":"stalled child","prompt":%q,"agent":"general"}`, childPrompt+" wait")
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "superagents_task", Input: raw}}}
		}
		return llmtest.Reply{Text: "waiting for the child task"}
	}
}
