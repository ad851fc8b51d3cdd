package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMCPSection(t *testing.T) {
	user := `
trusted_projects = ["/src/app"]
[mcp]
tool_timeout = "30s"
[mcp.servers.github]
type = "http"
url = "https://api.example/mcp"
headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }
[mcp.servers.fs]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
`
	project := `
[mcp.servers.db]
command = "db-mcp"
env = { DSN = "${DATABASE_URL}" }
`
	opts := setup(t, user, project, env{})
	c, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if c.MCP.ToolTimeout.Duration != 30*time.Second || c.MCP.StartupTimeout.Duration != DefaultMCPStartupTimeout {
		t.Fatalf("timeouts = %v, %v", c.MCP.ToolTimeout, c.MCP.StartupTimeout)
	}
	tests := []struct {
		name    string
		origin  string
		project bool
	}{
		{"github", filepath.Join(opts.UserDir, FileName), false},
		{"fs", filepath.Join(opts.UserDir, FileName), false},
		{"db", filepath.Join(opts.Workspace, ProjectDir, FileName), true},
	}
	for _, tt := range tests {
		s := c.MCP.Servers[tt.name]
		if s.Origin != tt.origin || s.Project != tt.project {
			t.Errorf("%s: origin %q project %v, want %q %v", tt.name, s.Origin, s.Project, tt.origin, tt.project)
		}
	}
	if s := c.MCP.Servers["github"]; s.Headers["Authorization"] != "Bearer ${GITHUB_TOKEN}" {
		t.Fatalf("headers are kept as written (package mcpclient expands them): %v", s.Headers)
	}
	if !c.Trusts("/src/app/") || c.Trusts("/src") {
		t.Fatal("Trusts does not follow trusted_projects")
	}
}

func TestMCPSectionErrors(t *testing.T) {
	tests := []struct {
		name, user, project, want string
	}{
		{"project trusts itself", "", "trusted_projects = [\"/x\"]\n", "config.toml:1: trusted_projects: only the user's configuration file may trust projects"},
		{"relative trusted project", "trusted_projects = [\"src\"]\n", "", `trusted_projects: "src" is not an absolute path`},
		{"unknown server key", "[mcp.servers.a]\ncomand = \"x\"\n", "", "config.toml:2:1: mcp.servers.a.comand: unknown key"},
		{"zero timeout", "[mcp]\ntool_timeout = \"0s\"\n", "", "config.toml:2: mcp.tool_timeout: must be more than 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(setup(t, tt.user, tt.project, env{}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}
