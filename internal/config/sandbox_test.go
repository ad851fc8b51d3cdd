package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/superagents/superagents/sandbox"
)

func TestSandboxSection(t *testing.T) {
	tests := []struct {
		name, user, project string
		want                sandbox.Config
	}{
		{"default", "", "", sandbox.Config{Mode: sandbox.WorkspaceWrite}},
		{"the user's file sets everything", "[sandbox]\nmode = \"off\"\nnetwork = true\nwritable = [\"/home/me/.cache\"]\n", "",
			sandbox.Config{Mode: sandbox.Off, Network: true, Writable: []string{"/home/me/.cache"}}},
		{"a project makes it stricter", "[sandbox]\nmode = \"off\"\nnetwork = true\n", "[sandbox]\nmode = \"read-only\"\nnetwork = false\n",
			sandbox.Config{Mode: sandbox.ReadOnly}},
		{"a project repeats the user's settings", "[sandbox]\nnetwork = true\nwritable = [\"/a\"]\n", "[sandbox]\nnetwork = true\nwritable = [\"/a\"]\n",
			sandbox.Config{Mode: sandbox.WorkspaceWrite, Network: true, Writable: []string{"/a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(setup(t, tt.user, tt.project, env{}))
			if err != nil {
				t.Fatal(err)
			}
			if c.Sandbox.Mode != tt.want.Mode || c.Sandbox.Network != tt.want.Network || !slices.Equal(c.Sandbox.Writable, tt.want.Writable) {
				t.Errorf("sandbox = %+v, want %+v", c.Sandbox, tt.want)
			}
		})
	}
}

func TestSandboxSectionErrors(t *testing.T) {
	tests := []struct {
		name, user, project, want string
	}{
		{"unknown mode", "\n[sandbox]\nmode = \"strict\"\n", "", `config.toml:3: sandbox.mode: unknown sandbox mode "strict" (want "workspace-write", "read-only" or "off")`},
		{"mode of the wrong type", "[sandbox]\nmode = true\n", "", "config.toml:2:"},
		{"relative writable directory", "[sandbox]\nwritable = [\"/ok\", \"cache\"]\n", "", `config.toml:2: sandbox.writable: "cache" is not an absolute path`},
		{"unknown key", "[sandbox]\nnetworks = true\n", "", "config.toml:2:1: sandbox.networks: unknown key"},
		{"a project turns it off", "", "[sandbox]\nmode = \"off\"\n", "config.toml:2: sandbox.mode: a project's configuration file may make the sandbox stricter, never looser"},
		{"a project loosens read-only", "[sandbox]\nmode = \"read-only\"\n", "[sandbox]\nmode = \"workspace-write\"\n", "config.toml:2: sandbox.mode: "},
		{"a project allows the network", "", "[sandbox]\n\nnetwork = true\n", "config.toml:3: sandbox.network: a project's configuration file may make the sandbox stricter"},
		{"a project adds a writable directory", "", "[sandbox]\nwritable = [\"/home/me/.ssh\"]\n", "config.toml:2: sandbox.writable: "},
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
