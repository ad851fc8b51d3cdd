package llm_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm"
	"github.com/superagents/superagents/internal/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// load returns the configuration Load builds from a project file and an
// environment, as a program would.
func load(t *testing.T, project string, env map[string]string) config.Config {
	t.Helper()
	dir := t.TempDir()
	if project != "" {
		if err := os.MkdirAll(filepath.Join(dir, config.ProjectDir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, config.ProjectDir, config.FileName), []byte(project), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(config.Options{
		Workspace: dir,
		UserDir:   filepath.Join(dir, "no-user-config"),
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		// The project's file defines providers, which only a trusted
		// project may.
		TrustProject: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestOpenProviders(t *testing.T) {
	anth := llmtest.NewAnthropic(t)
	anth.APIKey = "sk-ant"
	oai := llmtest.NewOpenAI(t)
	oai.APIKey = "sk-oai"
	local := llmtest.NewOpenAI(t)
	router := llmtest.NewOpenAI(t)
	router.APIKey = "sk-or"

	project := `
[providers.openrouter]
base_url = "` + router.BaseURL() + `"

[providers.ollama]
base_url = "` + local.BaseURL() + `"

[providers.myproxy]
type = "anthropic"
base_url = "` + anth.BaseURL() + `"
api_key_env = "PROXY_KEY"

[providers.lan]
type = "openai"
base_url = "` + local.BaseURL() + `"
stream_usage = false

[limits]
max_output_tokens = 777
`
	cfg := load(t, project, map[string]string{
		"ANTHROPIC_API_KEY":  "sk-ant",
		"ANTHROPIC_BASE_URL": anth.BaseURL(),
		"OPENAI_API_KEY":     "sk-oai",
		"OPENAI_BASE_URL":    oai.BaseURL(),
		"OPENROUTER_API_KEY": "sk-or",
		"PROXY_KEY":          "sk-ant",
	})
	tests := []struct {
		model     string
		srv       *llmtest.Server
		wantModel string
		check     func(t *testing.T, body map[string]any)
	}{
		{model: "anthropic/claude-sonnet-4-5", srv: anth, wantModel: "claude-sonnet-4-5"},
		{model: "openai/gpt-4.1", srv: oai, wantModel: "gpt-4.1", check: func(t *testing.T, body map[string]any) {
			if body["max_completion_tokens"] != float64(777) || body["stream_options"] == nil {
				t.Errorf("OpenAI body: max_completion_tokens %v, stream_options %v", body["max_completion_tokens"], body["stream_options"])
			}
		}},
		{model: "openrouter/anthropic/claude-sonnet-4.5", srv: router, wantModel: "anthropic/claude-sonnet-4.5"},
		{model: "ollama/qwen3:8b", srv: local, wantModel: "qwen3:8b", check: func(t *testing.T, body map[string]any) {
			if body["max_tokens"] != float64(777) || body["max_completion_tokens"] != nil {
				t.Errorf("compatible server body: max_tokens %v, max_completion_tokens %v", body["max_tokens"], body["max_completion_tokens"])
			}
		}},
		{model: "myproxy/claude-x", srv: anth, wantModel: "claude-x"},
		{model: "lan/llama3.2", srv: local, wantModel: "llama3.2", check: func(t *testing.T, body map[string]any) {
			if body["stream_options"] != nil {
				t.Errorf("stream_usage = false still sent stream_options")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			p, name, err := llm.Open(tt.model, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if name != tt.wantModel {
				t.Errorf("model name = %q, want %q", name, tt.wantModel)
			}
			before := len(tt.srv.Requests())
			tt.srv.Push(llmtest.Reply{Text: "hello"})
			got, err := llmtest.Collect(t.Context(), p, llmtest.UserRequest(name, "hi"))
			if err != nil {
				t.Fatal(err)
			}
			if got.Text() != "hello" {
				t.Errorf("text = %q", got.Text())
			}
			reqs := tt.srv.Requests()
			if len(reqs) != before+1 {
				t.Fatalf("%d new requests", len(reqs)-before)
			}
			body := reqs[len(reqs)-1].JSON()
			if body["model"] != tt.wantModel {
				t.Errorf("model sent = %v", body["model"])
			}
			if tt.check != nil {
				tt.check(t, body)
			}
		})
	}
}

func TestOpenOfflineWithScript(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "demo.toml")
	if err := os.WriteFile(script, []byte("[[rules]]\ncontains = \"hello\"\nreply = \"Hello from the script.\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := load(t, "", map[string]string{"SUPERAGENTS_OFFLINE_SCRIPT": script})
	if cfg.Model != "offline" || !cfg.Defaulted {
		t.Fatalf("default model = %q", cfg.Model)
	}
	p, name, err := llm.Open(cfg.Model, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for ask, want := range map[string]string{"hello there": "Hello from the script.", "What is 2+2?": "2+2 equals 4."} {
		got, err := llmtest.Collect(t.Context(), p, llmtest.UserRequest(name, ask))
		if err != nil || got.Text() != want {
			t.Errorf("%q: %q, %v; want %q", ask, got.Text(), err, want)
		}
	}

	if err := os.WriteFile(script, []byte("[[rules]]\nbogus = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = llm.Open("offline", cfg)
	if err == nil || !strings.Contains(err.Error(), script+":2:1: rules.bogus: unknown key") {
		t.Fatalf("error = %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	cfg := load(t, "[providers.proxy]\ntype = \"openai\"\nbase_url = \"http://127.0.0.1:1/v1\"\napi_key_env = \"PROXY_KEY\"\n", nil)
	tests := []struct {
		model string
		is    error
		want  string
	}{
		{"anthropic/claude-sonnet-4-5", llm.ErrNoAPIKey, `no API key for provider "anthropic": set ANTHROPIC_API_KEY`},
		{"openai/gpt-4.1", llm.ErrNoAPIKey, `no API key for provider "openai": set OPENAI_API_KEY`},
		{"openrouter/x/y", llm.ErrNoAPIKey, "set OPENROUTER_API_KEY"},
		{"proxy/m", llm.ErrNoAPIKey, "set PROXY_KEY"},
		{"gemini/pro", config.ErrUnknownProvider, `unknown provider "gemini" (known providers: anthropic, llamacpp, lmstudio, offline, ollama, openai, openrouter, proxy, vllm`},
		{"gpt-4.1", config.ErrInvalidModel, "it names no provider"},
		{"", config.ErrInvalidModel, "give provider/model"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			_, _, err := llm.Open(tt.model, cfg)
			if !errors.Is(err, tt.is) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %v with %q", err, tt.is, tt.want)
			}
		})
	}
	// Local servers need no key.
	if _, _, err := llm.Open("ollama/qwen3", cfg); err != nil {
		t.Errorf("ollama: %v", err)
	}
}

func TestRegistryKeepsProviders(t *testing.T) {
	r := llm.NewRegistry(config.Default())
	a, _, err := r.Open("ollama/qwen3")
	if err != nil {
		t.Fatal(err)
	}
	b, name, err := r.Open("ollama/llama3.2")
	if err != nil {
		t.Fatal(err)
	}
	if a != b || name != "llama3.2" {
		t.Errorf("the registry built a second provider for ollama")
	}
	var _ superagents.Provider = a
}
