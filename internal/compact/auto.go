package compact

import (
	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
)

// Auto says when a conversation is compacted before its next model
// request: once its context passes Threshold of the model's Window.
type Auto struct {
	// Window is the model's context window in tokens.
	Window int
	// Threshold is the share of Window that triggers compaction
	// (config.DefaultCompactionThreshold when 0).
	Threshold float64
}

// ForModel returns the automatic compaction of a "provider/model" string
// under cfg, or nil when it is turned off or the model's window is
// unknown.
func ForModel(cfg config.Config, model string) *Auto {
	m, ok := cfg.ModelInfo(model)
	if !cfg.Compaction.Enabled() || !ok || m.ContextWindow <= 0 {
		return nil
	}
	return &Auto{Window: m.ContextWindow, Threshold: cfg.Compaction.Threshold}
}

// Limit is the number of tokens past which a context is compacted.
func (a Auto) Limit() int {
	t := a.Threshold
	if t <= 0 || t >= 1 {
		t = config.DefaultCompactionThreshold
	}
	return int(float64(a.Window) * t)
}

// Due reports whether a request made of history (as stored), the system
// prompt and the tools should be compacted first, and the context size it
// estimated. A compaction needs something to replace: a history that is
// only a summary (and what cannot be cut) is never due.
func (a Auto) Due(history []sa.Message, system string, tools []sa.ToolSpec) (used int, due bool) {
	start, _ := Boundary(history)
	used = Estimate(history[start+1:], system, tools)
	if start >= 0 {
		used += Estimate(history[start:start+1], "", nil)
	}
	return used, used > a.Limit() && hasTurns(history[start+1:])
}

// Estimate is the size in tokens of a context made of msgs, the system
// prompt and the tools. The newest assistant message that reports usage
// tells what the model counted up to it (its input, cached or not, and its
// output); what follows it, or everything when none does, is estimated at
// four bytes a token. A summary's usage is not used: it counts the
// context the summary replaced.
func Estimate(msgs []sa.Message, system string, tools []sa.ToolSpec) int {
	from, base := 0, 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == sa.RoleAssistant && !m.Summary && !m.Usage.IsZero() {
			u := m.Usage
			base = int(u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.OutputTokens)
			from = i + 1
			break
		}
	}
	bytes := 0
	if from == 0 {
		bytes += len(system)
		for _, t := range tools {
			bytes += len(t.Name) + len(t.Description) + len(t.InputSchema)
		}
	}
	for _, m := range msgs[from:] {
		for _, p := range m.Parts {
			bytes += len(p.Text) + len(p.Name) + len(p.Input) + len(p.Output)
		}
	}
	return base + (bytes+3)/4
}
