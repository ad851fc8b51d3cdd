package forkctx_test

import (
	"fmt"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
)

// rounds is n rounds of a request, an answer that reads a file and the
// file, each about 3,000 characters, numbered from first.
func rounds(first, n int) []sa.Message {
	var h []sa.Message
	for i := first; i < first+n; i++ {
		id := fmt.Sprint("c", i)
		h = append(h, user(fmt.Sprintf("step %d: %s", i, strings.Repeat("look at the next file. ", 30))))
		h = append(h, toolRound(id, "read", fmt.Sprintf(`{"path":"f%d.go"}`, i), numberedOutput(id, 2000))...)
	}
	return h
}

// A fork made later, of the same parent grown since, receives the stable
// chunks of the earlier fork's digest unchanged, as its own first parts:
// a prompt cache reads them back. The parent grows by the launches' results
// and the tasks' notices, by new rounds, or over the budget by less than
// the step the oldest messages are dropped in.
func TestLaterForkKeepsTheStableStart(t *testing.T) {
	notices := []sa.Message{
		agentCalls("", call("l1", "superagents_task", `{"fork":true}`), call("l2", "superagents_task", `{"fork":true}`)),
		toolMsg(result("l1", "superagents_task", "Launched task a"), result("l2", "superagents_task", "Launched task b")),
		{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("Task a completed.")}},
		{Role: sa.RoleUser, Kind: sa.KindNotification, Parts: []sa.Part{sa.TextPart("Task b completed.")}},
		agent("Both are done."),
	}
	tests := []struct {
		name          string
		before, after []sa.Message
		minChunks     int // stable chunks the earlier fork has at least
		over          bool
	}{
		{"notices under the budget", rounds(0, 40), concat(rounds(0, 40), notices), 2, false},
		{"new rounds under the budget", rounds(0, 40), rounds(0, 45), 2, false},
		{"over the budget, grown by less than a step", rounds(0, 170), concat(rounds(0, 170), notices, rounds(170, 3)), 10, true},
		{"after a compaction", concat([]sa.Message{user("old"), compactionMarker(), summary("what was done")}, rounds(0, 40)),
			concat([]sa.Message{user("old"), compactionMarker(), summary("what was done")}, rounds(0, 40), notices), 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := forkctx.DefaultConfig()
			first := build(t, cfg, withIDs(tt.before))
			later := build(t, cfg, withIDs(tt.after))
			if over := later.Stats.Removed.ForChars > 0; over != tt.over {
				t.Fatalf("over the budget: %v, want %v", over, tt.over)
			}
			p1, p2 := first.Parts(), later.Parts()
			if len(p1)-1 < tt.minChunks {
				t.Fatalf("the earlier fork has %d stable chunks (%d stable characters of %d), want at least %d",
					len(p1)-1, first.Stats.StableChars, first.Stats.FinalChars, tt.minChunks)
			}
			if len(p2) < len(p1) {
				t.Fatalf("the later fork has %d parts, fewer than the earlier's %d", len(p2), len(p1))
			}
			for i := range len(p1) - 1 {
				if p1[i] != p2[i] {
					t.Fatalf("stable chunk %d differs:\n%.300q\n%.300q", i+1, p1[i], p2[i])
				}
			}
			t.Logf("%d of %d characters stable, in %d chunks; later: %d in %d", first.Stats.StableChars, first.Stats.FinalChars,
				first.Stats.StableChunks, later.Stats.StableChars, later.Stats.StableChunks)
		})
	}
}

// Without steps (drop_step_chars = 0), the same growth over the budget
// moves the digest's start, and nothing of it is shared.
func TestDroppingWithoutStepsMovesTheStart(t *testing.T) {
	cfg := forkctx.DefaultConfig()
	cfg.DropStepChars = 0
	first := build(t, cfg, withIDs(rounds(0, 170)))
	later := build(t, cfg, withIDs(concat(rounds(0, 170), rounds(170, 3))))
	if first.Stats.Removed.ForChars == later.Stats.Removed.ForChars || first.Parts()[0] == later.Parts()[0] {
		t.Fatalf("removed %d then %d messages; the first chunk is the same: %v",
			first.Stats.Removed.ForChars, later.Stats.Removed.ForChars, first.Parts()[0] == later.Parts()[0])
	}
}
