package tasks_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/config"
	"github.com/superagents/superagents/llm/llmtest"
	"github.com/superagents/superagents/tasks"
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
// running at once.
func BenchmarkRunningTaskMemory(b *testing.B) {
	const n = 200
	h := newHarness(b, func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "thinking", Fault: llmtest.Stall}
	}, withLimits(func(l *config.Tasks) { l.Concurrency = n }))
	parent := h.parent(user("parent: hi"))
	var perTask, goroutines float64
	for b.Loop() {
		before := heap()
		g0 := runtime.NumGoroutine()
		sent := len(h.srv.Requests())
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
		for len(h.srv.Requests()) < sent+n {
			if time.Now().After(deadline) {
				b.Fatalf("%d of %d model requests in flight after 60 s", len(h.srv.Requests())-sent, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		perTask = float64(heap()-before) / n
		goroutines = float64(runtime.NumGoroutine()-g0) / n
		for _, id := range ids {
			if _, err := h.mgr.Cancel(context.Background(), id); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(perTask, "heap-bytes/running-task")
	b.ReportMetric(goroutines, "goroutines/running-task")
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
