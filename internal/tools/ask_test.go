package tools

import (
	"errors"
	"strings"
	"testing"
)

// TestBashUnlisted: unlisted takes "refuse" or "ask", an agent's own
// replaces the global one, and a command the allow list leaves open is a
// NotAllowedError (a denied one is not: deny never asks).
func TestBashUnlisted(t *testing.T) {
	if err := (BashRules{Unlisted: "maybe"}).Validate(); err == nil || !strings.Contains(err.Error(), "bash.unlisted") {
		t.Fatalf("Validate of unlisted = maybe: %v", err)
	}
	for _, v := range []string{"", UnlistedRefuse, UnlistedAsk} {
		if err := (BashRules{Unlisted: v}).Validate(); err != nil {
			t.Fatalf("Validate of unlisted = %q: %v", v, err)
		}
	}
	p := Policy{Rules: Rules{Bash: BashRules{Allow: []string{"ls"}, Deny: []string{"rm"}, Unlisted: UnlistedAsk}},
		Agents: map[string]Rules{"strict": {Bash: BashRules{Unlisted: UnlistedRefuse}}}}
	if !p.ForAgent("general").Bash.Asks() || p.ForAgent("strict").Bash.Asks() {
		t.Fatal("ForAgent: want the global ask, and the agent's own refuse")
	}
	r := p.ForAgent("general").Bash
	var na *NotAllowedError
	if err := r.Check("echo hi"); !errors.As(err, &na) || na.Command != "echo hi" || !strings.Contains(err.Error(), "is not allowed by the permission policy") {
		t.Fatalf("Check of an unlisted command: %v", err)
	}
	if err := r.Check("ls && rm x"); err == nil || errors.As(err, &na) {
		t.Fatalf("Check of a denied command: %v, want a plain refusal", err)
	}
}
