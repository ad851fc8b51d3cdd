package forkctx_test

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/forkctx"
)

// The tier counts add up to the results that may be cut (not compacted,
// not empty, not exempt), fill the tiers newest first, and exactly the
// tier 2 and 3 results longer than their tier's size are cut.
func TestPropertyTierCounts(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := forkctx.DefaultConfig()
		cfg.Tier1Results = rapid.IntRange(0, 6).Draw(rt, "tier1")
		cfg.Tier2Results = rapid.IntRange(0, 6).Draw(rt, "tier2")
		cfg.Tier3Chars = rapid.IntRange(1, 40).Draw(rt, "tier3_chars")
		cfg.Tier2Chars = cfg.Tier3Chars + rapid.IntRange(0, 40).Draw(rt, "tier2_extra")

		type kind int
		const (
			tiered kind = iota
			empty
			cleared
			flagged
			exempt
		)
		n := rapid.IntRange(0, 40).Draw(rt, "results")
		kinds := make([]kind, n)
		lengths := make([]int, n)
		var h []sa.Message
		for i := range n {
			kinds[i] = kind(rapid.IntRange(0, 4).Draw(rt, fmt.Sprintf("kind%d", i)))
			lengths[i] = rapid.IntRange(1, 120).Draw(rt, fmt.Sprintf("len%d", i))
			id, name, out := fmt.Sprintf("c%d", i), "read", strings.Repeat("é", lengths[i])
			r := result(id, name, out)
			switch kinds[i] {
			case empty:
				r.Output = ""
			case cleared:
				r.Output = "older: " + forkctx.CompactedMarker
			case flagged:
				r.Compacted = true
			case exempt:
				r.Name = "ask_user_questions"
			}
			h = append(h, user("step"), agentCalls("", call(id, name, `{}`)), toolMsg(r))
		}
		cfg.MaxChars, cfg.TargetChars = 10_000_000, 10_000_000
		res, err := newPipeline(rt, cfg).Build(withIDs(h))
		if err != nil {
			rt.Fatal(err)
		}

		var want [3]int
		truncated, tieredSeen := 0, 0
		for i := n - 1; i >= 0; i-- { // newest first
			if kinds[i] != tiered {
				continue
			}
			tier, limit := 3, cfg.Tier3Chars
			switch {
			case tieredSeen < cfg.Tier1Results:
				tier, limit = 1, lengths[i]
			case tieredSeen < cfg.Tier1Results+cfg.Tier2Results:
				tier, limit = 2, cfg.Tier2Chars
			}
			want[tier-1]++
			if lengths[i] > limit {
				truncated++
			}
			tieredSeen++
		}
		ts := res.Stats.Tools
		if ts.Tiers != want {
			rt.Fatalf("tiers = %v, want %v", ts.Tiers, want)
		}
		if got := ts.Tiers[0] + ts.Tiers[1] + ts.Tiers[2]; got != tieredSeen {
			rt.Fatalf("tiers add up to %d, want %d", got, tieredSeen)
		}
		if ts.Truncated != truncated {
			rt.Fatalf("truncated = %d, want %d", ts.Truncated, truncated)
		}
		if passed := ts.Compacted + ts.Empty + ts.Exempt; passed+tieredSeen != n {
			rt.Fatalf("%d passed through + %d tiered != %d results", passed, tieredSeen, n)
		}
	})
}
