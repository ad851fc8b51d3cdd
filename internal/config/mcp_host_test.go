package config

import (
	"strings"
	"testing"
)

func TestMCPHostSetting(t *testing.T) {
	for _, tt := range []struct {
		host string
		ok   bool
	}{{"", true}, {"none", true}, {"claude-code", true}, {"codex", true}, {"opencode", true}, {"cursor", false}} {
		c := Default()
		c.MCP.Host = tt.host
		err := c.Validate()
		if tt.ok != (err == nil) || !tt.ok && !strings.Contains(err.Error(), "mcp.host") {
			t.Errorf("mcp.host %q: %v", tt.host, err)
		}
	}
}
