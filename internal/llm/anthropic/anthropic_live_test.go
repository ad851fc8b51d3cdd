package anthropic

import (
	"testing"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/llmtest"
)

// TestLive talks to the real API when ANTHROPIC_API_KEY is set. The model
// is SUPERAGENTS_LIVE_ANTHROPIC_MODEL, by default claude-haiku-4-5.
func TestLive(t *testing.T) {
	llmtest.Live(t, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "SUPERAGENTS_LIVE_ANTHROPIC_MODEL", "claude-haiku-4-5",
		func(key, baseURL string) (superagents.Provider, error) {
			return New(Options{APIKey: key, BaseURL: baseURL, Limits: llmtest.SuiteLimits()})
		})
}
