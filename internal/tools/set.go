package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/superagents/superagents"
)

// Set is the tools one agent may call, in a fixed order (the order models
// see them in, which keeps prompts byte-identical between turns). A Set is
// immutable and safe for concurrent use.
type Set struct {
	tools  []Tool
	byName map[string]Tool
}

// NewSet returns a set of the given tools. Two tools with the same name are
// an error.
func NewSet(tools ...Tool) (*Set, error) {
	s := &Set{byName: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("tool set: nil tool")
		}
		name := t.Spec().Name
		if _, dup := s.byName[name]; dup {
			return nil, fmt.Errorf("tool set: two tools named %q", name)
		}
		s.byName[name] = t
		s.tools = append(s.tools, t)
	}
	return s, nil
}

// Len returns the number of tools.
func (s *Set) Len() int { return len(s.tools) }

// Tools returns the tools, in order.
func (s *Set) Tools() []Tool { return slices.Clone(s.tools) }

// Get returns the tool with that name.
func (s *Set) Get(name string) (Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Names returns the tools' names, in order.
func (s *Set) Names() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Spec().Name
	}
	return names
}

// Specs returns what the model is told about the tools, in order.
func (s *Set) Specs() []superagents.ToolSpec {
	specs := make([]superagents.ToolSpec, len(s.tools))
	for i, t := range s.tools {
		specs[i] = t.Spec()
	}
	return specs
}

// Select returns the tools whose names match at least one of the patterns
// (an allow-list). A pattern is a tool name or a path.Match glob such as
// "superagents_*" or "*". Patterns that match nothing are ignored (see
// Unmatched to warn about them); a malformed pattern is an error.
func (s *Set) Select(patterns []string) (*Set, error) {
	if err := ValidateToolPatterns(patterns); err != nil {
		return nil, err
	}
	return s.filter(func(t Tool) bool { return matchesAny(patterns, t.Spec().Name) }), nil
}

// Unmatched returns the patterns that match no tool of the set, so a caller
// can warn about a misspelt tool name in a profile.
func (s *Set) Unmatched(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		if !slices.ContainsFunc(s.tools, func(t Tool) bool { return matchesAny([]string{p}, t.Spec().Name) }) {
			out = append(out, p)
		}
	}
	return out
}

// ReadOnly returns the set without the tools that change the workspace.
func (s *Set) ReadOnly() *Set {
	return s.filter(Tool.ReadOnly)
}

func (s *Set) filter(keep func(Tool) bool) *Set {
	out := &Set{byName: make(map[string]Tool)}
	for _, t := range s.tools {
		if keep(t) {
			out.tools = append(out.tools, t)
			out.byName[t.Spec().Name] = t
		}
	}
	return out
}

// Call runs the named tool. An unknown name, and a panic inside the tool,
// become error Results like any other failure; the returned error is, as
// for Tool.Run, only a cancelled context.
func (s *Set) Call(ctx context.Context, name string, input json.RawMessage) (res Result, err error) {
	t, ok := s.byName[name]
	if !ok {
		return Errorf("unknown tool %q; the available tools are: %s", name, strings.Join(s.Names(), ", ")), nil
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = Errorf("internal error in tool %s: %v", name, p), nil
		}
	}()
	return t.Run(ctx, input)
}

// ValidateToolPatterns checks tool-name patterns (names or path.Match
// globs) for syntax.
func ValidateToolPatterns(patterns []string) error {
	for _, p := range patterns {
		if p == "" {
			return fmt.Errorf("empty tool name")
		}
		if strings.ContainsAny(p, " \t/") {
			return fmt.Errorf("tool pattern %q: tool names contain no spaces or slashes", p)
		}
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("tool pattern %q: %w", p, err)
		}
	}
	return nil
}

func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
