package forkctx

import (
	"fmt"
	"strings"
)

// preamble tells the child what the digest is and what was cut from it.
// Every number comes from the stats or the configuration.
func (p *Pipeline) preamble(st Stats) string {
	c := p.cfg
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	line("You are a background task forked from a parent agent. The parent's conversation up to the fork follows as a digest made for you: it is not verbatim, and how it was made is said after it.")
	line("")
	line("How the digest was made:")

	switch cs := st.Compaction; {
	case cs.Found:
		line("- Compaction: the parent's conversation was compacted; the digest starts from the latest compaction summary, and the %d messages before it are left out.", st.DiscardedMessages)
	case st.DiscardedMessages > 0:
		line("- Compaction: no compaction summary was found; the digest starts after the parent's last context reset (%d earlier messages left out).", st.DiscardedMessages)
	default:
		line("- Compaction: no compaction summary was found; the digest covers the parent's whole conversation.")
	}
	if st.Compaction.Pending {
		line("  A later compaction had not finished at the fork and was ignored.")
	}

	t := st.Tools
	if t.Tiers[0]+t.Tiers[1]+t.Tiers[2]+t.Compacted+t.Empty+t.Exempt == 0 {
		line("- Tool results: there were none.")
	} else {
		line("- Tool results, counted from the newest: %d in tier 1 (kept whole), %d in tier 2 (cut to %d characters: %d were cut), %d in tier 3 (cut to %d characters: %d were cut).",
			t.Tiers[0], t.Tiers[1], c.Tier2Chars, t.TruncatedByTier[1], t.Tiers[2], c.Tier3Chars, t.TruncatedByTier[2])
		if t.Truncated > 0 {
			line("  Each cut result says so and gives its original length. %d kept their beginning and end (output of tools named like %s, or results that look like errors); %d kept only their beginning.",
				t.HeadTail, strings.Join(c.HeadTailTools, ", "), t.Truncated-t.HeadTail)
		}
		if n := t.Compacted + t.Empty + t.Exempt; n > 0 {
			line("  %d passed through unchanged: %d already cleared, %d empty, %d from tools that are never cut (%s).",
				n, t.Compacted, t.Empty, t.Exempt, strings.Join(c.NoTruncateTools, ", "))
		}
		line("  Tool parameters are shown up to %d, %d and %d characters by tier.", c.Tier1ParamChars, c.Tier2ParamChars, c.Tier3ParamChars)
	}

	r := st.Removed
	trim := "" // said only when trimming goes below the limit
	if c.Target() < c.MaxChars {
		trim = fmt.Sprintf(" (once over, trimmed to %d)", c.Target())
	}
	if r.Messages == 0 {
		line("- Removed messages: none. Limits: %d characters%s and %d tokens.", c.MaxChars, trim, c.MaxTokens)
	} else {
		var why []string
		if r.ForChars > 0 {
			steps := ""
			if c.DropStep() > 0 {
				steps = fmt.Sprintf(", in steps of %d characters so that later forks start at the same message", c.DropStep())
			}
			why = append(why, fmt.Sprintf("%d because the digest exceeded %d characters (it was trimmed to fit within %d%s)", r.ForChars, c.MaxChars, c.Target(), steps))
		}
		if r.ForTokens > 0 {
			why = append(why, fmt.Sprintf("%d because it exceeded %d tokens", r.ForTokens, c.MaxTokens))
		}
		line("- Removed messages: %d of the oldest, %s.", r.Messages, strings.Join(why, ", and "))
		if r.SummaryRemoved {
			line("  Even the compaction summary had to be removed.")
		}
	}
	if r.NewestCut {
		line("- The newest message alone was over the limits and was cut in the middle to fit.")
	}
	if st.ReasoningOmitted > 0 {
		line("- The parent's reasoning was omitted (parts left out: %d).", st.ReasoningOmitted)
	}
	line("- Size: %d characters, about %d tokens (%s).", st.FinalChars, st.FinalTokens, st.TokenEncoding)
	line("")
	b.WriteString("Tool output in the digest may be incomplete. When you need the complete content of a file or of a command's output, read the file or run the command again instead of relying on the digest.")
	return b.String()
}
