package repl

import (
	"context"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/cost"
)

// TestActivityCost: the status line's figure is what the agent in view
// cost, its tasks included; an agent on unpriced models has none.
func TestActivityCost(t *testing.T) {
	eng := testEngine(t, t.TempDir())
	c := openChat(t, eng, "")
	ctx := context.Background()
	id := c.Current().ID
	c.refreshCost(ctx, id)
	if got := c.Activity().Cost; got != "" {
		t.Fatalf("cost of a new agent = %q, want none", got)
	}
	// A turn on a priced model: a million input tokens of claude-sonnet-4-5.
	reply := sa.Message{Role: sa.RoleAssistant, Parts: []sa.Part{sa.TextPart("hi")}, Model: "anthropic/claude-sonnet-4-5",
		Usage: sa.Usage{InputTokens: 1_000_000}}
	if _, err := eng.Store.Append(ctx, id, engineUser("hello"), reply); err != nil {
		t.Fatal(err)
	}
	c.refreshCost(ctx, id)
	if got := c.Activity().Cost; got != "$3.00" {
		t.Fatalf("cost = %q, want $3.00", got)
	}
	for usd, want := range map[float64]string{0.004: "$0.0040", 0.5: "$0.50", 12.345: "$12.35"} {
		if got := cost.Dollars(usd); got != want {
			t.Errorf("cost.Dollars(%v) = %q, want %q", usd, got, want)
		}
	}
}

func engineUser(text string) sa.Message {
	return sa.Message{Role: sa.RoleUser, Parts: []sa.Part{sa.TextPart(text)}}
}
