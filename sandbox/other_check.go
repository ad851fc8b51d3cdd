//go:build !linux

package sandbox

// Check reports what this system offers for the policy. Live probes run
// on Linux only; elsewhere the report says what the mechanism covers.
func Check(p Policy) (Report, error) {
	ws := p.Workspace
	if ws == "" {
		ws = "/"
	}
	p.Workspace = ws
	s, err := New(p, nil)
	if err != nil {
		return Report{}, err
	}
	r := Report{Mode: s.Mode(), Network: s.Network(), Support: s.Support()}
	confined := s.Mode() != Off
	r.Findings = []Finding{
		{Name: "writes outside the workspace (not probed here)", Confined: confined && s.Support().Files, Required: confined},
		{Name: "network sockets (not probed here)", Confined: !s.Network() && s.Support().Network, Required: confined && !s.Network()},
		{Name: "reads of superagents' own files (not probed here)", Confined: confined && s.Support().Files, Required: confined},
	}
	return r, nil
}
