// Package mcpclient gives agents the tools of the user's MCP servers. It
// reads the servers from the formats users already have (a project's
// .mcp.json, the user's mcp.json, [mcp.servers.NAME] in config.toml),
// starts each at its first use with the official go-sdk client, shares it
// between the process's agents, restarts it with backoff after it dies and
// stops it, with its whole process group, when the process ends. Each tool
// is offered as mcp__<server>__<tool>.
package mcpclient

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/superagents/superagents/internal/config"
)

// File names.
const (
	// ProjectFile is the project's file, in the workspace (as Claude Code
	// and Cursor write it).
	ProjectFile = ".mcp.json"
	// UserFile is the user's file, in the user configuration directory.
	UserFile = "mcp.json"
)

// Transports.
const (
	Stdio = "stdio"
	HTTP  = "http" // streamable HTTP
	SSE   = "sse"  // the older HTTP+SSE transport
)

// Spec is one configured server, its ${VAR} references expanded.
type Spec struct {
	Name string
	// Origin is the file that defined it.
	Origin string
	// Project marks a server of the project's own files: it runs only in
	// a trusted project.
	Project bool
	// Type is Stdio, HTTP or SSE.
	Type    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Display says what the server is (the command and its arguments, or
	// the URL without its query) as written, before expansion, so that it
	// shows no secret a variable holds.
	Display string
	// Disabled servers are listed but never started.
	Disabled bool
	// Err is what is wrong with the configuration; such a server is
	// listed but never started.
	Err error

	// secrets are values that must not show in messages: what variables
	// expanded to, header values, the URL's query and credentials.
	secrets []string
}

// redacted stands for a secret in messages.
const redacted = "[redacted]"

// minSecretLen: shorter values are too common to hide without garbling
// messages.
const minSecretLen = 4

// redact hides the spec's secrets in a message (an error from a transport
// may quote the URL, for one).
func (s Spec) redact(msg string) string {
	for _, v := range s.secrets {
		msg = strings.ReplaceAll(msg, v, redacted)
	}
	return msg
}

// collectSecrets gathers what redact hides, longest first so that a value
// containing another is hidden whole.
func (s *Spec) collectSecrets(expanded []string) {
	add := func(v string) {
		if len(v) >= minSecretLen && !slices.Contains(s.secrets, v) {
			s.secrets = append(s.secrets, v)
		}
	}
	for _, v := range expanded {
		add(v)
	}
	for _, v := range s.Headers {
		add(v)
	}
	if u, err := url.Parse(s.URL); err == nil && s.URL != "" {
		add(u.RawQuery)
		if u.User != nil {
			add(u.User.String())
		}
	}
	slices.SortFunc(s.secrets, func(a, b string) int { return len(b) - len(a) })
}

// Sources say where Load looks.
type Sources struct {
	// Workspace is the project directory; its .mcp.json is read.
	Workspace string
	// UserDir is the user configuration directory; its mcp.json is read.
	UserDir string
	// Config holds the [mcp.servers] of config.toml.
	Config config.MCP
	// LookupEnv expands ${VAR}; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Servers are the configured servers, by name.
type Servers struct {
	List []Spec
	// ProjectHash identifies the project's server definitions as written
	// (before expansion): trusting a project trusts this content.
	ProjectHash string
	// Problems are files that could not be read at all.
	Problems []error
}

// HasProject reports whether any server comes from the project.
func (s Servers) HasProject() bool {
	return slices.ContainsFunc(s.List, func(sp Spec) bool { return sp.Project })
}

// Load reads the servers. On a name clash the definition nearest the
// project wins: the project's .mcp.json, then config.toml (the project
// file over the user's), then the user's mcp.json. A file that cannot be
// read or parsed is a problem and contributes nothing; a server whose
// definition is wrong is listed with its Err.
func Load(src Sources) Servers {
	lookup := src.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	byName := make(map[string]config.MCPServer)
	var out Servers
	add := func(defs map[string]config.MCPServer) {
		maps.Copy(byName, defs)
	}
	if src.UserDir != "" {
		defs, err := readJSON(filepath.Join(src.UserDir, UserFile), false)
		if err != nil {
			out.Problems = append(out.Problems, err)
		}
		add(defs)
	}
	add(src.Config.Servers)
	if src.Workspace != "" {
		defs, err := readJSON(filepath.Join(src.Workspace, ProjectFile), true)
		if err != nil {
			out.Problems = append(out.Problems, err)
		}
		add(defs)
	}
	project := make(map[string]config.MCPServer)
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		def := byName[name]
		if def.Project {
			project[name] = def
		}
		out.List = append(out.List, newSpec(name, def, lookup))
	}
	if len(project) > 0 {
		// encoding/json sorts map keys: the same definitions give the same
		// hash whatever their order in the file.
		b, _ := json.Marshal(project)
		sum := sha256.Sum256(b)
		out.ProjectHash = hex.EncodeToString(sum[:])
	}
	return out
}

// readJSON reads a .mcp.json-format file; a missing file is no servers.
func readJSON(path string, project bool) (map[string]config.MCPServer, error) {
	data, found, err := config.ReadFileIfExists(path)
	if err != nil {
		return nil, fmt.Errorf("read MCP servers: %w", err)
	}
	if !found {
		return nil, nil
	}
	return parseJSON(path, data, project)
}

// parseJSON decodes {"mcpServers": {NAME: {...}}}. A server entry that is
// not an object of the right types is an error naming the file and the
// server.
func parseJSON(path string, data []byte, project bool) (map[string]config.MCPServer, error) {
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: not valid JSON with an \"mcpServers\" object: %w", path, jsonError(data, err))
	}
	out := make(map[string]config.MCPServer, len(doc.MCPServers))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(doc.MCPServers)) {
		// Keys other hosts add ("alwaysAllow", "timeout"...) are ignored.
		var s config.MCPServer
		if err := json.Unmarshal(doc.MCPServers[name], &s); err != nil {
			errs = append(errs, fmt.Errorf("%s: server %q: %w", path, name, jsonError(doc.MCPServers[name], err)))
			continue
		}
		s.Origin, s.Project = path, project
		out[name] = s
	}
	return out, errors.Join(errs...)
}

// jsonError rewords decoding errors without quoting values (a header
// value may be a token).
func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		line := bytes.Count(data[:min(int(syn.Offset), len(data))], []byte("\n")) + 1
		return fmt.Errorf("syntax error on line %d", line)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if typ.Field == "" {
			return fmt.Errorf("want an object, not a JSON %s", typ.Value)
		}
		return fmt.Errorf("%q: want %s, not a JSON %s", typ.Field, typ.Type, typ.Value)
	}
	return err
}

var serverNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// newSpec checks a definition and expands its ${VAR} references.
func newSpec(name string, def config.MCPServer, lookup func(string) (string, bool)) Spec {
	s := Spec{Name: name, Origin: def.Origin, Project: def.Project, Disabled: def.Disabled, Display: display(def)}
	fail := func(format string, args ...any) Spec {
		where := s.Origin
		if where == "" {
			where = "configuration"
		}
		s.Err = fmt.Errorf("%s: server %q: %s", where, name, fmt.Sprintf(format, args...))
		return s
	}
	if !serverNamePattern.MatchString(name) {
		return fail("a server name has 1 to 32 letters, digits, '_' or '-'")
	}
	s.Type = def.Type
	switch {
	case s.Type == "" && def.URL != "" && def.Command == "":
		s.Type = HTTP
	case s.Type == "":
		s.Type = Stdio
	case s.Type == "streamable-http" || s.Type == "streamableHttp":
		s.Type = HTTP
	}
	x := expander{lookup: lookup}
	switch s.Type {
	case Stdio:
		if def.Command == "" {
			return fail("a stdio server needs a \"command\"")
		}
		if def.URL != "" || len(def.Headers) > 0 {
			return fail("a stdio server takes no \"url\" or \"headers\" (set \"type\" to \"http\" or \"sse\")")
		}
		s.Command = x.expand(def.Command)
		for _, a := range def.Args {
			s.Args = append(s.Args, x.expand(a))
		}
		s.Env = x.expandMap(def.Env)
	case HTTP, SSE:
		if def.URL == "" {
			return fail("a server of type %q needs a \"url\"", s.Type)
		}
		if def.Command != "" || len(def.Args) > 0 || len(def.Env) > 0 {
			return fail("a server of type %q takes no \"command\", \"args\" or \"env\"", s.Type)
		}
		s.URL = x.expand(def.URL)
		s.Headers = x.expandMap(def.Headers)
	default:
		return fail("unknown type %q (want \"stdio\", \"http\" or \"sse\")", def.Type)
	}
	s.collectSecrets(x.values)
	if len(x.missing) > 0 {
		return fail("%s not set in the environment", strings.Join(x.missing, ", "))
	}
	if s.Type != Stdio {
		u, perr := url.Parse(s.URL)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			// The URL may hold a token: name the problem, not the value.
			return fail("\"url\" is not an http:// or https:// URL with a host")
		}
	}
	return s
}

// expander expands ${VAR} and ${VAR:-default}, collecting the names of
// unset variables that have no default.
type expander struct {
	lookup  func(string) (string, bool)
	missing []string
	values  []string // what variables expanded to
}

var varPattern = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

func (x *expander) expand(s string) string {
	return varPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := varPattern.FindStringSubmatch(m)
		if v, ok := x.lookup(sub[1]); ok && v != "" {
			x.values = append(x.values, v)
			return v
		}
		if sub[2] != "" {
			return sub[3]
		}
		if !slices.Contains(x.missing, "${"+sub[1]+"}") {
			x.missing = append(x.missing, "${"+sub[1]+"}")
		}
		return ""
	})
}

func (x *expander) expandMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = x.expand(v)
	}
	return out
}

// display is the definition in a line, before expansion.
func display(def config.MCPServer) string {
	if def.Command != "" {
		return strings.TrimSpace(def.Command + " " + strings.Join(def.Args, " "))
	}
	u := def.URL
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	return u
}
