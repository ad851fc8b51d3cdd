package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestModelInfo(t *testing.T) {
	c := Default()
	c.Models["openai/gpt-test"] = Model{ContextWindow: 1000}
	tests := []struct {
		model  string
		found  bool
		window int
		input  float64
	}{
		{"anthropic/claude-sonnet-4-5", true, 200_000, 3},
		{"anthropic/claude-sonnet-4-5-20250929", true, 200_000, 3},
		{"openai/gpt-4.1-mini-2025-04-14", true, 1_047_576, 0.4}, // the longest key wins
		{"openai/gpt-4.1", true, 1_047_576, 2},
		{"openai/gpt-test", true, 1000, 0},
		{"openai/gpt-4.10", false, 0, 0}, // a longer name is another model
		{"ollama/llama3", false, 0, 0},   // local: nothing assumed
		{"offline", true, 0, 0},          // built in, and free
	}
	for _, tt := range tests {
		m, ok := c.ModelInfo(tt.model)
		if ok != tt.found || m.ContextWindow != tt.window || m.Input != tt.input {
			t.Errorf("ModelInfo(%q) = %+v, %v; want window %d, input %v, found %v", tt.model, m, ok, tt.window, tt.input, tt.found)
		}
	}
}

func TestModelsFromFile(t *testing.T) {
	tests := []struct {
		name, file string
		check      func(t *testing.T, c Config)
		wantErr    string
	}{
		{
			name: "override one price, keep the window",
			file: "[models.\"anthropic/claude-sonnet-4-5\"]\ninput = 2.5\n",
			check: func(t *testing.T, c Config) {
				m := c.Models["anthropic/claude-sonnet-4-5"]
				if m.Input != 2.5 || m.ContextWindow != 200_000 || m.Output != 15 {
					t.Errorf("merged entry = %+v", m)
				}
			},
		},
		{
			name: "a local model with a window and no price",
			file: "[models.\"ollama/qwen3\"]\ncontext_window = 32768\n\n[compaction]\nthreshold = 0.7\n",
			check: func(t *testing.T, c Config) {
				m, ok := c.ModelInfo("ollama/qwen3")
				if !ok || m.ContextWindow != 32768 || m.Priced() {
					t.Errorf("entry = %+v, %v", m, ok)
				}
				if c.Compaction.Threshold != 0.7 || !c.Compaction.Enabled() {
					t.Errorf("compaction = %+v", c.Compaction)
				}
			},
		},
		{
			name: "a local model marked free",
			file: "[models.\"ollama/qwen3\"]\nfree = true\n",
			check: func(t *testing.T, c Config) {
				if m, ok := c.ModelInfo("ollama/qwen3"); !ok || !m.Priced() {
					t.Errorf("entry = %+v, %v: want priced (free)", m, ok)
				}
				if m, ok := c.ModelInfo(OfflineModel); !ok || !m.Free {
					t.Errorf("the offline model = %+v, %v: want free by default", m, ok)
				}
			},
		},
		{name: "free with a price", file: "[models.\"ollama/qwen3\"]\nfree = true\ninput = 1\n", wantErr: `models."ollama/qwen3".input: a model marked free = true has no price`},
		{name: "negative price", file: "[models.\"openai/x\"]\noutput = -1\n", wantErr: `models."openai/x".output: must be a price of 0 or more`},
		{name: "bad model key", file: "[models.\"nope\"]\ninput = 1\n", wantErr: `models."nope"`},
		{name: "threshold too high", file: "[compaction]\nthreshold = 1.5\n", wantErr: "compaction.threshold: must be above 0 and below 1"},
		{name: "unknown key", file: "[models.\"openai/x\"]\nprice = 1\n", wantErr: "price"},
		{name: "auto off", file: "[compaction]\nauto = false\n", check: func(t *testing.T, c Config) {
			if c.Compaction.Enabled() {
				t.Error("auto compaction still on")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadUserFile(t, tt.file)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

// The TOML examples of docs/costs-and-compaction.md load.
func TestCostDocExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/costs-and-compaction.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(doc), "```toml\n")[1:]
	if len(blocks) == 0 {
		t.Fatal("no TOML example found")
	}
	for i, b := range blocks {
		example, _, _ := strings.Cut(b, "```")
		if _, err := loadUserFile(t, example); err != nil {
			t.Errorf("example %d: %v\n%s", i+1, err, example)
		}
	}
}

// loadUserFile loads the configuration with text as the user file.
func loadUserFile(t *testing.T, text string) (Config, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "superagents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "superagents", FileName), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(Options{LookupEnv: env{"XDG_CONFIG_HOME": dir}.lookup})
}
