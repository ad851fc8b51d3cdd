// Package config loads the superagents configuration: which model to use,
// how to reach each model provider, and the limits of a model call.
//
// Values come, in increasing order of precedence, from built-in defaults,
// the user file ($XDG_CONFIG_HOME/superagents/config.toml, by default
// ~/.config/superagents/config.toml), the project file
// (.superagents/config.toml in the workspace), environment variables, and
// finally command-line flags, which the caller applies with
// Config.Apply. The project file overrides the user file key by key, but
// only tightens permissions and chooses where requests, keys and data go
// only in a trusted project (see project.go).
//
// Files are decoded strictly: an unknown key or a value of the wrong type is
// an error that names the file and the line.
//
// Other parts of the system own further sections of the same file. To add
// one, add a field with a toml tag to Config (for example
// `Tasks tasks.Config `toml:"tasks"“), set its defaults in Default and
// check it in Config.Validate; decoding, merging and error reporting need
// no change.
package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/superagents/superagents/forkctx"
	"github.com/superagents/superagents/internal/tools"
	"github.com/superagents/superagents/sandbox"
)

// Provider types: the wire protocol a provider speaks.
const (
	TypeAnthropic = "anthropic" // Anthropic Messages API
	TypeOpenAI    = "openai"    // OpenAI Chat Completions API and compatible servers
	TypeOffline   = "offline"   // the built-in offline model
)

// OfflineModel is the model string of the built-in offline model.
const OfflineModel = "offline"

// Errors callers test for with errors.Is.
var (
	// ErrInvalidModel: a model string that is not provider/model.
	ErrInvalidModel = errors.New("invalid model")
	// ErrUnknownProvider: a model string names a provider that is not
	// configured.
	ErrUnknownProvider = errors.New("unknown provider")
)

// Config is the whole configuration.
type Config struct {
	// Model is the default model, as "provider/model" or "offline".
	Model string `toml:"model"`
	// Providers are the model providers by name: the built-in ones and any
	// custom endpoints.
	Providers map[string]Provider `toml:"providers"`
	// Limits apply to every model call and agent turn.
	Limits Limits `toml:"limits"`
	// Tasks limits background tasks.
	Tasks Tasks `toml:"tasks"`
	// Fork configures the context a forked task inherits.
	Fork forkctx.Config `toml:"fork"`
	// Permissions limit what the built-in tools may do.
	Permissions tools.Policy `toml:"permissions"`
	// Sandbox confines the commands agents run. A project file may make
	// it stricter, never looser.
	Sandbox sandbox.Config `toml:"sandbox"`
	// Database chooses the store: SQLite (the default) or PostgreSQL.
	Database Database `toml:"database"`
	// Models are context windows and prices by "provider/model".
	Models map[string]Model `toml:"models"`
	// Compaction configures automatic compaction.
	Compaction Compaction `toml:"compaction"`
	// MCP lists the user's MCP servers (see mcp.go).
	MCP MCP `toml:"mcp"`
	// TrustedProjects are project directories whose .mcp.json servers may
	// run (user file only).
	TrustedProjects []string `toml:"trusted_projects"`

	// ModelOrigin says where Model came from: a file path, "env
	// SUPERAGENTS_MODEL", "flag" or "default".
	ModelOrigin string `toml:"-"`
	// Defaulted is set when nothing chose a model and the loader picked one
	// (see Notice).
	Defaulted bool `toml:"-"`
	// Files lists the configuration files that were read, lowest precedence
	// first.
	Files []string `toml:"-"`
	// Warnings are settings of the project file that were ignored, one
	// sentence per file and reason, for the caller to show the user.
	Warnings []string `toml:"-"`
}

// Provider says how to reach one model provider.
type Provider struct {
	// Type is the protocol: "anthropic", "openai" or "offline". Built-in
	// providers have it already; custom ones must set it.
	Type string `toml:"type"`
	// BaseURL is the API's base URL (for "openai" types it usually ends in
	// /v1).
	BaseURL string `toml:"base_url"`
	// APIKey is the key itself. Prefer APIKeyEnv, which keeps the key out
	// of the file.
	APIKey Secret `toml:"api_key"`
	// APIKeyEnv names the environment variable that holds the key. When it
	// is set, the provider needs a key: a request without one is refused
	// with a message naming the variable.
	APIKeyEnv string `toml:"api_key_env"`
	// StreamUsage asks an "openai" provider to report token usage in the
	// stream (stream_options.include_usage). On by default; turn it off for
	// a server that rejects the option.
	StreamUsage *bool `toml:"stream_usage"`
	// Script is the offline model's script file (see package llm/offline).
	// A relative path is relative to the directory of the file that sets it.
	Script string `toml:"script"`

	// KeyOrigin says where APIKey came from ("env NAME" or a file path),
	// so messages can explain it without showing the key.
	KeyOrigin string `toml:"-"`
}

// UsageInStream reports whether to ask for usage in the stream.
func (p Provider) UsageInStream() bool { return p.StreamUsage == nil || *p.StreamUsage }

// Limits bound every model call.
type Limits struct {
	// RequestTimeout is how long to wait for a response to start (for its
	// headers), per attempt.
	RequestTimeout Duration `toml:"request_timeout"`
	// StreamIdleTimeout is how long a streaming response may stay silent
	// before the call fails.
	StreamIdleTimeout Duration `toml:"stream_idle_timeout"`
	// MaxRetries is how many times a request refused with 408, 409, 429 or
	// 5xx, or cut before it was answered, is tried again (with backoff that
	// honours Retry-After). A response whose output has begun is never
	// retried.
	MaxRetries int `toml:"max_retries"`
	// MaxOutputTokens caps each response when the request sets no cap.
	// 0 leaves it to the provider (Anthropic, which requires a cap, then
	// gets DefaultAnthropicMaxTokens).
	MaxOutputTokens int `toml:"max_output_tokens"`
	// MaxSteps caps the model requests of one agent turn (an agent
	// profile's max_steps takes precedence).
	MaxSteps int `toml:"max_steps"`
	// RepeatLimit ends a turn when the model makes the same tool call, with
	// the same arguments, for the RepeatLimit-th time.
	RepeatLimit int `toml:"repeat_limit"`
}

// Tasks limits background tasks.
type Tasks struct {
	// Concurrency is how many tasks run at once; more wait as queued.
	Concurrency int `toml:"concurrency"`
	// SpawnDepth is how deep tasks may launch tasks: a session at this
	// depth is not offered the task tools (a top-level session is depth 0).
	SpawnDepth int `toml:"spawn_depth"`
	// Timeout ends a task that runs longer (per launch or resume); a
	// superagents_task call may ask for less, never more.
	Timeout Duration `toml:"timeout"`
	// InactivityTimeout ends a task whose model and tools show no
	// progress for that long.
	InactivityTimeout Duration `toml:"inactivity_timeout"`
	// AskTimeout is how long a task's question waits for an answer
	// before the task is told that nobody answered and goes on.
	AskTimeout Duration `toml:"ask_timeout"`
	// MaxCost and MaxTokens are the budget of each task tree (a task and
	// every task it launched, resumes included): dollars at the model
	// table's prices, and tokens of every kind. 0 is no limit; a
	// superagents_task call may ask for less, never more.
	MaxCost   float64 `toml:"max_cost"`
	MaxTokens int64   `toml:"max_tokens"`
	// Heartbeat is how often a process that runs tasks marks itself
	// alive; StaleAfter is how old its mark may be before the others take
	// it for dead and end its tasks (0: the task manager's defaults).
	Heartbeat  Duration `toml:"heartbeat"`
	StaleAfter Duration `toml:"stale_after"`
}

// Task limit defaults.
const (
	DefaultTaskConcurrency       = 8
	DefaultSpawnDepth            = 3
	DefaultTaskTimeout           = 30 * time.Minute
	DefaultTaskInactivityTimeout = 5 * time.Minute
	DefaultAskTimeout            = 10 * time.Minute
	DefaultMaxSteps              = 50
	DefaultRepeatLimit           = 4
)

// DefaultShutdownTimeout is how long an HTTP server lets requests in
// flight finish on shutdown.
const DefaultShutdownTimeout = 10 * time.Second

// Limit defaults.
const (
	DefaultRequestTimeout    = 2 * time.Minute
	DefaultStreamIdleTimeout = 5 * time.Minute
	DefaultMaxRetries        = 2
	// DefaultAnthropicMaxTokens is the cap sent to Anthropic, which
	// requires one, when neither the request nor the limits set it.
	DefaultAnthropicMaxTokens = 8192
)

// Builtin is a provider that exists without configuration.
type Builtin struct {
	Name     string
	Provider Provider
	// DefaultModel is the model chosen when this provider's key is the only
	// configuration (empty: never chosen by default).
	DefaultModel string
}

// Builtins lists the built-in providers. Configuration may override any of
// their fields.
func Builtins() []Builtin {
	return []Builtin{
		{Name: "anthropic", Provider: Provider{Type: TypeAnthropic, BaseURL: "https://api.anthropic.com", APIKeyEnv: "ANTHROPIC_API_KEY"}, DefaultModel: "claude-sonnet-4-5"},
		{Name: "openai", Provider: Provider{Type: TypeOpenAI, BaseURL: "https://api.openai.com/v1", APIKeyEnv: "OPENAI_API_KEY"}, DefaultModel: "gpt-4.1"},
		{Name: "openrouter", Provider: Provider{Type: TypeOpenAI, BaseURL: "https://openrouter.ai/api/v1", APIKeyEnv: "OPENROUTER_API_KEY"}, DefaultModel: "anthropic/claude-sonnet-4.5"},
		{Name: "ollama", Provider: Provider{Type: TypeOpenAI, BaseURL: "http://localhost:11434/v1"}},
		{Name: "vllm", Provider: Provider{Type: TypeOpenAI, BaseURL: "http://localhost:8000/v1"}},
		{Name: "llamacpp", Provider: Provider{Type: TypeOpenAI, BaseURL: "http://localhost:8080/v1"}},
		{Name: "lmstudio", Provider: Provider{Type: TypeOpenAI, BaseURL: "http://localhost:1234/v1"}},
		{Name: "offline", Provider: Provider{Type: TypeOffline}},
	}
}

// Default returns the configuration before any file or variable is read:
// the built-in providers and the default limits, no model chosen yet.
func Default() Config {
	c := Config{
		Providers: make(map[string]Provider),
		Limits: Limits{
			RequestTimeout:    Duration{DefaultRequestTimeout},
			StreamIdleTimeout: Duration{DefaultStreamIdleTimeout},
			MaxRetries:        DefaultMaxRetries,
			MaxSteps:          DefaultMaxSteps,
			RepeatLimit:       DefaultRepeatLimit,
		},
		Tasks: Tasks{
			Concurrency:       DefaultTaskConcurrency,
			SpawnDepth:        DefaultSpawnDepth,
			Timeout:           Duration{DefaultTaskTimeout},
			InactivityTimeout: Duration{DefaultTaskInactivityTimeout},
			AskTimeout:        Duration{DefaultAskTimeout},
		},
		Fork:       forkctx.DefaultConfig(),
		Sandbox:    sandbox.DefaultConfig(),
		Models:     DefaultModels(),
		Compaction: Compaction{Threshold: DefaultCompactionThreshold},
		MCP: MCP{
			ToolTimeout:    Duration{DefaultMCPToolTimeout},
			StartupTimeout: Duration{DefaultMCPStartupTimeout},
		},
	}
	for _, b := range Builtins() {
		c.Providers[b.Name] = b.Provider
	}
	return c
}

// ProviderNames returns the names of the configured providers, sorted.
func (c Config) ProviderNames() []string {
	return slices.Sorted(maps.Keys(c.Providers))
}

// Resolve splits a model string and finds its provider. It returns the
// provider's name, its configuration and the model name to send to it.
// An unknown provider is an error that lists the known ones.
func (c Config) Resolve(model string) (name string, p Provider, modelName string, err error) {
	name, modelName, err = ParseModel(model)
	if err != nil {
		return "", Provider{}, "", err
	}
	p, ok := c.Providers[name]
	if !ok {
		return "", Provider{}, "", fmt.Errorf("model %q: %w %q (known providers: %s; define others under [providers.NAME] in config.toml)",
			model, ErrUnknownProvider, name, strings.Join(c.ProviderNames(), ", "))
	}
	return name, p, modelName, nil
}

// ParseModel splits a model string at its first slash into provider and
// model: "openrouter/anthropic/claude-sonnet-4.5" is provider "openrouter",
// model "anthropic/claude-sonnet-4.5". The bare string "offline" names the
// offline model.
func ParseModel(s string) (provider, model string, err error) {
	fail := func(format string, args ...any) (string, string, error) {
		return "", "", fmt.Errorf("%w %q: %s", ErrInvalidModel, s, fmt.Sprintf(format, args...))
	}
	if s == "" {
		return fail("give provider/model, e.g. anthropic/claude-sonnet-4-5, or offline")
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f {
			return fail("spaces and control characters are not allowed")
		}
	}
	if s == OfflineModel {
		return OfflineModel, OfflineModel, nil
	}
	provider, model, ok := strings.Cut(s, "/")
	if !ok {
		return fail("it names no provider: write provider/model, e.g. openai/%s or ollama/%s", s, s)
	}
	if err := checkProviderName(provider); err != nil {
		return fail("%v", err)
	}
	if model == "" {
		return fail("the model name after %q is empty", provider+"/")
	}
	return provider, model, nil
}

// checkProviderName accepts lowercase letters, digits, '-' and '_'.
func checkProviderName(name string) error {
	if name == "" {
		return errors.New("empty provider name")
	}
	for _, r := range name {
		if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("provider name %q may contain only lowercase letters, digits, '-' and '_'", name)
		}
	}
	return nil
}

// Notice returns the sentence to show once when the loader chose the model
// because nothing else did, and "" otherwise.
func (c Config) Notice() string {
	if !c.Defaulted {
		return ""
	}
	if c.Model == OfflineModel {
		return "No model is configured, so the offline model is used: it needs no network but only does arithmetic and recalls the conversation. " +
			"Set ANTHROPIC_API_KEY or OPENAI_API_KEY, or model = \"provider/model\" in config.toml, to use a real model."
	}
	name, _, _ := strings.Cut(c.Model, "/")
	return fmt.Sprintf("No model is configured; using %s because an API key for %s is set (%s).", c.Model, name, c.Providers[name].KeyOrigin)
}

// Duration is a time.Duration written as a string in TOML ("90s", "5m").
type Duration struct{ time.Duration }

// UnmarshalText parses a duration such as "30s" or "2m".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q: write it like \"30s\" or \"5m\"", b)
	}
	if v < 0 {
		return fmt.Errorf("invalid duration %q: it must not be negative", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as Go prints it ("1m30s").
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Secret is a value, such as an API key, that must never be printed. It
// formats as "[redacted]" (also in JSON and TOML output); Reveal returns it.
type Secret struct{ value string }

// NewSecret wraps s.
func NewSecret(s string) Secret { return Secret{s} }

const redacted = "[redacted]"

// Reveal returns the secret itself, for the one place that needs it.
func (s Secret) Reveal() string { return s.value }

// IsZero reports whether the secret is empty.
func (s Secret) IsZero() bool { return s.value == "" }

// String hides the secret.
func (s Secret) String() string {
	if s.value == "" {
		return ""
	}
	return redacted
}

// GoString hides the secret from %#v.
func (s Secret) GoString() string { return fmt.Sprintf("config.Secret(%q)", s.String()) }

// MarshalText hides the secret from encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the secret from a file (MarshalText is deliberately
// not its inverse).
func (s *Secret) UnmarshalText(b []byte) error {
	s.value = string(b)
	return nil
}

// Validate checks the merged configuration. Load calls it (and places its
// errors at the file and line that set the key); call it again after
// changing a Config by hand. Each error is an *Error naming the key.
func (c Config) Validate() error {
	var errs []error
	for _, name := range c.ProviderNames() {
		if err := c.Providers[name].validate(name); err != nil {
			errs = append(errs, err)
		}
	}
	if err := c.Database.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Limits.MaxRetries < 0 {
		errs = append(errs, &Error{Key: "limits.max_retries", Msg: "must not be negative"})
	}
	if c.Limits.MaxOutputTokens < 0 {
		errs = append(errs, &Error{Key: "limits.max_output_tokens", Msg: "must not be negative"})
	}
	positive := []struct {
		key   string
		value int64
	}{
		{"limits.max_steps", int64(c.Limits.MaxSteps)},
		{"limits.repeat_limit", int64(c.Limits.RepeatLimit)},
		{"tasks.concurrency", int64(c.Tasks.Concurrency)},
		{"tasks.timeout", int64(c.Tasks.Timeout.Duration)},
		{"tasks.inactivity_timeout", int64(c.Tasks.InactivityTimeout.Duration)},
		{"tasks.ask_timeout", int64(c.Tasks.AskTimeout.Duration)},
	}
	for _, p := range positive {
		if p.value <= 0 {
			errs = append(errs, &Error{Key: p.key, Msg: "must be more than 0"})
		}
	}
	if c.Tasks.Heartbeat.Duration < 0 || c.Tasks.StaleAfter.Duration < 0 {
		errs = append(errs, &Error{Key: "tasks.heartbeat", Msg: "tasks.heartbeat and tasks.stale_after must not be negative (0: the defaults)"})
	} else if hb, st := c.Tasks.Heartbeat.Duration, c.Tasks.StaleAfter.Duration; hb > 0 && st > 0 && st <= hb {
		errs = append(errs, &Error{Key: "tasks.stale_after", Msg: "must be longer than tasks.heartbeat"})
	}
	if c.Tasks.SpawnDepth < 0 {
		errs = append(errs, &Error{Key: "tasks.spawn_depth", Msg: "must not be negative (0: no background tasks)"})
	}
	if err := c.Fork.Validate(); err != nil {
		errs = append(errs, &Error{Key: "fork", Msg: err.Error()})
	}
	if err := c.Permissions.Validate(); err != nil {
		errs = append(errs, &Error{Key: "permissions", Msg: err.Error()})
	}
	errs = append(errs, c.validateSandbox()...)
	errs = append(errs, c.validateModels()...)
	errs = append(errs, c.validateBudget()...)
	errs = append(errs, c.validateMCP()...)
	if c.Model != "" {
		if _, _, _, err := c.Resolve(c.Model); err != nil {
			msg := err.Error()
			if !c.modelFromFile() {
				msg += " (set by " + c.ModelOrigin + ")"
			}
			errs = append(errs, &Error{Key: "model", Msg: msg})
		}
	}
	return errors.Join(errs...)
}

// modelFromFile reports whether a configuration file chose the model.
func (c Config) modelFromFile() bool {
	return c.ModelOrigin != "" && c.ModelOrigin != "flag" && c.ModelOrigin != "default" && !strings.HasPrefix(c.ModelOrigin, "env ")
}

// validate checks one provider.
func (p Provider) validate(name string) *Error {
	key := "providers." + name
	fail := func(sub, format string, args ...any) *Error {
		k := key
		if sub != "" {
			k += "." + sub
		}
		return &Error{Key: k, Msg: fmt.Sprintf(format, args...)}
	}
	if err := checkProviderName(name); err != nil {
		return fail("", "%v", err)
	}
	switch p.Type {
	case TypeAnthropic, TypeOpenAI:
		if p.BaseURL == "" {
			return fail("base_url", "required for a provider of type %q", p.Type)
		}
		if err := checkBaseURL(p.BaseURL); err != nil {
			return fail("base_url", "%v", err)
		}
		if p.Script != "" {
			return fail("script", "only the offline provider takes a script")
		}
	case TypeOffline:
		if p.BaseURL != "" || !p.APIKey.IsZero() || p.APIKeyEnv != "" || p.StreamUsage != nil {
			return fail("", "the offline provider takes only a script")
		}
	case "":
		return fail("type", "required for a custom provider: \"openai\" (OpenAI-compatible) or \"anthropic\"")
	default:
		return fail("type", "unknown type %q (want \"openai\", \"anthropic\" or \"offline\")", p.Type)
	}
	if p.StreamUsage != nil && p.Type != TypeOpenAI {
		return fail("stream_usage", "only providers of type \"openai\" take it")
	}
	return nil
}

func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("invalid URL %q", s)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("invalid URL %q: want http:// or https:// and a host", s)
	}
	if u.User != nil {
		return errors.New("credentials in the URL are not allowed: use api_key_env")
	}
	return nil
}

// validateSandbox places each bad value of [sandbox] at its key.
func (c Config) validateSandbox() []error {
	joined, ok := c.Sandbox.Validate().(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	var errs []error
	for _, err := range joined.Unwrap() {
		var ce *sandbox.ConfigError
		if errors.As(err, &ce) {
			errs = append(errs, &Error{Key: "sandbox." + ce.Key, Msg: ce.Msg})
		} else {
			errs = append(errs, &Error{Key: "sandbox", Msg: err.Error()})
		}
	}
	return errs
}
