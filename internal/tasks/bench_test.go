package tasks_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/tasks"
)

// BenchmarkThousandTasks launches 1,000 tasks against the offline model
// (an instant answer, no network) and waits for all of them: launch, run,
// store every message, end with a notification.
func BenchmarkThousandTasks(b *testing.B) {
	for _, concurrency := range []int{8, 64} {
		b.Run(fmt.Sprintf("concurrency=%d", concurrency), func(b *testing.B) {
			h := newHarness(b, nil, withModel("offline"), withLimits(func(l *config.Tasks) { l.Concurrency = concurrency }))
			const n = 1000
			for b.Loop() {
				parent := h.parent(user("parent: hi"))
				ids := make([]string, 0, n)
				for range n {
					t, err := h.mgr.Launch(context.Background(), tasks.LaunchRequest{ParentSessionID: parent.ID,
						Description: "sum", Prompt: "What is 2+2?", Agent: "general"})
					if err != nil {
						b.Fatal(err)
					}
					ids = append(ids, t.ID)
				}
				if err := h.mgr.WaitIdle(context.Background(), parent.ID); err != nil {
					b.Fatal(err)
				}
				for _, id := range ids[:10] {
					if t, _ := h.store.Task(context.Background(), id); t.Status != sa.TaskCompleted {
						b.Fatalf("task %s is %s", id, t.Status)
					}
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}

// BenchmarkRunningTaskMemory measures the memory each running task holds:
// tasks whose model (the real SDK, over loopback) is mid-stream, all
// running at once. The fake model server runs in a child process (this
// test binary again, TestFakeServerProcess), so that its side of the
// connections is not counted as the tasks'.
func BenchmarkRunningTaskMemory(b *testing.B) {
	const n = 200
	srv := startFakeServerProcess(b)
	h := newHarness(b, func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "unused"} },
		withServerURL(srv.url), withLimits(func(l *config.Tasks) { l.Concurrency = n }))
	parent := h.parent(user("parent: hi"))
	// round runs n tasks to their model request, measures, and cancels
	// them.
	round := func() (perTask, goroutines float64) {
		before := heap()
		g0 := runtime.NumGoroutine()
		sent := srv.requests()
		ids := make([]string, 0, n)
		for range n {
			t, err := h.mgr.Launch(context.Background(), tasks.LaunchRequest{ParentSessionID: parent.ID,
				Description: "wait", Prompt: "p", Agent: "general"})
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, t.ID)
		}
		// Wait until every model request of this round is in flight.
		deadline := time.Now().Add(60 * time.Second)
		for srv.requests() < sent+n {
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d model requests in flight after 60 s", srv.requests()-sent, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		perTask = (float64(heap()) - float64(before)) / n
		goroutines = float64(runtime.NumGoroutine()-g0) / n
		for _, id := range ids {
			if _, err := h.mgr.Cancel(context.Background(), id); err != nil {
				b.Fatal(err)
			}
		}
		return perTask, goroutines
	}
	// A first round unmeasured: what the first tasks set up once (caches,
	// prepared statements, the client's connections) is not any task's,
	// and freeing what setting up the harness left made the heap shrink.
	round()
	var perTask, goroutines float64
	for b.Loop() {
		perTask, goroutines = round()
	}
	b.ReportMetric(perTask, "heap-bytes/running-task")
	b.ReportMetric(goroutines, "goroutines/running-task")
}

// fakeServerEnv asks this test binary to be the fake model server of
// BenchmarkRunningTaskMemory.
const fakeServerEnv = "SUPERAGENTS_TEST_FAKE_SERVER_PROCESS"

// TestFakeServerProcess is the fake model server in its own process: it
// prints its URL, then a line per request (each answered with a stream
// that stalls), until its standard input closes.
func TestFakeServerProcess(t *testing.T) {
	if os.Getenv(fakeServerEnv) == "" {
		t.Skip("the fake model server of BenchmarkRunningTaskMemory, run in a child process")
	}
	srv := llmtest.NewAnthropic(t)
	var mu sync.Mutex
	srv.Handle(func(llmtest.Request) llmtest.Reply {
		mu.Lock()
		fmt.Println("request")
		mu.Unlock()
		return llmtest.Reply{Text: "thinking", Fault: llmtest.Stall}
	})
	mu.Lock()
	fmt.Println("url", srv.BaseURL())
	mu.Unlock()
	io.Copy(io.Discard, os.Stdin) //nolint:errcheck // any end of stdin ends the server
}

// fakeServerProcess is a running TestFakeServerProcess.
type fakeServerProcess struct {
	url  string
	seen atomic.Int64
}

func (p *fakeServerProcess) requests() int { return int(p.seen.Load()) }

func startFakeServerProcess(b *testing.B) *fakeServerProcess {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFakeServerProcess$", "-test.v=false")
	cmd.Env = append(os.Environ(), fakeServerEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close()
		cmd.Wait() //nolint:errcheck // it ends when its stdin closes
	})
	p := &fakeServerProcess{}
	lines := bufio.NewScanner(stdout)
	for p.url == "" && lines.Scan() {
		p.url, _ = strings.CutPrefix(lines.Text(), "url ")
	}
	if p.url == "" {
		b.Fatalf("the fake server process gave no URL (%v)", lines.Err())
	}
	go func() {
		for lines.Scan() {
			if lines.Text() == "request" {
				p.seen.Add(1)
			}
		}
	}()
	return p
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
