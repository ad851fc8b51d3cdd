package agent_test

import (
	"context"
	"fmt"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/offline"
	"github.com/superagents/superagents/internal/storetest"
)

// turnScript makes the offline model answer each message with four
// rounds of tool calls (glob, another pattern each time: the same call
// again would be taken for a loop), then a text.
const turnScript = `
[[rules]]
step = 1
tool_calls = [{ name = "glob", input = { pattern = "*.1" } }]
[[rules]]
step = 2
tool_calls = [{ name = "glob", input = { pattern = "*.2" } }]
[[rules]]
step = 3
tool_calls = [{ name = "glob", input = { pattern = "*.3" } }]
[[rules]]
step = 4
tool_calls = [{ name = "glob", input = { pattern = "*.4" } }]
[[rules]]
reply = "done"
`

// BenchmarkTurnInALongSession runs turns of five model requests (four
// with a tool call, then the answer) in sessions of growing histories,
// with the offline model: the first request of a turn reads the history
// whole, the others only what was stored since.
func BenchmarkTurnInALongSession(b *testing.B) {
	script, err := offline.ParseScript("bench.toml", []byte(turnScript))
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			f := newFixture(b)
			f.loop.Provider = offline.New(offline.Options{Script: script})
			storetest.Fill(b, f.store, f.session.ID, n)
			ctx := context.Background()
			for b.Loop() {
				out, err := f.loop.Run(ctx, f.session.ID, sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart("go on")}})
				if err != nil || out.Steps != 5 || out.Text != "done" {
					b.Fatalf("outcome %+v: %v", out, err)
				}
			}
		})
	}
}
