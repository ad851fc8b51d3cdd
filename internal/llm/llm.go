// Package llm turns model strings ("anthropic/claude-sonnet-4-5",
// "ollama/qwen3", "offline") into providers, using the configuration to
// find each provider's protocol, base URL, key and limits.
//
// The providers themselves live in sub-packages: anthropic (Messages API),
// openai (Chat Completions and compatible servers), offline (no network).
// Test servers that speak the real wire formats are in llmtest.
package llm

import (
	"errors"
	"fmt"
	"net/url"
	"sync"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/anthropic"
	"github.com/superagents/superagents/internal/llm/internal/wire"
	"github.com/superagents/superagents/internal/llm/offline"
	"github.com/superagents/superagents/internal/llm/openai"
)

// Errors a provider's stream or Open may return, for errors.Is. Model
// strings that do not parse are config.ErrInvalidModel, unknown providers
// config.ErrUnknownProvider.
var (
	// ErrNoAPIKey: the provider needs a key and none is configured.
	ErrNoAPIKey = errors.New("no API key")
	// ErrStreamIdle: the model sent nothing for limits.stream_idle_timeout.
	ErrStreamIdle = wire.ErrIdle
	// ErrRequestTimeout: no response within limits.request_timeout.
	ErrRequestTimeout = wire.ErrTimeout
	// ErrCut: the connection closed before the response was complete.
	ErrCut = wire.ErrCut
)

// Open returns the provider for a model string and the model name to send
// to it. It builds a new provider each time; a long-running program
// should keep a Registry instead, whose providers reuse their connections.
func Open(model string, cfg config.Config) (superagents.Provider, string, error) {
	return NewRegistry(cfg).Open(model)
}

// Registry opens providers from one configuration and keeps them, one per
// provider name. It is safe for concurrent use.
type Registry struct {
	cfg       config.Config
	mu        sync.Mutex
	providers map[string]superagents.Provider
}

// NewRegistry returns a registry for cfg (from config.Load).
func NewRegistry(cfg config.Config) *Registry {
	return &Registry{cfg: cfg, providers: make(map[string]superagents.Provider)}
}

// Open returns the provider for a model string and the model name to send
// to it. Errors say what to fix: an unknown provider lists the known ones,
// a missing key names the variable to set.
func (r *Registry) Open(model string) (superagents.Provider, string, error) {
	name, pc, modelName, err := r.cfg.Resolve(model)
	if err != nil {
		return nil, "", err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if p, ok := r.providers[name]; ok {
		return p, modelName, nil
	}
	p, err := build(name, pc, r.cfg.Limits)
	if err != nil {
		return nil, "", fmt.Errorf("model %q: %w", model, err)
	}
	r.providers[name] = p
	return p, modelName, nil
}

// build makes the provider of one configuration entry.
func build(name string, pc config.Provider, limits config.Limits) (superagents.Provider, error) {
	if pc.Type != config.TypeOffline && pc.APIKeyEnv != "" && pc.APIKey.IsZero() {
		return nil, fmt.Errorf("%w for provider %q: set %s (or api_key_env or api_key under [providers.%s] in config.toml)",
			ErrNoAPIKey, name, pc.APIKeyEnv, name)
	}
	switch pc.Type {
	case config.TypeAnthropic:
		return anthropic.New(anthropic.Options{Name: name, APIKey: pc.APIKey.Reveal(), BaseURL: pc.BaseURL, Limits: limits})
	case config.TypeOpenAI:
		return openai.New(openai.Options{
			Name:        name,
			APIKey:      pc.APIKey.Reveal(),
			BaseURL:     pc.BaseURL,
			Limits:      limits,
			StreamUsage: pc.UsageInStream(),
			// OpenAI itself has renamed max_tokens (its reasoning models
			// refuse the old name); compatible servers still take it.
			MaxCompletionTokens: isOpenAI(name, pc.BaseURL),
		})
	case config.TypeOffline:
		var opts offline.Options
		if pc.Script != "" {
			script, err := offline.LoadScript(pc.Script)
			if err != nil {
				return nil, err
			}
			opts.Script = script
		}
		return offline.New(opts), nil
	}
	return nil, fmt.Errorf("provider %q has unknown type %q", name, pc.Type)
}

// isOpenAI reports whether a provider is OpenAI itself: the built-in
// "openai" provider (even pointed elsewhere by OPENAI_BASE_URL) or any
// provider whose base URL is OpenAI's.
func isOpenAI(name, baseURL string) bool {
	u, err := url.Parse(baseURL)
	return name == "openai" || err == nil && u.Hostname() == "api.openai.com"
}
