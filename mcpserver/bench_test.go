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
