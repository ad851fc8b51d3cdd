package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Model is what the system knows of one model: the size of its context
// window, which automatic compaction watches, and its prices, which cost
// figures use. Configure one under [models."provider/model"]; a key also
// covers dated versions of the model ("anthropic/claude-sonnet-4-5"
// covers "anthropic/claude-sonnet-4-5-20250929").
type Model struct {
	// ContextWindow is the most tokens a request may hold; 0 is unknown
	// (no automatic compaction).
	ContextWindow int `toml:"context_window" json:"context_window,omitempty"`
	// Prices in US dollars per million tokens: input not read from the
	// cache, output, input read from the cache, input written to it.
	// All zero means no price is known: the cost of their tokens is
	// reported as unknown, never as free, unless Free says so.
	Input      float64 `toml:"input" json:"input,omitempty"`
	Output     float64 `toml:"output" json:"output,omitempty"`
	CacheRead  float64 `toml:"cache_read" json:"cache_read,omitempty"`
	CacheWrite float64 `toml:"cache_write" json:"cache_write,omitempty"`
	// Free says that the model's tokens cost nothing (a model run on your
	// own machine): its cost is $0, so cost budgets can hold it.
	Free bool `toml:"free" json:"free,omitempty"`
}

// Priced reports whether the model has a price (free is one).
func (m Model) Priced() bool {
	return m.Free || m.Input != 0 || m.Output != 0 || m.CacheRead != 0 || m.CacheWrite != 0
}

// Compaction configures automatic compaction of a conversation.
type Compaction struct {
	// Auto compacts a session before a model request once its context
	// passes Threshold of the model's context window. On by default.
	Auto *bool `toml:"auto"`
	// Threshold is that share, above 0 and below 1 (default 0.8).
	Threshold float64 `toml:"threshold"`
}

// DefaultCompactionThreshold is the share of the context window that
// triggers automatic compaction.
const DefaultCompactionThreshold = 0.8

// Enabled reports whether automatic compaction is on.
func (c Compaction) Enabled() bool { return c.Auto == nil || *c.Auto }

// DefaultModels returns the built-in model table: windows and list prices
// of common Anthropic and OpenAI models (USD per million tokens, 5-minute
// cache writes). Local models have none.
func DefaultModels() map[string]Model {
	claude := func(window int, in, out float64) Model {
		// Anthropic prices cache reads at a tenth of input, writes at 1.25×.
		return Model{ContextWindow: window, Input: in, Output: out, CacheRead: in / 10, CacheWrite: in * 1.25}
	}
	gpt := func(window int, in, cached, out float64) Model {
		// OpenAI caches automatically, for free: there is no write price.
		return Model{ContextWindow: window, Input: in, Output: out, CacheRead: cached}
	}
	return map[string]Model{
		OfflineModel:                  {Free: true},
		"anthropic/claude-opus-4-5":   claude(200_000, 5, 25),
		"anthropic/claude-opus-4-1":   claude(200_000, 15, 75),
		"anthropic/claude-opus-4-0":   claude(200_000, 15, 75),
		"anthropic/claude-opus-4":     claude(200_000, 15, 75),
		"anthropic/claude-sonnet-4-5": claude(200_000, 3, 15),
		"anthropic/claude-sonnet-4-0": claude(200_000, 3, 15),
		"anthropic/claude-sonnet-4":   claude(200_000, 3, 15),
		"anthropic/claude-3-7-sonnet": claude(200_000, 3, 15),
		"anthropic/claude-haiku-4-5":  claude(200_000, 1, 5),
		"anthropic/claude-3-5-haiku":  claude(200_000, 0.8, 4),
		"openai/gpt-5":                gpt(400_000, 1.25, 0.125, 10),
		"openai/gpt-5-mini":           gpt(400_000, 0.25, 0.025, 2),
		"openai/gpt-5-nano":           gpt(400_000, 0.05, 0.005, 0.4),
		"openai/gpt-4.1":              gpt(1_047_576, 2, 0.5, 8),
		"openai/gpt-4.1-mini":         gpt(1_047_576, 0.4, 0.1, 1.6),
		"openai/gpt-4.1-nano":         gpt(1_047_576, 0.1, 0.025, 0.4),
		"openai/gpt-4o":               gpt(128_000, 2.5, 1.25, 10),
		"openai/gpt-4o-mini":          gpt(128_000, 0.15, 0.075, 0.6),
		"openai/o3":                   gpt(200_000, 2, 0.5, 8),
		"openai/o4-mini":              gpt(200_000, 1.1, 0.275, 4.4),
	}
}

// ModelInfo returns what the configuration knows of a "provider/model"
// string: its own entry, or else the longest entry it extends with a
// "-suffix" (a dated version).
func (c Config) ModelInfo(model string) (Model, bool) {
	if m, ok := c.Models[model]; ok {
		return m, true
	}
	best := ""
	for k := range c.Models {
		if len(k) > len(best) && strings.HasPrefix(model, k+"-") {
			best = k
		}
	}
	if best == "" {
		return Model{}, false
	}
	return c.Models[best], true
}

// validateModels checks the model table and the compaction settings.
func (c Config) validateModels() []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(c.Models)) {
		m := c.Models[name]
		key := fmt.Sprintf("models.%q", name)
		if _, _, err := ParseModel(name); err != nil {
			errs = append(errs, &Error{Key: key, Msg: err.Error()})
		}
		if m.ContextWindow < 0 {
			errs = append(errs, &Error{Key: key + ".context_window", Msg: "must not be negative"})
		}
		for _, p := range []struct {
			key string
			v   float64
		}{{"input", m.Input}, {"output", m.Output}, {"cache_read", m.CacheRead}, {"cache_write", m.CacheWrite}} {
			if p.v < 0 || p.v != p.v {
				errs = append(errs, &Error{Key: key + "." + p.key, Msg: "must be a price of 0 or more (USD per million tokens)"})
			}
			if m.Free && p.v != 0 {
				errs = append(errs, &Error{Key: key + "." + p.key, Msg: "a model marked free = true has no price: remove one or the other"})
			}
		}
	}
	if t := c.Compaction.Threshold; !(t > 0 && t < 1) {
		errs = append(errs, &Error{Key: "compaction.threshold", Msg: fmt.Sprintf("must be above 0 and below 1 (a share of the context window), not %v", t)})
	}
	return errs
}
