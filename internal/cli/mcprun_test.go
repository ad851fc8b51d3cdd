package cli_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/npmtest"
)

// TestRunWithProjectMCPServer: `superagents run --trust-project` gives the
// model the project's MCP server (the reference filesystem server), whose
// answer reaches the model; without trust the server is not offered, and
// a line says how to trust the project. The servers are stopped with the
// command.
func TestRunWithProjectMCPServer(t *testing.T) {
	entry := npmtest.Server(t, "server-filesystem")
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "notes.txt"), "The launch code is 4711-ALPHA.\n")
	writeFile(t, filepath.Join(ws, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"fs": {"command": "node", "args": [%q, "${PROJECT_DIR}"]}}}`, entry))

	srv := llmtest.NewAnthropic(t)
	srv.APIKey = "test-key"
	srv.Handle(func(req llmtest.Request) llmtest.Reply {
		if out, ok := req.LastToolResult(); ok {
			return llmtest.Reply{Text: "The file says: " + strings.TrimSpace(out)}
		}
		if !strings.Contains(string(req.Body), `"mcp__fs__read_text_file"`) {
			return llmtest.Reply{Text: "I have no file tools from MCP."}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "mcp__fs__read_text_file", Input: fmt.Sprintf(`{"path": %q}`, filepath.Join(ws, "notes.txt"))}}}
	})
	h := newHarness(t)
	h.env["ANTHROPIC_API_KEY"] = "test-key"
	h.env["ANTHROPIC_BASE_URL"] = srv.BaseURL()
	h.env["PROJECT_DIR"] = ws

	r := h.run("run", "--workspace", ws, "--model", "anthropic/claude-test", "What is the launch code?")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "I have no file tools from MCP." || !strings.Contains(r.stderr, "--trust-project") {
		t.Fatalf("untrusted: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}

	r = h.run("run", "--workspace", ws, "--model", "anthropic/claude-test", "--trust-project", "What is the launch code?")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "The file says: The launch code is 4711-ALPHA." || strings.Contains(r.stderr, "trust") {
		t.Fatalf("trusted: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
