package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	sa "github.com/superagents/superagents"
)

// BenchmarkEventFanout: 200 clients follow the event stream; each
// operation writes 1,000 task events to the store and waits until every
// client has received every one of them. Losing one, or receiving one
// twice, fails the benchmark.
func BenchmarkEventFanout(b *testing.B) {
	const subscribers, perOp = 200, 1000
	h := newHarness(b)
	ctx := context.Background()
	parent, err := h.store.CreateSession(ctx, sa.NewSession{Agent: "general"})
	if err != nil {
		b.Fatal(err)
	}
	task, err := h.store.CreateTask(ctx, sa.NewTask{Task: sa.Task{ParentSessionID: parent.ID, Description: "fan-out", Agent: "general"},
		Session: sa.NewSession{Agent: "general"}})
	if err != nil {
		b.Fatal(err)
	}
	streams := make([]*stream, subscribers)
	for i := range streams {
		streams[i] = h.events("")
		decodeSnapshot(b, streams[i].next(b))
	}
	var delivered, lost, duplicates int
	b.ResetTimer()
	for b.Loop() {
		start, err := h.store.LastChangeID(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		// Each client's events by id: a repeat is a duplicate, not one
		// more delivery that could hide a lost event.
		counts, dups := make([]int, subscribers), make([]int, subscribers)
		for i, s := range streams {
			wg.Go(func() {
				seen := make(map[int64]bool, perOp)
				for {
					ev := s.next(b)
					id, _ := strconv.ParseInt(ev.id, 10, 64)
					if ev.name == "task.updated" {
						if seen[id] {
							dups[i]++
						} else {
							seen[id] = true
							counts[i]++
						}
					}
					if id == start+perOp {
						return
					}
				}
			})
		}
		for n := range perOp {
			_, err := h.store.UpdateTask(ctx, task.ID, func(t *sa.Task) error { t.Progress.ToolCalls = n; return nil })
			if err != nil {
				b.Fatal(err)
			}
		}
		wg.Wait()
		for i, c := range counts {
			delivered += c
			lost += perOp - c
			duplicates += dups[i]
		}
	}
	b.StopTimer()
	if lost != 0 || duplicates != 0 {
		b.Fatalf("%d events lost, %d delivered twice", lost, duplicates)
	}
	b.ReportMetric(float64(delivered)/b.Elapsed().Seconds(), "deliveries/s")
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(float64(duplicates), "duplicates")
	for _, s := range streams {
		s.close()
	}
}

// BenchmarkListTasks: 32 clients list tasks at once with 10,000 tasks
// stored; it reports the latency percentiles of one request.
func BenchmarkListTasks(b *testing.B) {
	const stored, clients = 10_000, 32
	h := newHarness(b)
	ctx := context.Background()
	parent, err := h.store.CreateSession(ctx, sa.NewSession{Agent: "general"})
	if err != nil {
		b.Fatal(err)
	}
	statuses := []sa.TaskStatus{sa.TaskCompleted, sa.TaskCompleted, sa.TaskError, sa.TaskCancelled}
	for i := range stored {
		desc := fmt.Sprintf("task %d: review module %d", i, i%97)
		if i%50 == 0 {
			desc = fmt.Sprintf("task %d: fix the LOGIN flow", i)
		}
		agent := "general"
		if i%3 == 0 {
			agent = "explore"
		}
		_, err := h.store.CreateTask(ctx, sa.NewTask{Task: sa.Task{ParentSessionID: parent.ID, Description: desc, Agent: agent,
			Status: statuses[i%len(statuses)], BatchID: fmt.Sprint("batch", i/10)}, Session: sa.NewSession{Agent: agent}})
		if err != nil {
			b.Fatal(err)
		}
	}
	type load struct {
		clients int
		query   string
	}
	loads := []load{{1, ""}}
	for _, q := range []string{"", "?status=error", "?agent=explore&limit=200", "?search=login", "?offset=9900"} {
		loads = append(loads, load{clients, q})
	}
	for _, l := range loads {
		query, clients := l.query, l.clients
		b.Run(fmt.Sprintf("clients=%d/query=%s", clients, query), func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
			defer client.CloseIdleConnections()
			get := func() (time.Duration, bool) {
				req, _ := http.NewRequest("GET", h.url+"/v1/tasks"+query, nil)
				req.Header.Set("Authorization", "Bearer "+testToken)
				start := time.Now()
				res, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return 0, false
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusOK {
					b.Errorf("GET /v1/tasks%s = %d", query, res.StatusCode)
					return 0, false
				}
				return time.Since(start), true
			}
			var mu sync.Mutex
			var latencies []time.Duration
			b.ResetTimer()
			if clients == 1 {
				for b.Loop() {
					took, ok := get()
					if !ok {
						return
					}
					latencies = append(latencies, took)
				}
			} else {
				// RunParallel starts parallelism × GOMAXPROCS goroutines.
				b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
				b.RunParallel(func(pb *testing.PB) {
					var mine []time.Duration
					for pb.Next() {
						took, ok := get()
						if !ok {
							return
						}
						mine = append(mine, took)
					}
					mu.Lock()
					latencies = append(latencies, mine...)
					mu.Unlock()
				})
			}
			b.StopTimer()
			slices.Sort(latencies)
			pct := func(p float64) float64 {
				if len(latencies) == 0 {
					return 0
				}
				return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(float64(len(latencies))/b.Elapsed().Seconds(), "req/s")
		})
	}
}
