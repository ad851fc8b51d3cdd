package forkctx

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Preview renders a result for people (`superagents context ID`): the
// preamble, the digest and a block of stats.
func Preview(r Result) string {
	var b strings.Builder
	section := func(title string) { fmt.Fprintf(&b, "=== %s ===\n", title) }
	section("Preamble")
	b.WriteString(r.Preamble)
	b.WriteString("\n\n")
	section("Digest")
	if r.Digest == "" {
		b.WriteString("(empty: the parent has no conversation to inherit)")
	} else {
		b.WriteString(r.Digest)
	}
	b.WriteString("\n\n")
	section("Stats")
	s := r.Stats
	row := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "%-14s %s\n", name, fmt.Sprintf(format, args...))
	}
	row("messages", "%d -> %d (%d before the start, %d removed: %d for characters, %d for tokens)",
		s.OriginalMessages, s.FinalMessages, s.DiscardedMessages, s.Removed.Messages, s.Removed.ForChars, s.Removed.ForTokens)
	row("characters", "%d formatted -> %d final (input %d bytes)", s.FormattedChars, s.FinalChars, s.InputBytes)
	row("tokens", "%d (%s, an estimate for Claude models)", s.FinalTokens, s.TokenEncoding)
	switch c := s.Compaction; {
	case c.Found:
		row("compaction", "summary at message %d (index %d); complete boundaries seen: %d", c.SummaryMessageID, c.SummaryIndex, c.Boundaries)
	default:
		row("compaction", "none found")
	}
	if s.Compaction.Pending {
		row("", "a compaction in progress was ignored")
	}
	t := s.Tools
	row("tool results", "tier 1: %d, tier 2: %d (%d cut), tier 3: %d (%d cut); %d cut in all, %d head+tail",
		t.Tiers[0], t.Tiers[1], t.TruncatedByTier[1], t.Tiers[2], t.TruncatedByTier[2], t.Truncated, t.HeadTail)
	row("", "passed through: %d compacted, %d empty, %d exempt", t.Compacted, t.Empty, t.Exempt)
	if s.Removed.SummaryRemoved {
		row("", "the compaction summary was removed")
	}
	if s.Removed.NewestCut {
		row("", "the newest message was cut to fit")
	}
	row("reasoning", "parts omitted: %d", s.ReasoningOmitted)
	return b.String()
}

// JSON renders a result as the object {preamble, digest, stats}, indented,
// for `superagents context ID --json`.
func (r Result) JSON() ([]byte, error) {
	out, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode fork context: %w", err)
	}
	return out, nil
}
