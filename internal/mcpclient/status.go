package mcpclient

import "context"

// Status is what the user is told about one server.
type Status struct {
	Name string `json:"name"`
	// Origin is the file that defined it.
	Origin string `json:"origin"`
	Type   string `json:"type"`
	// Display is the command or URL as written (see Spec.Display).
	Display string `json:"display"`
	Project bool   `json:"project"`
	// Trusted: it may run (always, for the user's own servers).
	Trusted bool   `json:"trusted"`
	State   string `json:"state"`
	Error   string `json:"error,omitempty"`
	// Stderr is, for a failed stdio server, the end of what it last wrote
	// on stderr, with its secrets hidden.
	Stderr string `json:"stderr,omitempty"`
	// Tools are known once it has started.
	Tools []ToolInfo `json:"tools,omitempty"`
}

// ToolInfo is one tool of a server.
type ToolInfo struct {
	// Name is the name agents see, mcp__<server>__<tool>.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	ReadOnly    bool   `json:"read_only"`
}

// stderrLines is how many lines of a server's stderr Status shows.
const stderrLines = 5

// Status reports every configured server, by name, without starting any.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.servers))
	for _, s := range m.servers {
		st := Status{
			Name: s.spec.Name, Origin: s.spec.Origin, Type: s.spec.Type, Display: s.spec.Display,
			Project: s.spec.Project, Trusted: !s.spec.Project || m.opts.ProjectTrusted,
			State: s.state(),
		}
		switch {
		case s.spec.Err != nil:
			st.Error = s.spec.Err.Error()
		default:
			s.mu.Lock()
			if s.lastErr != nil {
				st.Error = s.lastErr.Error()
			}
			if st.State == StateFailed {
				st.Stderr = s.spec.redact(s.stderr.lastLines(stderrLines))
			}
			s.mu.Unlock()
		}
		for _, t := range s.toolList() {
			spec := t.Spec()
			st.Tools = append(st.Tools, ToolInfo{Name: spec.Name, Description: spec.Description, ReadOnly: t.ReadOnly()})
		}
		out = append(out, st)
	}
	return out
}

// Start starts every server that may run, as Tools does, and reports
// them.
func (m *Manager) Start(ctx context.Context) ([]Status, error) {
	if _, err := m.Tools(ctx); err != nil {
		return nil, err
	}
	return m.Status(), nil
}
