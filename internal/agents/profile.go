// Package agents loads agent profiles: Markdown files whose YAML front
// matter names the agent, says what it is for and which model and tools it
// uses, and whose body is its system prompt.
//
// Profiles come from these places, and a profile hides those of the same
// name from the places after it: the project
// (<workspace>/.superagents/agents/*.md), the user
// ($XDG_CONFIG_HOME/superagents/agents/*.md, by default
// ~/.config/superagents/agents/*.md), Claude Code's project and user
// subagents (<workspace>/.claude/agents/*.md, ~/.claude/agents/*.md; see
// ParseClaude) and the built-in ones (general and explore).
package agents

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/superagents/superagents/internal/tools"
	"github.com/superagents/superagents/sandbox"
	"go.yaml.in/yaml/v3"
)

// Profile is one agent.
type Profile struct {
	// Name is how the agent is chosen: lowercase letters, digits, '-' and
	// '_'.
	Name string
	// Description says what the agent is for; models read it to pick one.
	Description string
	// Model is a "provider/model" string; empty means the default model.
	Model string
	// Tools lists the tools the agent may use, by name or path.Match glob
	// ("superagents_*"). Nil means every tool; an empty list means none.
	Tools []string
	// MaxSteps caps the agent's model turns; 0 means the default.
	MaxSteps int
	// Sandbox is the sandbox mode of the agent's commands; the
	// configuration's, when stricter, wins. Empty: the configuration's.
	Sandbox sandbox.Mode
	// Isolation is how the agent's tasks are isolated when their launch
	// names none: "worktree" (a git worktree of their own) or "" (none).
	Isolation string
	// Prompt is the system prompt: the body of the file.
	Prompt string
	// Source is where the profile was loaded from.
	Source Source
	// Overrides lists the profiles of the same name it hides, nearest
	// first.
	Overrides []Source
}

// SourceKind says where a profile comes from.
type SourceKind string

// Sources, from the lowest precedence to the highest.
const (
	Builtin SourceKind = "built-in"
	User    SourceKind = "user"
	Project SourceKind = "project"
)

// Source is where a profile was loaded from.
type Source struct {
	Kind SourceKind
	// Path is the file, for user and project profiles.
	Path string
}

func (s Source) String() string {
	if s.Path == "" {
		return string(s.Kind)
	}
	return string(s.Kind) + " " + s.Path
}

// SelectTools returns the tools of all that the profile may use.
func (p Profile) SelectTools(all *tools.Set) (*tools.Set, error) {
	if p.Tools == nil {
		return all, nil
	}
	set, err := all.Select(p.Tools)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", p.Name, err)
	}
	return set, nil
}

// FileError is a problem with one profile file, at a line when it is about
// one (Line is 0 otherwise).
type FileError struct {
	Path string
	Line int
	Err  error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// MaxFileBytes is the size limit of a profile file.
const MaxFileBytes = 1 << 20

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// knownKeys are the front-matter keys, in the order they are documented.
var knownKeys = []string{"name", "description", "model", "tools", "max_steps", "sandbox", "isolation"}

// Parse reads a profile file. path names it in errors, and its base name
// is the profile's name when the front matter gives none. The error, when
// not nil, joins one *FileError per problem found.
func Parse(path string, data []byte) (Profile, error) {
	p := &parser{path: path}
	prof := p.parse(data)
	if len(p.errs) > 0 {
		return Profile{}, errors.Join(p.errs...)
	}
	return prof, nil
}

type parser struct {
	path string
	errs []error
	// claude reads a Claude Code subagent file: keys only it knows are
	// ignored (see ParseClaude).
	claude bool
}

func (p *parser) fail(line int, format string, args ...any) {
	p.errs = append(p.errs, &FileError{Path: p.path, Line: line, Err: fmt.Errorf(format, args...)})
}

func (p *parser) parse(data []byte) Profile {
	if len(data) > MaxFileBytes {
		p.fail(0, "the file is larger than %d bytes", MaxFileBytes)
		return Profile{}
	}
	text := strings.ReplaceAll(string(bytes.TrimPrefix(data, []byte("\uFEFF"))), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	if strings.TrimRight(lines[0], " \t") != "---" {
		p.fail(1, "the file must start with YAML front matter: a line '---', the keys (name, description...), and a closing '---'")
		return Profile{}
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t"); l == "---" || l == "..." {
			end = i
			break
		}
	}
	if end < 0 {
		p.fail(1, "the front matter opened here is never closed by a '---' line")
		return Profile{}
	}
	// A leading newline makes YAML's line numbers the file's.
	prof := p.frontMatter("\n" + strings.Join(lines[1:end], "\n"))
	if prof.Name == "" && len(p.errs) == 0 {
		prof.Name = strings.TrimSuffix(filepath.Base(p.path), filepath.Ext(p.path))
		if !namePattern.MatchString(prof.Name) {
			p.fail(1, "no name in the front matter, and the file name %q is not a valid name: use lowercase letters, digits, '-' and '_'", prof.Name)
		}
	}
	prof.Prompt = strings.TrimSpace(strings.Join(lines[end+1:], "\n"))
	if prof.Prompt == "" {
		p.fail(end+1, "the system prompt is empty: write it below the front matter")
	}
	return prof
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

func (p *parser) frontMatter(src string) Profile {
	var prof Profile
	root := p.frontMatterMapping(src)
	if root == nil {
		return prof
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, value := root.Content[i], root.Content[i+1]
		if prev, dup := seen[key.Value]; dup {
			p.fail(key.Line, "%q is given twice (first at line %d)", key.Value, prev)
			continue
		}
		seen[key.Value] = key.Line
		p.setKey(&prof, key, value)
	}
	if prof.Description == "" && seen["description"] == 0 {
		p.fail(1, "the front matter has no description: say in a sentence what the agent is for (models read it to choose an agent)")
	} else if prof.Description == "" {
		p.fail(seen["description"], "the description is empty")
	}
	return prof
}

// frontMatterMapping parses the front matter's YAML into its mapping of keys
// to values; nil, with the reason recorded, when it is not one.
func (p *parser) frontMatterMapping(src string) *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		msg := err.Error()
		line := 1
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = msg[len(m[0]):]
			if isParserError(msg) {
				// yaml.v3 reports the parser's (not the scanner's) errors
				// at the 0-based line of the construct being parsed.
				line++
			}
		}
		p.fail(line, "front matter is not valid YAML: %s", strings.TrimPrefix(msg, "yaml: "))
		return nil
	}
	if len(doc.Content) == 0 {
		p.fail(1, "the front matter is empty: it needs at least a description")
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		p.fail(root.Line, "the front matter must be keys and values (name: ..., description: ...)")
		return nil
	}
	return root
}

// setKey sets the field of prof that one front matter key gives.
func (p *parser) setKey(prof *Profile, key, value *yaml.Node) {
	switch key.Value {
	case "name":
		prof.Name = p.str(key, value)
		if prof.Name != "" && !namePattern.MatchString(prof.Name) {
			p.fail(value.Line, "name %q: use 1 to 64 lowercase letters, digits, '-' and '_', starting with a letter or digit", prof.Name)
		}
	case "description":
		prof.Description = strings.TrimSpace(p.str(key, value))
	case "model":
		prof.Model = strings.TrimSpace(p.str(key, value))
		if strings.ContainsAny(prof.Model, " \t\n") {
			p.fail(value.Line, "model %q: a model is one word, like anthropic/claude-sonnet-4-5", prof.Model)
		}
	case "tools":
		prof.Tools = p.toolList(value)
	case "max_steps":
		n, err := strconv.Atoi(value.Value)
		if value.Kind != yaml.ScalarNode || err != nil || n < 0 {
			p.fail(value.Line, "max_steps must be a whole number, 0 or more (0 means the default)")
		}
		prof.MaxSteps = n
	case "sandbox":
		if value.Kind != yaml.ScalarNode {
			p.fail(value.Line, "sandbox must be text: workspace-write, read-only or off")
			return
		}
		mode, err := sandbox.ParseMode(value.Value)
		if err != nil {
			p.fail(value.Line, "sandbox: %v", err)
		}
		prof.Sandbox = mode
	case "isolation":
		switch {
		case value.Kind != yaml.ScalarNode:
			p.fail(value.Line, "isolation must be text: worktree or none")
		case value.Value == "worktree":
			prof.Isolation = value.Value
		case value.Value != "none":
			p.fail(value.Line, "isolation: unknown isolation %q (want \"worktree\" or \"none\")", value.Value)
		}
	default:
		if p.claude {
			// Claude Code's own keys; maxTurns is our max_steps.
			if n, err := strconv.Atoi(value.Value); key.Value == "maxTurns" && err == nil && n > 0 {
				prof.MaxSteps = n
			}
			return
		}
		p.fail(key.Line, "unknown key %q; the keys are %s", key.Value, strings.Join(knownKeys, ", "))
	}
}

// isParserError tells yaml.v3's parser errors from its scanner errors,
// whose lines are counted differently.
func isParserError(msg string) bool {
	for _, prefix := range []string{
		"did not find expected key",
		"did not find expected node content",
		"did not find expected ',' or",
		"did not find expected '-' indicator",
		"did not find expected <document start>",
	} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// str returns a scalar value as a string.
func (p *parser) str(key, value *yaml.Node) string {
	if value.Kind != yaml.ScalarNode {
		p.fail(value.Line, "%s must be text", key.Value)
		return ""
	}
	return value.Value
}

// toolList reads tools given as a YAML list ([read, grep]) or as one
// comma-separated string (read, grep).
func (p *parser) toolList(value *yaml.Node) []string {
	out := []string{} // present but empty: no tools
	add := func(name string, line int) {
		name = strings.TrimSpace(name)
		if err := tools.ValidateToolPatterns([]string{name}); err != nil {
			if p.claude {
				return // Claude Code's own syntax, such as "Agent(a, b)"
			}
			p.fail(line, "tools: %v", err)
			return
		}
		out = append(out, name)
	}
	switch value.Kind {
	case yaml.SequenceNode:
		for _, item := range value.Content {
			if item.Kind != yaml.ScalarNode {
				p.fail(item.Line, "tools: each tool is a name")
				continue
			}
			add(item.Value, item.Line)
		}
	case yaml.ScalarNode:
		if value.Tag == "!!null" {
			p.fail(value.Line, "tools has no value: list tool names, write [] for no tools, or leave the key out for all tools")
			return nil
		}
		for name := range strings.SplitSeq(value.Value, ",") {
			add(name, value.Line)
		}
	default:
		p.fail(value.Line, "tools must be a list of tool names")
	}
	return out
}
