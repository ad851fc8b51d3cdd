package sandbox

import (
	"fmt"
	"strings"
)

// Finding is what one live probe of Check found.
type Finding struct {
	// Name says what was probed: "Multipath TCP sockets".
	Name string `json:"name"`
	// Confined: the sandbox refused it (or, for the workspace, allowed
	// it as it should).
	Confined bool `json:"confined"`
	// Required: the policy asks for it to be confined, so the sandbox
	// fails the check when it is not.
	Required bool `json:"required"`
	// Detail is what the probe saw: the error of a refusal, or what got
	// through.
	Detail string `json:"detail,omitempty"`
}

// Report is what Check found on this system for a policy.
type Report struct {
	Mode     Mode      `json:"mode"`
	Network  bool      `json:"network"`
	Support  Support   `json:"support"`
	Findings []Finding `json:"findings"`
}

// OK reports whether everything the policy asks for is confined.
func (r Report) OK() bool {
	for _, f := range r.Findings {
		if f.Required && !f.Confined {
			return false
		}
	}
	return true
}

// String is the report for a terminal, a line a finding.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sandbox: mode %q, network %s\n", r.Mode, map[bool]string{true: "allowed", false: "not allowed"}[r.Network])
	mech := r.Support.Mechanism
	if mech == "" {
		mech = "none"
	}
	if r.Support.ABI > 0 {
		mech += fmt.Sprintf(" (ABI %d)", r.Support.ABI)
	}
	if r.Support.Isolation {
		mech += ", " + r.Support.IsolationKind
	}
	fmt.Fprintf(&b, "mechanism: %s\n", mech)
	if r.Support.Reason != "" {
		fmt.Fprintf(&b, "missing: %s\n", r.Support.Reason)
	}
	for _, f := range r.Findings {
		mark := "confined    "
		switch {
		case !f.Confined && f.Required:
			mark = "NOT CONFINED"
		case !f.Confined:
			mark = "open        "
		}
		fmt.Fprintf(&b, "  %s  %s", mark, f.Name)
		if f.Detail != "" {
			fmt.Fprintf(&b, ": %s", f.Detail)
		}
		b.WriteByte('\n')
	}
	if r.OK() {
		b.WriteString("everything the configuration asks for is enforced\n")
	} else {
		b.WriteString("this system cannot enforce the configured sandbox: the lines marked NOT CONFINED are open to commands\n")
	}
	return b.String()
}
