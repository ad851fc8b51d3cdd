package hosttest

import (
	"fmt"
	"path/filepath"
	"testing"
)

// CodexModel is the model Codex is told to use.
const CodexModel = "gpt-5.1-codex"

// codex configures Codex (seen with 0.169.0): CODEX_HOME in the home, a
// model provider at the scripted server with wire_api "responses", the
// server under [mcp_servers.superagents] with its environment (env: Codex
// hands a server only a few of its own variables), CODEX_HOME passed on
// (env_vars) so that a fork finds the rollout, and its tools approved
// (default_tools_approval_mode = "approve": codex exec, whose approval
// policy is "never", refuses them otherwise). Update checks, analytics
// and feedback are off.
func (h *Host) codex(t testing.TB) {
	t.Helper()
	codexHome := filepath.Join(h.Home, ".codex")
	writeFile(t, filepath.Join(codexHome, "config.toml"), fmt.Sprintf(`model = %q
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.scripted]
name = "scripted"
base_url = %q
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.superagents]
command = %q
args = ["mcp"]
env = %s
env_vars = ["CODEX_HOME"]
startup_timeout_sec = 30
default_tools_approval_mode = "approve"
`, CodexModel, h.Model.BaseURL(), h.superagents, h.serverEnvTOML()))
	h.env = append(h.env, "CODEX_HOME="+codexHome)
	h.args = func(prompt, session string) []string {
		if session != "" {
			return []string{"exec", "resume", "--json", "--skip-git-repo-check", session, prompt}
		}
		return []string{"exec", "--json", "--skip-git-repo-check", prompt}
	}
	h.session = func(stdout string) string {
		id := ""
		jsonLines(stdout, func(m map[string]any) {
			if m["type"] == "thread.started" {
				id, _ = m["thread_id"].(string)
			}
		})
		return id
	}
}
