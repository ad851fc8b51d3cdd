package agents

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/superagents/superagents/internal/xdg"
)

//go:embed builtin/*.md
var builtinFiles embed.FS

// Dirs are the directories profiles are loaded from. An empty field, or a
// directory that does not exist, is skipped.
type Dirs struct {
	// Project is <workspace>/.superagents/agents.
	Project string
	// User is $XDG_CONFIG_HOME/superagents/agents.
	User string
	// ClaudeProject and ClaudeUser are Claude Code's subagent directories,
	// <workspace>/.claude/agents and ~/.claude/agents (see ParseClaude).
	ClaudeProject string
	ClaudeUser    string
}

// ProjectDir returns the project profile directory of a workspace.
func ProjectDir(workspace string) string {
	return filepath.Join(workspace, ".superagents", "agents")
}

// UserDir returns the user profile directory: $XDG_CONFIG_HOME/superagents/agents,
// or ~/.config/superagents/agents when XDG_CONFIG_HOME is unset (or not an
// absolute path, as the XDG specification asks).
func UserDir() (string, error) {
	dir, err := xdg.ConfigDir(os.Getenv)
	if err != nil {
		return "", fmt.Errorf("find the user profile directory: %w", err)
	}
	return filepath.Join(dir, "agents"), nil
}

// DefaultDirs returns the usual directories for a workspace. Without a
// home directory the user directory is left out.
func DefaultDirs(workspace string) Dirs {
	user, _ := UserDir()
	return Dirs{Project: ProjectDir(workspace), User: user}
}

// Catalog is the loaded profiles, one per name.
type Catalog struct {
	byName map[string]Profile
}

// Get returns the profile with that name.
func (c *Catalog) Get(name string) (Profile, bool) {
	p, ok := c.byName[name]
	return p, ok
}

// List returns the profiles sorted by name.
func (c *Catalog) List() []Profile {
	out := make([]Profile, 0, len(c.byName))
	for _, name := range c.Names() {
		out = append(out, c.byName[name])
	}
	return out
}

// Names returns the profile names, sorted.
func (c *Catalog) Names() []string {
	names := make([]string, 0, len(c.byName))
	for name := range c.byName {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Builtins returns the built-in profiles, general and explore. They are
// part of the program (and its tests), so an error here is a bug.
func Builtins() ([]Profile, error) {
	entries, err := fs.ReadDir(builtinFiles, "builtin")
	if err != nil {
		return nil, fmt.Errorf("built-in profiles: %w", err)
	}
	var out []Profile
	for _, e := range entries {
		data, err := builtinFiles.ReadFile("builtin/" + e.Name())
		if err != nil {
			return nil, fmt.Errorf("built-in profiles: %w", err)
		}
		p, err := Parse("builtin/"+e.Name(), data)
		if err != nil {
			return nil, fmt.Errorf("built-in profiles: %w", err)
		}
		p.Source = Source{Kind: Builtin}
		out = append(out, p)
	}
	return out, nil
}

// Load reads the built-in, Claude Code, user and project profiles. A
// profile hides the profiles of the same name from sources of lower
// precedence (project > user > Claude Code project > Claude Code user >
// built-in): ours win over Claude Code's. A file that cannot be read or parsed is left out and
// reported, one *FileError per problem, while the others load.
func Load(dirs Dirs) (*Catalog, []error) {
	c := &Catalog{byName: make(map[string]Profile)}
	var problems []error
	builtins, err := Builtins()
	if err != nil {
		problems = append(problems, err)
	}
	for _, p := range builtins {
		c.byName[p.Name] = p
	}
	for _, src := range []struct {
		kind SourceKind
		dir  string
	}{{ClaudeUser, dirs.ClaudeUser}, {ClaudeProject, dirs.ClaudeProject}, {User, dirs.User}, {Project, dirs.Project}} {
		if src.dir == "" {
			continue
		}
		profiles, errs := loadDir(src.kind, src.dir)
		problems = append(problems, errs...)
		for _, p := range profiles {
			if hidden, ok := c.byName[p.Name]; ok {
				p.Overrides = append([]Source{hidden.Source}, hidden.Overrides...)
			}
			c.byName[p.Name] = p
		}
	}
	return c, problems
}

// loadDir parses the *.md files of one directory, in name order.
func loadDir(kind SourceKind, dir string) ([]Profile, []error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{&FileError{Path: dir, Err: fmt.Errorf("read %s profile directory: %w", kind, err)}}
	}
	var profiles []Profile
	var problems []error
	defined := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, name)
		data, err := os.ReadFile(path)
		if err != nil {
			problems = append(problems, &FileError{Path: path, Err: err})
			continue
		}
		parse := Parse
		if kind == ClaudeUser || kind == ClaudeProject {
			parse = ParseClaude
		}
		p, err := parse(path, data)
		if err != nil {
			problems = append(problems, flatten(err)...)
			continue
		}
		if first, dup := defined[p.Name]; dup {
			problems = append(problems, &FileError{Path: path, Line: 1,
				Err: fmt.Errorf("profile %q is already defined in %s; this file is ignored", p.Name, filepath.Base(first))})
			continue
		}
		defined[p.Name] = path
		p.Source = Source{Kind: kind, Path: path}
		profiles = append(profiles, p)
	}
	return profiles, problems
}

// flatten undoes errors.Join.
func flatten(err error) []error {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		return joined.Unwrap()
	}
	return []error{err}
}
