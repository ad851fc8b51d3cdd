package openai

import (
	"testing"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/llmtest"
)

// TestLive talks to the real API when OPENAI_API_KEY is set. The model is
// SUPERAGENTS_LIVE_OPENAI_MODEL, by default gpt-4.1-mini.
func TestLive(t *testing.T) {
	llmtest.Live(t, "OPENAI_API_KEY", "OPENAI_BASE_URL", "SUPERAGENTS_LIVE_OPENAI_MODEL", "gpt-4.1-mini",
		func(key, baseURL string) (superagents.Provider, error) {
			return New(Options{APIKey: key, BaseURL: baseURL, Limits: llmtest.SuiteLimits(), StreamUsage: true, MaxCompletionTokens: true})
		})
}
