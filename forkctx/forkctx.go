// Package forkctx builds the context a forked background task inherits from
// its parent: not the raw history but a digest of it, plus a preamble that
// tells the child what was cut.
//
// The pipeline is pure and deterministic (the same history and
// configuration give byte-identical output):
//
//  1. Compaction boundary: keep from the latest complete compaction summary
//     on (a user message with a compaction part, then an assistant message
//     with Summary set). A marker whose summary has not arrived yet is
//     ignored in favour of the previous complete boundary.
//  2. Graduated truncation of tool results, counted newest to oldest: the
//     newest Tier1Results stay whole, the next Tier2Results are cut to
//     Tier2Chars, older ones to Tier3Chars. Shell-like tools and results
//     that look like errors keep head and tail; others keep the head.
//  3. Formatting: "User:" / "Agent:" labels, "[Tool: name] params" with the
//     parameters cut by tier, each result under its call (matched by call
//     id). Reasoning is omitted.
//  4. Character budget: a digest longer than MaxChars loses its oldest
//     messages until it is at most TargetChars long.
//  5. Token cap: a digest of more than MaxTokens tokens loses its oldest
//     messages until it has at most MaxTokens.
//
// In both budgets the compaction summary is the last message given up, and
// the newest message is never dropped: when it alone is too large it is cut
// (head and tail), so both budgets are hard caps. Each message is formatted
// and tokenized once, so the work is linear in the size of the history.
package forkctx

import (
	"fmt"
	"slices"
	"strings"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tokens"
)

// CompactedMarker is what a tool result contains once its content has been
// cleared to save room. Such results pass through unchanged.
const CompactedMarker = "[Old tool result content cleared]"

// Separators of the digest: between messages, and the token count assumed
// for one (an estimate: "\n\n" is one token in the supported encodings).
const (
	messageSeparator      = "\n\n"
	messageSeparatorChars = 2
	messageSeparatorTok   = 1
)

// Pipeline turns a parent's history into a fork context. It holds the
// configuration and the tokenizer, which is costly to build: make one and
// reuse it. A Pipeline is safe for concurrent use.
type Pipeline struct {
	cfg           Config
	counter       *tokens.Counter
	headTailTools []string // lower case
	errorPatterns patternSet
	// compacted finds CompactedMarker; being long, it lets the search skip
	// most of each output.
	compacted patternSet
	// resultChars and paramChars are the sizes by tier (index 0 is tier 1);
	// -1 means whole.
	resultChars, paramChars [3]int
}

// New validates cfg and builds a pipeline with a tokenizer of its own.
func New(cfg Config) (*Pipeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	counter, err := tokens.NewCounter(cfg.TokenEncoding)
	if err != nil {
		return nil, fmt.Errorf("fork context pipeline: %w", err)
	}
	return NewWithCounter(cfg, counter)
}

// NewWithCounter validates cfg and builds a pipeline that counts with
// counter, which may be shared. cfg.TokenEncoding must be empty or name the
// counter's encoding.
func NewWithCounter(cfg Config, counter *tokens.Counter) (*Pipeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if counter == nil {
		return nil, fmt.Errorf("%w: fork context pipeline: no token counter", sa.ErrInvalid)
	}
	if cfg.TokenEncoding != "" && cfg.TokenEncoding != counter.Encoding() {
		return nil, fmt.Errorf("%w: fork context pipeline: token_encoding %q but the counter uses %q",
			sa.ErrInvalid, cfg.TokenEncoding, counter.Encoding())
	}
	cfg.TokenEncoding = counter.Encoding()
	p := &Pipeline{
		cfg:           cfg,
		counter:       counter,
		errorPatterns: newPatternSet(cfg.ErrorPatterns),
		compacted:     newPatternSet([]string{CompactedMarker}),
		resultChars:   [3]int{-1, cfg.Tier2Chars, cfg.Tier3Chars},
		paramChars:    [3]int{cfg.Tier1ParamChars, cfg.Tier2ParamChars, cfg.Tier3ParamChars},
	}
	for _, t := range cfg.HeadTailTools {
		p.headTailTools = append(p.headTailTools, strings.ToLower(t))
	}
	// Keep a private copy: the caller may reuse its slices.
	p.cfg.HeadTailTools = slices.Clone(cfg.HeadTailTools)
	p.cfg.ErrorPatterns = slices.Clone(cfg.ErrorPatterns)
	p.cfg.NoTruncateTools = slices.Clone(cfg.NoTruncateTools)
	return p, nil
}

// Config returns the pipeline's configuration.
func (p *Pipeline) Config() Config {
	c := p.cfg
	c.HeadTailTools = slices.Clone(c.HeadTailTools)
	c.ErrorPatterns = slices.Clone(c.ErrorPatterns)
	c.NoTruncateTools = slices.Clone(c.NoTruncateTools)
	return c
}

// Result is a fork context: the preamble, the digest of the parent's
// history, and what the pipeline did to get there.
type Result struct {
	Preamble string `json:"preamble"`
	Digest   string `json:"digest"`
	Stats    Stats  `json:"stats"`
	// bounds are the byte offsets in Digest where its stable chunks end
	// (see stableBounds).
	bounds []int
}

// Text returns exactly what a forked child receives as its first message:
// the preamble's first paragraph, the digest between markers, then the
// rest of the preamble (how the digest was made), whose figures change
// from fork to fork and so come after what later forks share.
func (r Result) Text() string {
	return strings.Join(r.Parts(), messageSeparator)
}

// Parts returns Text cut into the pieces a prompt cache can reuse: the
// start of the digest up to the end of each stable chunk, which later
// forks of the same parent receive unchanged, then the rest. Joined with
// blank lines they are Text; a provider that caches by block (Anthropic)
// sends each as a block of its own.
func (r Result) Parts() []string {
	intro, notes, _ := strings.Cut(r.Preamble, messageSeparator)
	parts := make([]string, 0, len(r.bounds)+1)
	start := 0
	for _, end := range r.bounds {
		parts = append(parts, r.Digest[start:end])
		start = end + len(messageSeparator)
	}
	parts = append(parts, r.Digest[start:])
	parts[0] = intro + "\n\n<parent_conversation>\n" + parts[0]
	parts[len(parts)-1] += "\n</parent_conversation>\n\n" + notes
	return parts
}

// Build runs the pipeline over history, the parent's effective history
// oldest first. It fails only on a malformed message.
func (p *Pipeline) Build(history []sa.Message) (Result, error) {
	for i, m := range history {
		if err := m.Validate(); err != nil {
			return Result{}, fmt.Errorf("fork context: history message %d (id %d): %w", i+1, m.ID, err)
		}
	}
	st := Stats{OriginalMessages: len(history), TokenEncoding: p.cfg.TokenEncoding}
	for _, m := range history {
		st.InputBytes += messageBytes(m)
	}

	start, compaction := findStart(history)
	st.Compaction = compaction
	st.DiscardedMessages = start
	kept := history[start:]

	plan := p.planTiers(kept, &st.Tools)
	blocks := p.format(kept, plan, compaction.Found, &st)

	b := budget{blocks: blocks, order: removalOrder(blocks), alive: len(blocks), headRatio: p.cfg.HeadRatio}
	chars := b.total(func(b *block) int { return b.chars }, messageSeparatorChars)
	st.FormattedChars = chars
	if chars > p.cfg.MaxChars {
		st.Removed.ForChars = b.trimChars(chars, p.cfg.Target(), p.cfg.DropStep())
	}
	st.FinalTokens, st.Removed.ForTokens = b.capTokens(p.counter, p.cfg.MaxTokens)
	st.Removed.Messages = st.Removed.ForChars + st.Removed.ForTokens
	st.Removed.SummaryRemoved = compaction.Found && len(blocks) > 0 && blocks[0].summary && blocks[0].removed
	st.Removed.NewestCut = b.newestCut

	digest := b.join()
	bounds := b.stableBounds(p.cfg.chunkChars())
	st.StableChunks = len(bounds)
	if len(bounds) > 0 {
		st.StableChars = charCount(digest[:bounds[len(bounds)-1]])
	}
	st.FinalChars = b.total(func(b *block) int { return b.chars }, messageSeparatorChars)
	st.FinalMessages = b.messages()
	if len(blocks) == 0 {
		// Nothing shows (reasoning only, audit records): the kept messages
		// are all still there, there was just nothing to say about them.
		st.FinalMessages = len(kept)
	}
	return Result{Preamble: p.preamble(st), Digest: digest, Stats: st, bounds: bounds}, nil
}

// messageBytes is the size of a message's content as received.
func messageBytes(m sa.Message) int {
	n := 0
	for _, part := range m.Parts {
		n += len(part.Text) + len(part.Input) + len(part.Output)
	}
	return n
}

// findStart returns the index of the first message to keep: the summary of
// the latest complete compaction boundary, or the first message after the
// latest clear (replay normally cuts there already), or 0.
func findStart(history []sa.Message) (int, CompactionStats) {
	var cs CompactionStats
	start, pendingMarker, summary := 0, -1, -1
	for i, m := range history {
		switch {
		case m.Kind == sa.KindClear:
			start, pendingMarker, summary = i+1, -1, -1
			cs.Boundaries = 0
		case m.Role == sa.RoleUser && hasCompaction(m):
			pendingMarker = i
		case m.Role == sa.RoleAssistant && pendingMarker >= 0:
			// The marker's summary is the next assistant message; any other
			// reply means the compaction was abandoned.
			if m.Summary {
				summary = i
				cs.Boundaries++
			}
			pendingMarker = -1
		}
	}
	cs.Pending = pendingMarker >= 0
	if summary < 0 {
		return start, cs
	}
	cs.Found = true
	cs.SummaryIndex = summary
	cs.SummaryMessageID = history[summary].ID
	return summary, cs
}

func hasCompaction(m sa.Message) bool {
	return slices.ContainsFunc(m.Parts, func(p sa.Part) bool { return p.Type == sa.PartCompaction })
}
