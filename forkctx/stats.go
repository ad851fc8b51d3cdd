package forkctx

// Stats says what the pipeline did. It marshals to JSON with snake_case
// names, for the HTTP API and `superagents context --json`.
type Stats struct {
	// OriginalMessages is the length of the history received;
	// FinalMessages, how many of them the digest still stands for.
	OriginalMessages int `json:"original_messages"`
	FinalMessages    int `json:"final_messages"`
	// DiscardedMessages were left out before the compaction summary (or a
	// clear) the digest starts from.
	DiscardedMessages int `json:"discarded_messages"`
	// InputBytes is the size of the history's text, parameters and tool
	// output as received.
	InputBytes int `json:"input_bytes"`
	// FormattedChars is the digest's length after truncation and before
	// the budgets; FinalChars, its length in the end.
	FormattedChars int `json:"formatted_chars"`
	FinalChars     int `json:"final_chars"`
	// FinalTokens estimates the digest's tokens in TokenEncoding.
	FinalTokens   int    `json:"final_tokens"`
	TokenEncoding string `json:"token_encoding"`
	// StableChars is the length of the digest's start that later forks of
	// the same parent receive unchanged (while it only grows and does not
	// lose more old messages), in StableChunks chunks that a prompt cache
	// reads back (Result.Parts).
	StableChars  int `json:"stable_chars"`
	StableChunks int `json:"stable_chunks"`
	// ReasoningOmitted counts the reasoning parts left out.
	ReasoningOmitted int `json:"reasoning_omitted"`

	Compaction CompactionStats `json:"compaction"`
	Tools      ToolStats       `json:"tools"`
	Removed    RemovalStats    `json:"removed"`
}

// CompactionStats describes the compaction boundary.
type CompactionStats struct {
	// Found is set when the digest starts from a compaction summary.
	Found bool `json:"found"`
	// SummaryMessageID and SummaryIndex (0-based, in the history received)
	// locate that summary.
	SummaryMessageID int64 `json:"summary_message_id,omitempty"`
	SummaryIndex     int   `json:"summary_index,omitempty"`
	// Boundaries counts the complete boundaries seen; only the latest counts.
	Boundaries int `json:"boundaries"`
	// Pending is set when a compaction marker has no summary yet (a
	// compaction in progress); it was ignored.
	Pending bool `json:"pending"`
}

// ToolStats describes the truncation of tool results.
type ToolStats struct {
	// Tiers counts the results in tier 1, 2 and 3. Their sum is the number
	// of results that may be cut: not compacted, not empty, not exempt.
	Tiers [3]int `json:"tiers"`
	// Truncated counts the results actually cut, TruncatedByTier by tier
	// (tier 1 is never cut), and HeadTail those cut keeping head and tail.
	Truncated       int    `json:"truncated"`
	TruncatedByTier [3]int `json:"truncated_by_tier"`
	HeadTail        int    `json:"head_tail"`
	// Compacted, Empty and Exempt count results that passed through
	// without taking a tier slot.
	Compacted int `json:"compacted"`
	Empty     int `json:"empty"`
	Exempt    int `json:"exempt"`
}

// RemovalStats describes what the budgets removed.
type RemovalStats struct {
	// Messages is ForChars + ForTokens: history messages removed, oldest
	// first, to meet the character budget and then the token cap.
	Messages  int `json:"messages"`
	ForChars  int `json:"for_chars"`
	ForTokens int `json:"for_tokens"`
	// SummaryRemoved is set when even the compaction summary had to go.
	SummaryRemoved bool `json:"summary_removed"`
	// NewestCut is set when the newest message alone exceeded a budget and
	// was cut to fit.
	NewestCut bool `json:"newest_cut"`
}
