package sandbox

import (
	"strings"
	"testing"
)

// TestWarning: what the user is told when the system enforces less than
// the policy asks, and that commands then still run.
func TestWarning(t *testing.T) {
	noLandlock := Support{Reason: "this kernel does not offer Landlock"}
	noSeccomp := Support{Mechanism: "Landlock", ABI: 3, Files: true, Reason: "seccomp cannot refuse network sockets here"}
	noNamespaces := Support{Mechanism: "Landlock", ABI: 7, Files: true, Network: true, Reason: "this system gives commands no namespaces of their own"}
	full := Support{Mechanism: "Landlock", ABI: 7, Files: true, Network: true, Isolation: true}
	tests := []struct {
		name     string
		policy   Policy
		support  Support
		want     string // "" for none
		enforced bool
	}{
		{"no Landlock", Policy{Mode: WorkspaceWrite}, noLandlock, `the sandbox (mode "workspace-write") is not available: this kernel does not offer Landlock; commands agents run have all of your rights. Set [sandbox] mode = "off"`, false},
		{"no Landlock, read-only", Policy{Mode: ReadOnly}, noLandlock, `the sandbox (mode "read-only") is not available`, false},
		{"no network rules", Policy{Mode: WorkspaceWrite}, noSeccomp, "the sandbox cannot confine network connections: seccomp cannot refuse network sockets here; commands agents run may reach the network. Set [sandbox] network = true", true},
		{"no namespaces", Policy{Mode: WorkspaceWrite, Network: true}, noNamespaces, "the sandbox cannot isolate commands: this system gives commands no namespaces of their own; commands agents run can read superagents' own files", true},
		{"everything enforced", Policy{Mode: WorkspaceWrite}, full, "", true},
		{"off", Policy{Mode: Off}, noLandlock, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Sandbox{policy: tc.policy, support: tc.support}
			got := s.Warning()
			if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
				t.Errorf("Warning() = %q, want %q", got, tc.want)
			}
			if s.Enforced() != tc.enforced {
				t.Errorf("Enforced() = %v, want %v", s.Enforced(), tc.enforced)
			}
			if tc.enforced {
				return
			}
			// Unenforced, a command runs as it is, not through a launcher.
			cmd, err := s.Command([]string{"sh", "-c", "true"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Run(); err != nil || !strings.HasSuffix(cmd.Path, "/sh") {
				t.Errorf("ran %s: %v", cmd.Path, err)
			}
		})
	}
}
