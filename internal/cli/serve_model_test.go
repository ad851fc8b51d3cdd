package cli_test

import (
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/cli"
	"github.com/superagents/superagents/internal/config"
)

// TestServeModel: serve takes --model as run, chat and mcp do, and checks
// it the same way.
func TestServeModel(t *testing.T) {
	t.Run("unknown provider", func(t *testing.T) {
		h := newHarness(t)
		r := h.run("serve", "--addr", "127.0.0.1:0", "--workspace", t.TempDir(), "--model", "nope/x")
		if r.code != cli.ExitUsage || !strings.Contains(r.stderr, `unknown provider "nope"`) {
			t.Fatalf("exit %d, stderr %q; want a usage error naming the provider", r.code, r.stderr)
		}
	})
	t.Run("overrides the configured model", func(t *testing.T) {
		h := newHarness(t)
		// The configured model needs a key nobody gave: only the flag's
		// offline model can answer.
		h.env[config.EnvModel] = "anthropic/claude-sonnet-4-5"
		token := h.ok("", "serve", "--print-token")
		api := startServe(t, h, token, "--workspace", t.TempDir(), "--model", "offline")
		call := func(path, body string) map[string]any {
			t.Helper()
			var out map[string]any
			api.call("POST", path, body, &out)
			return out
		}
		sess := call("/v1/sessions", "{}")
		turn := call("/v1/sessions/"+sess["id"].(string)+"/messages?wait=true", `{"text": "What is 2+2?"}`)
		if got, _ := turn["turn"].(map[string]any); got == nil || got["answer"] != "2+2 equals 4." {
			t.Fatalf("a turn = %v: want the offline model's answer", turn)
		}
		if code := api.shutdown(); code != cli.ExitOK {
			t.Fatalf("serve exited with %d: %s", code, api.stderr.String())
		}
	})
}
