package sandbox_test

import (
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/sandboxtest"
	"github.com/superagents/superagents/sandbox"
)

func TestStrictest(t *testing.T) {
	tests := []struct {
		modes []sandbox.Mode
		want  sandbox.Mode
	}{
		{nil, sandbox.WorkspaceWrite},
		{[]sandbox.Mode{"", ""}, sandbox.WorkspaceWrite},
		{[]sandbox.Mode{sandbox.Off}, sandbox.Off},
		{[]sandbox.Mode{sandbox.Off, ""}, sandbox.Off},
		{[]sandbox.Mode{sandbox.Off, sandbox.WorkspaceWrite}, sandbox.WorkspaceWrite},
		{[]sandbox.Mode{sandbox.WorkspaceWrite, sandbox.ReadOnly, sandbox.Off}, sandbox.ReadOnly},
	}
	for _, tc := range tests {
		if got := sandbox.Strictest(tc.modes...); got != tc.want {
			t.Errorf("Strictest(%q) = %q, want %q", tc.modes, got, tc.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  sandbox.Config
		want string // "" for valid
	}{
		{"default", sandbox.DefaultConfig(), ""},
		{"read-only with network", sandbox.Config{Mode: sandbox.ReadOnly, Network: true}, ""},
		{"writable directories", sandbox.Config{Mode: sandbox.WorkspaceWrite, Writable: []string{"/home/me/.cache"}}, ""},
		{"unknown mode", sandbox.Config{Mode: "full"}, `mode: unknown sandbox mode "full" (want "workspace-write", "read-only" or "off")`},
		{"empty mode", sandbox.Config{}, "mode: unknown sandbox mode"},
		{"relative directory", sandbox.Config{Mode: sandbox.Off, Writable: []string{".cache"}}, `writable: ".cache" is not an absolute path`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestConfigLooser(t *testing.T) {
	ro, ww, off := sandbox.ReadOnly, sandbox.WorkspaceWrite, sandbox.Off
	tests := []struct {
		name      string
		cfg, base sandbox.Config
		key       string // "" when not looser
	}{
		{"the same", sandbox.Config{Mode: ww}, sandbox.Config{Mode: ww}, ""},
		{"stricter", sandbox.Config{Mode: ro}, sandbox.Config{Mode: off, Network: true, Writable: []string{"/a"}}, ""},
		{"off", sandbox.Config{Mode: off}, sandbox.Config{Mode: ww}, "mode"},
		{"workspace-write over read-only", sandbox.Config{Mode: ww}, sandbox.Config{Mode: ro}, "mode"},
		{"default base", sandbox.Config{Mode: ww}, sandbox.Config{}, ""},
		{"empty mode: Validate's error", sandbox.Config{}, sandbox.Config{Mode: ww}, ""},
		{"empty mode over read-only: Validate's error", sandbox.Config{}, sandbox.Config{Mode: ro}, ""},
		{"unknown mode: Validate's error", sandbox.Config{Mode: "full"}, sandbox.Config{Mode: ro}, ""},
		{"the network", sandbox.Config{Mode: ww, Network: true}, sandbox.Config{Mode: ww}, "network"},
		{"a writable directory", sandbox.Config{Mode: ww, Writable: []string{"/b"}}, sandbox.Config{Mode: ww, Writable: []string{"/a"}}, "writable"},
		{"fewer writable directories", sandbox.Config{Mode: ww, Writable: []string{"/a"}}, sandbox.Config{Mode: ww, Writable: []string{"/a", "/b"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			key, looser := tc.cfg.Looser(tc.base)
			if key != tc.key || looser != (tc.key != "") {
				t.Fatalf("Looser() = %q, %v; want %q, %v", key, looser, tc.key, tc.key != "")
			}
		})
	}
}

func TestMessages(t *testing.T) {
	sandboxtest.Require(t, true)
	ws := t.TempDir()
	tests := []struct {
		name    string
		policy  sandbox.Policy
		output  string
		explain []string // parts of the note; nil: no note
		refusal string   // part of the file tools' refusal; "": none
	}{
		{"a refused write", sandbox.Policy{Workspace: ws}, "sh: 1: cannot create /etc/x: Permission denied",
			[]string{"workspace-write sandbox", "[sandbox] writable", "[sandbox] network = true", `[sandbox] mode = "off"`}, ""},
		{"network allowed", sandbox.Policy{Workspace: ws, Network: true}, "Operation not permitted",
			[]string{"workspace-write sandbox"}, ""},
		{"no refusal", sandbox.Policy{Workspace: ws}, "all good", nil, ""},
		{"off", sandbox.Policy{Mode: sandbox.Off, Workspace: ws}, "Permission denied", nil, ""},
		{"read-only from a profile", sandbox.Policy{Mode: sandbox.ReadOnly, Workspace: ws, ModeSource: `the agent profile "reviewer"`}, "Permission denied",
			[]string{`read-only sandbox (set by the agent profile "reviewer")`, `[sandbox] mode = "workspace-write"`, "agent profile's sandbox setting"},
			`the sandbox is read-only: this agent may not change files (set by the agent profile "reviewer")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sandbox.New(tc.policy, nil)
			if err != nil {
				t.Fatal(err)
			}
			note := s.Explain(tc.output)
			if tc.explain == nil && note != "" {
				t.Errorf("unexpected note %q", note)
			}
			for _, part := range tc.explain {
				if !strings.Contains(note, part) {
					t.Errorf("note %q lacks %q", note, part)
				}
			}
			if refusal := s.WriteRefusal(); tc.refusal == "" && refusal != "" || !strings.Contains(refusal, tc.refusal) {
				t.Errorf("WriteRefusal() = %q, want %q", refusal, tc.refusal)
			}
		})
	}
}

func TestNewRejectsBadPolicies(t *testing.T) {
	for _, p := range []sandbox.Policy{
		{Mode: "bogus", Workspace: "/"},
		{Mode: sandbox.WorkspaceWrite, Workspace: "relative"},
		{Mode: sandbox.ReadOnly},
		{Workspace: "/", Writable: []string{"relative/dir"}},
		{Workspace: "/", Writable: []string{"/dev/null"}},
	} {
		if _, err := sandbox.New(p, nil); err == nil {
			t.Errorf("New(%+v) accepted", p)
		}
	}
}
