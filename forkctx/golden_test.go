package forkctx_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/golden"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
)

// goldenHistory is a session that exercises every rule: a compaction, the
// three tiers, both cutting methods, compacted, empty and exempt results,
// parallel calls, an orphan result, a pending call, reasoning, a
// notification with a hidden hint, and multi-byte and invalid text.
func goldenHistory() []sa.Message {
	h := []sa.Message{
		user("Fix the flaky test in pkg/queue."),
		agent("Before compaction: this is discarded."),
		compactionMarker(),
		summary("We found that pkg/queue's TestDrain races on the worker pool. Next: read drain.go."),
		user("Go on, and check the logs too. Ünïcödé wörks → ✓"),
	}
	reasoning := sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{
		{Type: sa.PartReasoning, Text: "The race must be in Close."},
		sa.TextPart("Reading drain.go and the CI log."),
		call("r1", "read", `{"path": "pkg/queue/drain.go"}`),
		call("r2", "read", `{"path": "ci/log.txt"}`),
	}}
	h = append(h, reasoning, toolMsg(
		result("r2", "read", strings.Repeat("2024-05-01 12:00:00 INFO job started\n", 20)+"2024-05-01 12:00:01 ERROR worker 3 panicked\n"+strings.Repeat("2024-05-01 12:00:02 INFO retrying\n", 20)),
		result("r1", "read", "package queue\n\n"+strings.Repeat("// Drain waits for all workers.\n", 30)+"func Drain() {}\n"),
	))
	h = append(h, toolRound("b1", "bash", `{"command": "go test -race -run TestDrain ./pkg/queue/"}`,
		strings.Repeat("=== RUN   TestDrain\n", 40)+"--- FAIL: TestDrain (0.01s)\n    drain_test.go:42: WARNING: DATA RACE\nFAIL\n")...)
	h = append(h, toolRound("q1", "ask_user_questions", `{"questions": ["Keep the old API?"]}`, "Yes, keep the old API: "+strings.Repeat("callers depend on it. ", 40))...)
	h = append(h, toolRound("g1", "grep", `{"pattern": "Close\\(", "path": "pkg/"}`, "")...)
	h = append(h, toolRound("old", "read", `{"path": "pkg/queue/pool.go"}`, forkctx.CompactedMarker)...)
	for i := range 14 {
		out := fmt.Sprintf("pkg/queue/file%02d.go:%d: match\n", i, i*10)
		h = append(h, toolRound(fmt.Sprintf("s%02d", i), "glob", fmt.Sprintf(`{"pattern": "pkg/queue/*%02d.go", "note": %q}`, i, strings.Repeat("long parameter text ", 12)), strings.Repeat(out, 12))...)
	}
	h = append(h,
		toolMsg(result("lost", "read", "a result whose call is not in the history")),
		sa.Message{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{
			sa.TextPart("Task abc123... (lint) completed."),
			{Type: sa.PartText, Text: "Use superagents_output to read it.", Hidden: true},
		}},
		agentCalls("Invalid bytes \xff\xfe are shown as replacement characters. Running the fix now.", call("e1", "edit", `{"path": "pkg/queue/drain.go", "old": "wg.Wait()", "new": "p.mu.Lock(); wg.Wait()"}`)),
	)
	return withIDs(h)
}

// goldenConfig uses small limits so the golden files stay readable while
// every stage acts.
func goldenConfig() forkctx.Config {
	cfg := forkctx.DefaultConfig()
	cfg.Tier1Results, cfg.Tier2Results = 3, 4
	cfg.Tier2Chars, cfg.Tier3Chars = 300, 80
	cfg.Tier1ParamChars, cfg.Tier2ParamChars, cfg.Tier3ParamChars = 120, 60, 30
	cfg.MaxChars, cfg.TargetChars = 6000, 4000
	return cfg
}

func TestGolden(t *testing.T) {
	cfg := goldenConfig()
	res := build(t, cfg, goldenHistory())
	if res.Stats.Removed.ForChars == 0 || res.Stats.Tools.HeadTail == 0 || res.Stats.Tools.Truncated == res.Stats.Tools.HeadTail {
		t.Fatalf("the golden history no longer exercises every stage: %+v", res.Stats)
	}
	raw, err := res.JSON()
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "preview.golden", []byte(forkctx.Preview(res)))
	golden.Check(t, "preview.json.golden", append(raw, '\n'))
	golden.Check(t, "text.golden", []byte(res.Text()))

	whole := build(t, forkctx.DefaultConfig(), goldenHistory())
	golden.Check(t, "preview_defaults.golden", []byte(forkctx.Preview(whole)))

	empty := build(t, forkctx.DefaultConfig(), nil)
	golden.Check(t, "preview_empty.golden", []byte(forkctx.Preview(empty)))
}
