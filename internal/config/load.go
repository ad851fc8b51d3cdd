package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/superagents/superagents/internal/tools"
	"github.com/superagents/superagents/internal/xdg"
	"github.com/superagents/superagents/sandbox"
)

// File names.
const (
	// FileName is the name of both configuration files.
	FileName = "config.toml"
	// ProjectDir is the directory, inside the workspace, of the project file.
	ProjectDir = ".superagents"
)

// Environment variables read by Load. API keys are read from each provider's
// api_key_env (for the built-in providers: ANTHROPIC_API_KEY,
// OPENAI_API_KEY, OPENROUTER_API_KEY).
const (
	EnvModel            = "SUPERAGENTS_MODEL"
	EnvOfflineScript    = "SUPERAGENTS_OFFLINE_SCRIPT"
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL"
	EnvOpenAIBaseURL    = "OPENAI_BASE_URL"
	EnvOllamaHost       = "OLLAMA_HOST"
)

// Options says where Load looks.
type Options struct {
	// Workspace is the project directory; its .superagents/config.toml is
	// read if it exists. Empty: no project file.
	Workspace string
	// UserDir is the directory of the user file. Empty: $XDG_CONFIG_HOME/
	// superagents, or ~/.config/superagents when XDG_CONFIG_HOME is unset.
	UserDir string
	// LookupEnv reads the environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// TrustProject trusts the workspace's project file for this run, as
	// trusted_projects in the user file does (see project.go).
	TrustProject bool
}

// Load reads the configuration: defaults, then the user file, then the
// project file, then the environment. Missing files are not an error. If
// no model is chosen by any of them, it picks one (see Config.Notice).
// The project file may not loosen permissions or the sandbox, and may say
// where requests, keys and data go only when the project is trusted; what
// it may not set is ignored with a warning (Config.Warnings).
func Load(opts Options) (Config, error) {
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	userDir, err := userDir(opts.UserDir, lookup)
	if err != nil {
		return Config{}, err
	}
	paths := []string{filepath.Join(userDir, FileName)}
	if opts.Workspace != "" {
		paths = append(paths, filepath.Join(opts.Workspace, ProjectDir, FileName))
	}

	c := Default()
	var files []*File
	for i, path := range paths {
		var project *projectFile
		if i > 0 {
			// Only the user's file, read by now, can trust the project.
			project = &projectFile{dir: opts.Workspace, trusted: opts.TrustProject || c.Trusts(opts.Workspace)}
		}
		userSandbox := c.Sandbox
		f, err := c.mergeFile(path, project)
		if err != nil {
			return Config{}, err
		}
		if f != nil {
			if err := c.noteMCP(f, project != nil); err != nil {
				return Config{}, err
			}
			if err := c.noteSandbox(f, project != nil, userSandbox); err != nil {
				return Config{}, err
			}
			files = append(files, f)
			c.Files = append(c.Files, path)
		}
	}
	if err := c.applyEnv(lookup); err != nil {
		return Config{}, err
	}
	c.chooseModel()
	if err := c.Validate(); err != nil {
		return Config{}, locate(err, files, c.ModelOrigin)
	}
	return c, nil
}

// noteSandbox refuses a project file that loosens the sandbox: a
// project's own file could otherwise let its commands out.
func (c *Config) noteSandbox(f *File, project bool, user sandbox.Config) error {
	if !project {
		return nil
	}
	if key, looser := c.Sandbox.Looser(user); looser {
		return f.Errorf("sandbox."+key, "a project's configuration file may make the sandbox stricter, never looser: allow this in your own configuration file")
	}
	return nil
}

// ReadFileIfExists reads a configuration file. Only a path with nothing
// at it is no file (found is false): a dangling symbolic link, a directory
// or a file that cannot be read is an *Error naming the path, so that a
// file the user meant is never silently replaced by the defaults.
func ReadFileIfExists(path string) (data []byte, found bool, err error) {
	data, err = os.ReadFile(path)
	if err == nil {
		return data, true, nil
	}
	fail := func(format string, args ...any) ([]byte, bool, error) {
		return nil, false, &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
	}
	if errors.Is(err, fs.ErrNotExist) {
		// os.ReadFile says the same of a dangling link, whether the file
		// or its directory is the link.
		for _, p := range []string{path, filepath.Dir(path)} {
			info, lerr := os.Lstat(p)
			if lerr != nil || info.Mode()&fs.ModeSymlink == 0 {
				continue
			}
			if _, serr := os.Stat(p); errors.Is(serr, fs.ErrNotExist) {
				target, _ := os.Readlink(p)
				return fail("cannot be read: %s is a symbolic link to %s, which does not exist", p, target)
			}
		}
		return nil, false, nil
	}
	if info, serr := os.Stat(path); serr == nil && info.IsDir() {
		return fail("cannot be read: it is a directory, not a file")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is already in the message
	}
	return fail("cannot be read: %v", err)
}

// userDir returns the directory of the user file.
func userDir(dir string, lookup func(string) (string, bool)) (string, error) {
	if dir != "" {
		return dir, nil
	}
	dir, err := xdg.ConfigDir(func(name string) string { v, _ := lookup(name); return v })
	if err != nil {
		return "", fmt.Errorf("find the user configuration directory: %w", err)
	}
	return dir, nil
}

// mergeFile decodes the file at path over c, key by key; of a project's
// file, it keeps only what the project may set. It returns nil, nil when
// the file does not exist.
func (c *Config) mergeFile(path string, project *projectFile) (*File, error) {
	data, found, err := ReadFileIfExists(path)
	if err != nil || !found {
		return nil, err
	}
	var user Config // what the user's file and the defaults said
	if project != nil {
		user = *c
		user.Providers = maps.Clone(c.Providers)
		user.Models = maps.Clone(c.Models)
		// Decoded on their own, the project's permissions narrow the
		// user's instead of replacing them.
		c.Permissions = tools.Policy{}
	}
	f, err := DecodeFile(path, data, c)
	if err != nil {
		return nil, err
	}
	if f.Has("model") {
		c.ModelOrigin = path
	}
	for name, p := range c.Providers {
		key := "providers." + name
		if f.Has(key+".api_key") && !p.APIKey.IsZero() {
			p.KeyOrigin = path
		}
		if f.Has(key+".script") && p.Script != "" && !filepath.IsAbs(p.Script) {
			p.Script = filepath.Join(filepath.Dir(path), p.Script)
		}
		c.Providers[name] = p
	}
	if project != nil {
		if err := c.narrowPermissions(f, user.Permissions); err != nil {
			return nil, err
		}
		if !project.trusted {
			c.ignoreUntrusted(f, user, project.dir)
		}
	}
	return f, nil
}

// applyEnv applies the environment over the files.
func (c *Config) applyEnv(lookup func(string) (string, bool)) error {
	get := func(name string) (string, bool) {
		v, ok := lookup(name)
		return strings.TrimSpace(v), ok && strings.TrimSpace(v) != ""
	}
	if v, ok := get(EnvModel); ok {
		c.Model = v
		c.ModelOrigin = "env " + EnvModel
	}
	setURL := func(provider, env, value string) error {
		if err := checkBaseURL(value); err != nil {
			return fmt.Errorf("%s: %w", env, err)
		}
		p := c.Providers[provider]
		p.BaseURL = value
		c.Providers[provider] = p
		return nil
	}
	if v, ok := get(EnvAnthropicBaseURL); ok {
		if err := setURL("anthropic", EnvAnthropicBaseURL, v); err != nil {
			return err
		}
	}
	if v, ok := get(EnvOpenAIBaseURL); ok {
		if err := setURL("openai", EnvOpenAIBaseURL, v); err != nil {
			return err
		}
	}
	if v, ok := get(EnvOllamaHost); ok {
		base, err := OllamaBaseURL(v)
		if err != nil {
			return fmt.Errorf("%s: %w", EnvOllamaHost, err)
		}
		if err := setURL("ollama", EnvOllamaHost, base); err != nil {
			return err
		}
	}
	if v, ok := get(EnvOfflineScript); ok {
		p := c.Providers[OfflineModel]
		p.Script = v
		c.Providers[OfflineModel] = p
	}
	for name, p := range c.Providers {
		if p.APIKeyEnv == "" {
			continue
		}
		if v, ok := get(p.APIKeyEnv); ok {
			p.APIKey = NewSecret(v)
			p.KeyOrigin = "env " + p.APIKeyEnv
			c.Providers[name] = p
		}
	}
	return nil
}

// OllamaBaseURL turns an OLLAMA_HOST value ("127.0.0.1", "host:11434",
// "https://ollama.example") into the base URL of Ollama's OpenAI-compatible
// API. As in Ollama, the scheme defaults to http and the port to 11434
// (443 for https).
func OllamaBaseURL(host string) (string, error) {
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("invalid host %q: want host[:port] or http(s)://host[:port]", strings.TrimPrefix(host, "http://"))
	}
	if u.Port() == "" {
		port := "11434"
		if u.Scheme == "https" {
			port = "443"
		}
		u.Host = u.Hostname() + ":" + port
		if strings.Contains(u.Hostname(), ":") { // IPv6 literal
			u.Host = "[" + u.Hostname() + "]:" + port
		}
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1"
	return u.String(), nil
}

// chooseModel picks the default model when nothing set one: the first
// built-in provider with a key (Anthropic, OpenAI, OpenRouter), else the
// offline model.
func (c *Config) chooseModel() {
	if c.Model != "" {
		return
	}
	c.Defaulted = true
	c.ModelOrigin = "default"
	c.Model = OfflineModel
	for _, b := range Builtins() {
		if b.DefaultModel != "" && !c.Providers[b.Name].APIKey.IsZero() {
			c.Model = b.Name + "/" + b.DefaultModel
			return
		}
	}
}

// locate places validation errors at the file and line that set their key,
// looking at the files from the highest precedence down. The model is
// placed only when a file set it (not the environment or a default).
func locate(err error, files []*File, modelOrigin string) error {
	var errs []error
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var ce *Error
		if !errors.As(e, &ce) || ce.Path != "" {
			continue
		}
		if ce.Key == "model" {
			for _, f := range files {
				if f.Path == modelOrigin {
					ce.Path, ce.Line = f.Path, f.Line("model")
				}
			}
			continue
		}
		for _, exact := range []bool{true, false} {
			if f := findFile(files, ce.Key, exact); f != nil {
				ce.Path, ce.Line = f.Path, f.Line(ce.Key)
				break
			}
		}
	}
	return errors.Join(errs...)
}

func findFile(files []*File, key string, exact bool) *File {
	for i := len(files) - 1; i >= 0; i-- {
		if exact && files[i].Has(key) || !exact && files[i].Line(key) > 0 {
			return files[i]
		}
	}
	return nil
}

// Overrides are values given on the command line; zero fields change
// nothing.
type Overrides struct {
	Model             string
	RequestTimeout    time.Duration
	StreamIdleTimeout time.Duration
	MaxRetries        *int
	MaxOutputTokens   int
}

// Apply applies command-line values over the loaded configuration (the
// last step of the precedence) and validates the result.
func (c *Config) Apply(o Overrides) error {
	if o.RequestTimeout < 0 || o.StreamIdleTimeout < 0 {
		return errors.New("timeouts must not be negative")
	}
	if o.Model != "" {
		c.Model = o.Model
		c.ModelOrigin = "flag"
		c.Defaulted = false
	}
	if o.RequestTimeout != 0 {
		c.Limits.RequestTimeout = Duration{o.RequestTimeout}
	}
	if o.StreamIdleTimeout != 0 {
		c.Limits.StreamIdleTimeout = Duration{o.StreamIdleTimeout}
	}
	if o.MaxRetries != nil {
		c.Limits.MaxRetries = *o.MaxRetries
	}
	if o.MaxOutputTokens != 0 {
		c.Limits.MaxOutputTokens = o.MaxOutputTokens
	}
	return c.Validate()
}
