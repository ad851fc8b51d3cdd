package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pelletier/go-toml/v2"
)

// env is a fake environment for Load.
type env map[string]string

func (e env) lookup(name string) (string, bool) {
	v, ok := e[name]
	return v, ok
}

// setup writes the user and project files (skipping empty ones) and returns
// Options that read them.
func setup(t *testing.T, user, project string, vars env) Options {
	t.Helper()
	root := t.TempDir()
	opts := Options{
		Workspace: filepath.Join(root, "work"),
		UserDir:   filepath.Join(root, "user"),
		LookupEnv: vars.lookup,
	}
	write := func(path, content string) {
		if content == "" {
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(opts.UserDir, FileName), user)
	write(filepath.Join(opts.Workspace, ProjectDir, FileName), project)
	return opts
}

func TestLoadPrecedence(t *testing.T) {
	tests := []struct {
		name          string
		user, project string
		env           env
		overrides     *Overrides
		trust         bool // --trust-project
		wantModel     string
		wantOrigin    string // "user", "project", or a literal origin
		check         func(t *testing.T, c Config)
	}{
		{
			name:       "user file sets the model",
			user:       `model = "ollama/qwen3"`,
			wantModel:  "ollama/qwen3",
			wantOrigin: "user",
		},
		{
			name:       "project file overrides the user file",
			user:       `model = "ollama/qwen3"`,
			project:    `model = "openai/gpt-4.1"`,
			wantModel:  "openai/gpt-4.1",
			wantOrigin: "project",
		},
		{
			name:       "environment overrides the files",
			project:    `model = "openai/gpt-4.1"`,
			env:        env{"SUPERAGENTS_MODEL": "anthropic/claude-sonnet-4-5"},
			wantModel:  "anthropic/claude-sonnet-4-5",
			wantOrigin: "env SUPERAGENTS_MODEL",
		},
		{
			name:       "flags override the environment",
			env:        env{"SUPERAGENTS_MODEL": "anthropic/claude-sonnet-4-5"},
			overrides:  &Overrides{Model: "ollama/llama3.2", RequestTimeout: 5 * time.Second},
			wantModel:  "ollama/llama3.2",
			wantOrigin: "flag",
			check: func(t *testing.T, c Config) {
				if c.Limits.RequestTimeout.Duration != 5*time.Second {
					t.Errorf("request timeout = %v, want 5s", c.Limits.RequestTimeout)
				}
			},
		},
		{
			name:  "a trusted project overrides the user file key by key",
			trust: true,
			user: `
[providers.proxy]
type = "openai"
base_url = "http://user.example/v1"
api_key_env = "PROXY_KEY"

[limits]
request_timeout = "10s"
max_retries = 5
`,
			project: `
model = "proxy/some-model"
[providers.proxy]
base_url = "http://project.example/v1"

[limits]
max_retries = 0
`,
			env:        env{"PROXY_KEY": "sk-proxy"},
			wantModel:  "proxy/some-model",
			wantOrigin: "project",
			check: func(t *testing.T, c Config) {
				p := c.Providers["proxy"]
				if p.Type != TypeOpenAI || p.BaseURL != "http://project.example/v1" || p.APIKeyEnv != "PROXY_KEY" {
					t.Errorf("proxy = %+v", p)
				}
				if p.APIKey.Reveal() != "sk-proxy" || p.KeyOrigin != "env PROXY_KEY" {
					t.Errorf("proxy key origin %q", p.KeyOrigin)
				}
				want := Limits{RequestTimeout: Duration{10 * time.Second}, StreamIdleTimeout: Duration{DefaultStreamIdleTimeout}, MaxRetries: 0, MaxSteps: DefaultMaxSteps, RepeatLimit: DefaultRepeatLimit}
				if c.Limits != want {
					t.Errorf("limits = %+v, want %+v", c.Limits, want)
				}
			},
		},
		{
			name:       "environment key overrides the file key",
			user:       "[providers.anthropic]\napi_key = \"from-file\"\n",
			env:        env{"ANTHROPIC_API_KEY": "from-env"},
			wantModel:  "anthropic/claude-sonnet-4-5",
			wantOrigin: "default",
			check: func(t *testing.T, c Config) {
				if got := c.Providers["anthropic"].APIKey.Reveal(); got != "from-env" {
					t.Errorf("key = %q, want from-env", got)
				}
			},
		},
		{
			name:       "file key is used when the environment has none",
			user:       "[providers.anthropic]\napi_key = \"from-file\"\n",
			wantModel:  "anthropic/claude-sonnet-4-5",
			wantOrigin: "default",
			check: func(t *testing.T, c Config) {
				if p := c.Providers["anthropic"]; p.APIKey.Reveal() != "from-file" || !strings.HasSuffix(p.KeyOrigin, FileName) {
					t.Errorf("key origin = %q", p.KeyOrigin)
				}
			},
		},
		{
			name: "base URLs from the environment",
			env: env{
				"ANTHROPIC_BASE_URL": "http://127.0.0.1:9000",
				"OPENAI_BASE_URL":    "http://127.0.0.1:9001/v1",
				"OLLAMA_HOST":        "127.0.0.1:9002",
			},
			wantModel:  "offline",
			wantOrigin: "default",
			check: func(t *testing.T, c Config) {
				got := []string{c.Providers["anthropic"].BaseURL, c.Providers["openai"].BaseURL, c.Providers["ollama"].BaseURL}
				want := []string{"http://127.0.0.1:9000", "http://127.0.0.1:9001/v1", "http://127.0.0.1:9002/v1"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("base URLs (-want +got):\n%s", diff)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := setup(t, tt.user, tt.project, tt.env)
			opts.TrustProject = tt.trust
			c, err := Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			if tt.overrides != nil {
				if err := c.Apply(*tt.overrides); err != nil {
					t.Fatal(err)
				}
			}
			if c.Model != tt.wantModel {
				t.Errorf("model = %q, want %q", c.Model, tt.wantModel)
			}
			origin := tt.wantOrigin
			switch origin {
			case "user":
				origin = filepath.Join(opts.UserDir, FileName)
			case "project":
				origin = filepath.Join(opts.Workspace, ProjectDir, FileName)
			}
			if c.ModelOrigin != origin {
				t.Errorf("model origin = %q, want %q", c.ModelOrigin, origin)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

func TestLoadDefaultsToOffline(t *testing.T) {
	c, err := Load(setup(t, "", "", env{}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "offline" || !c.Defaulted || c.ModelOrigin != "default" {
		t.Fatalf("model %q defaulted=%v origin=%q", c.Model, c.Defaulted, c.ModelOrigin)
	}
	if n := c.Notice(); !strings.Contains(n, "offline model") || !strings.Contains(n, "ANTHROPIC_API_KEY") {
		t.Errorf("notice = %q", n)
	}
	if len(c.Files) != 0 {
		t.Errorf("files = %v, want none", c.Files)
	}
}

func TestLoadDefaultModelFromKey(t *testing.T) {
	tests := []struct {
		env  env
		want string
	}{
		{env{"ANTHROPIC_API_KEY": "a"}, "anthropic/claude-sonnet-4-5"},
		{env{"OPENAI_API_KEY": "o"}, "openai/gpt-4.1"},
		{env{"OPENROUTER_API_KEY": "r"}, "openrouter/anthropic/claude-sonnet-4.5"},
		{env{"OPENAI_API_KEY": "o", "ANTHROPIC_API_KEY": "a"}, "anthropic/claude-sonnet-4-5"},
		{env{"ANTHROPIC_API_KEY": "   "}, "offline"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			c, err := Load(setup(t, "", "", tt.env))
			if err != nil {
				t.Fatal(err)
			}
			if c.Model != tt.want || !c.Defaulted {
				t.Fatalf("model = %q (defaulted %v), want %q", c.Model, c.Defaulted, tt.want)
			}
			if tt.want != "offline" && !strings.Contains(c.Notice(), "env ") {
				t.Errorf("notice %q does not say which variable", c.Notice())
			}
		})
	}
}

func TestLoadErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name    string
		project string
		want    []string // substrings of the error, after the project path
	}{
		{"unknown top-level key", "model = \"offline\"\nmodle = \"x\"\n", []string{":2:1: modle: unknown key"}},
		{"unknown provider key", "[providers.ollama]\nbase_url = \"http://h:1/v1\"\nbogus = 1\n", []string{":3:1: providers.ollama.bogus: unknown key"}},
		{"two unknown keys", "a = 1\n\nb = 2\n", []string{":1:1: a: unknown key", ":3:1: b: unknown key"}},
		{"wrong type", "\n[limits]\nmax_retries = \"three\"\n", []string{":3:", "limits.max_retries", "cannot decode TOML string"}},
		{"bad duration", "[limits]\nstream_idle_timeout = \"soon\"\n", []string{":2:", "invalid duration \"soon\""}},
		{"negative duration", "[limits]\nrequest_timeout = \"-1s\"\n", []string{":2:", "must not be negative"}},
		{"syntax error", "model = \"offline\"\n[providers\n", []string{":2:"}},
		{"custom provider without type", "\n\n[providers.mine]\nbase_url = \"http://h/v1\"\n", []string{":3: providers.mine.type: required for a custom provider"}},
		{"bad base URL", "[providers.mine]\ntype = \"openai\"\nbase_url = \"localhost:8000\"\n", []string{":3: providers.mine.base_url: invalid URL"}},
		{"unknown type", "[providers.mine]\ntype = \"gemini\"\n", []string{":2: providers.mine.type: unknown type \"gemini\""}},
		{"negative retries", "[limits]\nmax_retries = -1\n", []string{":2: limits.max_retries: must not be negative"}},
		{"unknown provider in model", "\nmodel = \"nope/m\"\n", []string{":2: model: ", "unknown provider \"nope\"", "anthropic, llamacpp, lmstudio, offline, ollama, openai, openrouter, vllm"}},
		{"bad provider name", "[providers.My-Proxy]\ntype = \"openai\"\nbase_url = \"http://h/v1\"\n", []string{":1: providers.My-Proxy: ", "lowercase"}},
		{"script on a remote provider", "[providers.openai]\nscript = \"x.toml\"\n", []string{":2: providers.openai.script: only the offline provider"}},
		{"inline table key", "[providers]\nmine = { type = \"openai\", base_url = \"ftp://h\" }\n", []string{":2: providers.mine.base_url: invalid URL"}},
		{"task concurrency zero", "[tasks]\nconcurrency = 0\n", []string{":2: tasks.concurrency: must be more than 0"}},
		{"negative spawn depth", "\n[tasks]\nspawn_depth = -1\n", []string{":3: tasks.spawn_depth: must not be negative"}},
		{"bad task timeout", "[tasks]\ntimeout = \"forever\"\n", []string{":2:", "invalid duration"}},
		{"negative max cost", "[tasks]\nmax_cost = -0.5\n", []string{":2: tasks.max_cost: must be a number of dollars"}},
		{"negative max tokens", "[tasks]\nmax_tokens = -1\n", []string{":2: tasks.max_tokens: must not be negative"}},
		{"text max cost", "[tasks]\nmax_cost = \"lots\"\n", []string{":2:", "tasks.max_cost", "cannot decode TOML string"}},
		{"stale before a heartbeat", "[tasks]\nheartbeat = \"5s\"\nstale_after = \"5s\"\n", []string{":3: tasks.stale_after: must be longer than tasks.heartbeat"}},
		{"negative heartbeat", "[tasks]\nheartbeat = \"-1s\"\n", []string{":2:", "must not be negative"}},
		{"zero max steps", "[limits]\nmax_steps = 0\n", []string{":2: limits.max_steps: must be more than 0"}},
		{"fork section", "[fork]\ntier1_results = -1\n", []string{":1: fork: ", "tier1_results is -1"}},
		{"unknown fork key", "[fork]\ntier1_count = 5\n", []string{":2:1: fork.tier1_count: unknown key"}},
		{"permissions through a sub-table", "\n[permissions.bash]\ndeny = [\"rm |\"]\n", []string{":2: permissions: ", "one pattern per command"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := setup(t, "", tt.project, env{})
			opts.TrustProject = true // or its providers' settings would be ignored, errors and all
			_, err := Load(opts)
			if err == nil {
				t.Fatal("no error")
			}
			path := filepath.Join(opts.Workspace, ProjectDir, FileName)
			msg := err.Error()
			if !strings.HasPrefix(msg, path+":") {
				t.Errorf("error %q does not start with the file path", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			var ce *Error
			if !errors.As(err, &ce) || ce.Line == 0 {
				t.Errorf("error is not an *Error with a line: %#v", err)
			}
		})
	}
}

func TestLoadEnvErrors(t *testing.T) {
	tests := []struct {
		env  env
		want string
	}{
		{env{"SUPERAGENTS_MODEL": "nope/x"}, "unknown provider \"nope\""},
		{env{"SUPERAGENTS_MODEL": "gpt-4.1"}, "invalid model \"gpt-4.1\": it names no provider"},
		{env{"OLLAMA_HOST": "ftp://x"}, "OLLAMA_HOST: invalid host"},
		{env{"ANTHROPIC_BASE_URL": "not a url"}, "ANTHROPIC_BASE_URL: invalid URL"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := Load(setup(t, "", "", tt.env))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// A configuration file that is there but cannot be read is an error naming
// it, never the defaults: a file the user meant must not be passed over.
func TestLoadUnreadableFiles(t *testing.T) {
	tests := []struct {
		name string
		// spoil makes the file at path unreadable.
		spoil   func(t *testing.T, path string)
		want    string
		notRoot bool // root reads a file whatever its mode
	}{
		{
			name: "dangling symbolic link",
			spoil: func(t *testing.T, path string) {
				mkdirAll(t, filepath.Dir(path))
				symlink(t, filepath.Join(filepath.Dir(path), "moved.toml"), path)
			},
			want: "is a symbolic link to",
		},
		{
			name: "dangling symbolic link as its directory",
			spoil: func(t *testing.T, path string) {
				dir := filepath.Dir(path)
				mkdirAll(t, filepath.Dir(dir))
				symlink(t, dir+"-moved", dir)
			},
			want: "-moved, which does not exist",
		},
		{
			name:  "directory",
			spoil: func(t *testing.T, path string) { mkdirAll(t, path) },
			want:  "it is a directory",
		},
		{
			name: "no permission to read",
			spoil: func(t *testing.T, path string) {
				mkdirAll(t, filepath.Dir(path))
				if err := os.WriteFile(path, []byte("model = \"offline\"\n"), 0o000); err != nil {
					t.Fatal(err)
				}
			},
			want:    "permission denied",
			notRoot: true,
		},
	}
	for _, tt := range tests {
		for _, file := range []string{"user", "project"} {
			t.Run(tt.name+" ("+file+" file)", func(t *testing.T) {
				if tt.notRoot && os.Geteuid() == 0 {
					t.Skip("running as root, which can read a file of mode 000: run the tests as another user to check this case")
				}
				opts := setup(t, "", "", env{})
				path := filepath.Join(opts.UserDir, FileName)
				if file == "project" {
					path = filepath.Join(opts.Workspace, ProjectDir, FileName)
				}
				tt.spoil(t, path)
				c, err := Load(opts)
				if err == nil {
					t.Fatalf("no error; model %q from %v", c.Model, c.Files)
				}
				if msg := err.Error(); !strings.HasPrefix(msg, path+": cannot be read: ") || !strings.Contains(msg, tt.want) {
					t.Errorf("error %q, want %q and then %q", msg, path+": cannot be read: ", tt.want)
				}
			})
		}
	}
}

func mkdirAll(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestUserDir(t *testing.T) {
	tests := []struct {
		env  env
		want string
	}{
		{env{"XDG_CONFIG_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/superagents"},
		{env{"HOME": "/home/u"}, "/home/u/.config/superagents"},
		{env{"XDG_CONFIG_HOME": "relative", "HOME": "/home/u"}, "/home/u/.config/superagents"},
	}
	for _, tt := range tests {
		got, err := userDir("", tt.env.lookup)
		if err != nil || got != tt.want {
			t.Errorf("userDir(%v) = %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
}

func TestLoadReadsXDGUserFile(t *testing.T) {
	xdg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "superagents"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(xdg, "superagents", FileName)
	if err := os.WriteFile(path, []byte(`model = "ollama/qwen3"`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(Options{LookupEnv: env{"XDG_CONFIG_HOME": xdg}.lookup})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "ollama/qwen3" || len(c.Files) != 1 || c.Files[0] != path {
		t.Fatalf("model %q from %v", c.Model, c.Files)
	}
}

func TestScriptPathIsRelativeToItsFile(t *testing.T) {
	opts := setup(t, "", "[providers.offline]\nscript = \"demo.toml\"\n", env{})
	opts.TrustProject = true
	c, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(opts.Workspace, ProjectDir, "demo.toml")
	if got := c.Providers["offline"].Script; got != want {
		t.Errorf("script = %q, want %q", got, want)
	}

	opts = setup(t, "", "[providers.offline]\nscript = \"demo.toml\"\n", env{"SUPERAGENTS_OFFLINE_SCRIPT": "/abs/other.toml"})
	opts.TrustProject = true
	c, err = Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Providers["offline"].Script; got != "/abs/other.toml" {
		t.Errorf("script = %q, want the environment's", got)
	}
}

func TestOllamaBaseURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"127.0.0.1", "http://127.0.0.1:11434/v1"},
		{"0.0.0.0:8080", "http://0.0.0.0:8080/v1"},
		{"http://gpu-box:11434", "http://gpu-box:11434/v1"},
		{"https://ollama.example.com", "https://ollama.example.com:443/v1"},
		{"http://host:1/prefix/", "http://host:1/prefix/v1"},
		{"[::1]", "http://[::1]:11434/v1"},
	}
	for _, tt := range tests {
		got, err := OllamaBaseURL(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("OllamaBaseURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"ftp://h", "http://", "://"} {
		if _, err := OllamaBaseURL(bad); err == nil {
			t.Errorf("OllamaBaseURL(%q) succeeded", bad)
		}
	}
}

func TestParseModel(t *testing.T) {
	tests := []struct {
		in             string
		provider, name string
		err            string
	}{
		{in: "anthropic/claude-sonnet-4-5", provider: "anthropic", name: "claude-sonnet-4-5"},
		{in: "openai/gpt-4.1", provider: "openai", name: "gpt-4.1"},
		{in: "ollama/qwen3", provider: "ollama", name: "qwen3"},
		{in: "ollama/qwen3:8b", provider: "ollama", name: "qwen3:8b"},
		{in: "openrouter/anthropic/claude-sonnet-4.5", provider: "openrouter", name: "anthropic/claude-sonnet-4.5"},
		{in: "offline", provider: "offline", name: "offline"},
		{in: "offline/script", provider: "offline", name: "script"},
		{in: "", err: "invalid model \"\": give provider/model"},
		{in: "gpt-4.1", err: "names no provider"},
		{in: "/gpt", err: "empty provider name"},
		{in: "openai/", err: "model name after \"openai/\" is empty"},
		{in: "Open AI/x", err: "spaces"},
		{in: "OpenAI/x", err: "lowercase"},
		{in: "openai/gpt\n", err: "control characters"},
	}
	for _, tt := range tests {
		p, m, err := ParseModel(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseModel(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || p != tt.provider || m != tt.name {
			t.Errorf("ParseModel(%q) = %q, %q, %v; want %q, %q", tt.in, p, m, err, tt.provider, tt.name)
		}
	}
}

func FuzzParseModel(f *testing.F) {
	for _, s := range []string{"anthropic/claude-sonnet-4-5", "offline", "openrouter/a/b", "", "/", "a/", "x y/z", "é/ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, m, err := ParseModel(s)
		if err != nil {
			if p != "" || m != "" {
				t.Fatalf("ParseModel(%q) returned values with an error", s)
			}
			return
		}
		if p == "" || m == "" {
			t.Fatalf("ParseModel(%q) = %q, %q: empty part", s, p, m)
		}
		if s != "offline" && p+"/"+m != s {
			t.Fatalf("ParseModel(%q) = %q + %q does not rebuild the input", s, p, m)
		}
		if strings.ContainsAny(p, "/ \t\n") {
			t.Fatalf("provider %q has a separator", p)
		}
	})
}

func TestResolveUnknownProviderListsKnown(t *testing.T) {
	_, _, _, err := Default().Resolve("gemini/pro")
	if err == nil || !strings.Contains(err.Error(), "known providers: anthropic, llamacpp, lmstudio, offline, ollama, openai, openrouter, vllm") {
		t.Fatalf("error = %v", err)
	}
}

func TestSecretsNeverPrint(t *testing.T) {
	c := Default()
	p := c.Providers["anthropic"]
	p.APIKey = NewSecret("sk-ant-very-secret")
	c.Providers["anthropic"] = p

	out := []string{fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprint(p.APIKey)}
	js, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := toml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, string(js), string(tm))
	for _, s := range out {
		if strings.Contains(s, "very-secret") {
			t.Errorf("secret printed: %s", s)
		}
	}
	if p.APIKey.Reveal() != "sk-ant-very-secret" {
		t.Error("Reveal lost the secret")
	}
}

func TestApplyValidates(t *testing.T) {
	c := Default()
	if err := c.Apply(Overrides{Model: "nope/x"}); err == nil || !strings.Contains(err.Error(), "set by flag") {
		t.Fatalf("error = %v", err)
	}
	neg := -1
	c = Default()
	if err := c.Apply(Overrides{MaxRetries: &neg}); err == nil {
		t.Fatal("negative retries accepted")
	}
	if err := c.Apply(Overrides{RequestTimeout: -time.Second}); err == nil {
		t.Fatal("negative timeout accepted")
	}
}

func TestDecodeFileLinesOfArrayTables(t *testing.T) {
	data := []byte(`
[[rules]]
reply = "a"

[[rules]]
contains = "b"
reply = "b"
tool_calls = [{ name = "read" }]

[rules.when]
x = 1
`)
	var v map[string]any
	f, err := DecodeFile("s.toml", data, &v)
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]int{"rules.0": 2, "rules.0.reply": 3, "rules.1": 5, "rules.1.reply": 7, "rules.1.tool_calls": 8, "rules.1.when.x": 11, "rules.1.missing": 5, "nothing": 0} {
		if got := f.Line(key); got != want {
			t.Errorf("Line(%q) = %d, want %d", key, got, want)
		}
	}
}

// TestDocumentedExample loads the annotated example of the documentation.
func TestDocumentedExample(t *testing.T) {
	data, err := os.ReadFile("testdata/example.toml")
	if err != nil {
		t.Fatal(err)
	}
	opts := setup(t, "", string(data), env{"ANTHROPIC_API_KEY": "k", "WORK_LLM_KEY": "w"})
	opts.TrustProject = true
	c, err := Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	work := c.Providers["work"]
	if c.Model != "anthropic/claude-sonnet-4-5" || work.Type != TypeOpenAI || work.APIKey.Reveal() != "w" || work.UsageInStream() {
		t.Errorf("model %q, work %+v", c.Model, work)
	}
	if got := c.Providers["offline"].Script; got != filepath.Join(opts.Workspace, ProjectDir, "demo-script.toml") {
		t.Errorf("script = %q", got)
	}
	if c.Providers["ollama"].BaseURL != "http://gpu-box:11434/v1" {
		t.Errorf("ollama = %+v", c.Providers["ollama"])
	}
}
