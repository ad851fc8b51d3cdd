package anthropic_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/cost"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/llm/llmtest"
)

// BenchmarkThirtyStepTask runs a task of 30 model requests (29 reads of
// about 500 tokens each, then the answer) under a system prompt of about
// 1,500 tokens, with and without cache breakpoints, against the fake
// Messages API with the real API's minimum cacheable prefix (1,024
// tokens). The metrics are the tokens the fake API billed for one task
// and its list price on claude-sonnet-4-5; go test -bench prints them.
func BenchmarkThirtyStepTask(b *testing.B) {
	for _, mode := range []struct {
		name    string
		noCache bool
	}{{"cache", false}, {"nocache", true}} {
		b.Run(mode.name, func(b *testing.B) {
			var u sa.Usage
			for b.Loop() {
				u = thirtySteps(b, mode.noCache)
			}
			price, _ := config.Default().ModelInfo("anthropic/claude-sonnet-4-5")
			b.ReportMetric(float64(u.InputTokens), "input-tok/task")
			b.ReportMetric(float64(u.CacheReadTokens), "cache-read-tok/task")
			b.ReportMetric(float64(u.CacheWriteTokens), "cache-write-tok/task")
			b.ReportMetric(cost.Of(price, sa.Usage{InputTokens: u.InputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}), "input-USD/task")
		})
	}
}

// thirtySteps runs the task once on a fresh server (an empty cache) and
// returns the usage the API reported, added up.
func thirtySteps(b *testing.B, noCache bool) sa.Usage {
	f := newCacheFixture(b, noCache)
	f.srv.CacheMinTokens = 1024
	f.loop.System = strings.Repeat("Follow the project's conventions and check your work. ", 110)
	const steps = 30
	for i := 1; i < steps; i++ {
		f.srv.Push(llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read", Input: fmt.Sprintf(`{"path":"big.txt","offset":%d,"limit":1}`, i)}}})
	}
	f.srv.Push(llmtest.Reply{Text: "Read them all."})
	ctx := context.Background()
	sess, err := f.store.CreateSession(ctx, sa.NewSession{Agent: "general"})
	if err != nil {
		b.Fatal(err)
	}
	out, err := f.loop.Run(ctx, sess.ID, engine.UserMessage("Read big.txt one line per step."))
	if err != nil || out.Steps != steps {
		b.Fatalf("%d steps, %v", out.Steps, err)
	}
	return out.Usage
}
