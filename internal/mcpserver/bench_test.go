package mcpserver_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkListTool measures one tool call's round trip: a client's
// superagents_list, over each transport, with a few tasks to list.
func BenchmarkListTool(b *testing.B) {
	for _, transport := range transports {
		b.Run(transport, func(b *testing.B) {
			h := newHarness(b, fakeModel)
			c := h.connect(transport, "bench", "1")
			for range 5 {
				id := c.launch(map[string]any{"description": "sum", "prompt": "What is 2+2?"})
				c.ok("superagents_output", map[string]any{"task_id": id, "block": true})
			}
			params := &mcp.CallToolParams{Name: "superagents_list", Arguments: map[string]any{}}
			b.ResetTimer()
			for b.Loop() {
				if res, err := c.cs.CallTool(context.Background(), params); err != nil || res.IsError {
					b.Fatalf("list: %v %v", res, err)
				}
			}
		})
	}
}

// BenchmarkLaunchToNotification measures a task's whole trip as a host
// sees it: superagents_task, the sub-agent's turn against the fake model
// server (through the Anthropic SDK), and the notification of its end.
func BenchmarkLaunchToNotification(b *testing.B) {
	for _, transport := range transports {
		b.Run(transport, func(b *testing.B) {
			h := newHarness(b, fakeModel)
			c := h.connect(transport, "bench", "1")
			for b.Loop() {
				c.launch(map[string]any{"description": "sum", "prompt": "What is 2+2?"})
				c.notification()
			}
		})
	}
}

// BenchmarkTaskAnswer measures, for a client of the 2026-07-28 revision
// that declares the Tasks extension, a superagents_task call from the
// request to its answer, the task (stored first), over each transport.
func BenchmarkTaskAnswer(b *testing.B) {
	for _, transport := range transports {
		b.Run(transport, func(b *testing.B) {
			h := newHarness(b, fakeModel)
			c := h.connectAt(transport, "bench", "1", statelessRevision, tasksClient())
			params := &mcp.CallToolParams{Name: "superagents_task", Arguments: map[string]any{"description": "sum", "prompt": "What is 2+2?", "agent": "general"}}
			for b.Loop() {
				if res, err := c.cs.CallTool(context.Background(), params); err != nil || res.IsError || len(res.Content) != 0 {
					b.Fatalf("superagents_task: %v %v: want a task", res, err)
				}
			}
		})
	}
}

// BenchmarkTaskGetEnded measures the tasks/get that sees a task's end:
// the poll that follows a sub-agent's ending gets its answer in this time
// (the host polls every pollIntervalMs, 2 s).
func BenchmarkTaskGetEnded(b *testing.B) {
	for _, transport := range transports {
		b.Run(transport, func(b *testing.B) {
			h := newHarness(b, fakeModel)
			c := h.connectAt(transport, "bench", "1", statelessRevision, tasksClient())
			id := c.deferred(h, map[string]any{"description": "sum", "prompt": "What is 2+2?", "agent": "general"})
			c.waitTask(id)
			for b.Loop() {
				if task, err := c.getTask(id); err != nil || !task.Status.Terminal() {
					b.Fatalf("tasks/get: %+v %v", task, err)
				}
			}
		})
	}
}
