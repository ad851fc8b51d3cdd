package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/sandbox"
)

// getenvOf reads an environment given as NAME=value lines.
func getenvOf(env []string) func(string) string {
	return func(name string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				return v
			}
		}
		return ""
	}
}

// TestMCPKey: what changes the background server's behaviour gives
// another server; what does not, the same one. The key's values never
// show in its hash.
func TestMCPKey(t *testing.T) {
	home, ws, other := t.TempDir(), t.TempDir(), t.TempDir()
	self := filepath.Join(t.TempDir(), "superagents")
	if err := os.WriteFile(self, []byte("binary"), 0o700); err != nil {
		t.Fatal(err)
	}
	base := []string{"HOME=" + home, "PATH=/usr/bin", "TERM=xterm", "ANTHROPIC_API_KEY=sk-one"}
	hash := func(env []string, workspace string, f mcpFlags) string {
		t.Helper()
		a := &app{workspace: workspace, env: Env{Environ: env, Getenv: getenvOf(env)}}
		cfg, err := a.loadConfig(f.model)
		if err != nil {
			t.Fatal(err)
		}
		args, err := a.mcpServerArgs(filepath.Join(home, "data"), f, "")
		if err != nil {
			t.Fatal(err)
		}
		k, err := a.mcpKey(cfg, self, args)
		if err != nil {
			t.Fatal(err)
		}
		return k.Hash()
	}
	first := hash(base, ws, mcpFlags{})
	if strings.Contains(first, "sk-one") {
		t.Fatalf("the key shows in its hash %q", first)
	}
	if again := hash(append(base, "TERM_PROGRAM=other", "SHLVL=3"), ws, mcpFlags{}); again != first {
		t.Error("a variable that changes nothing gave another server")
	}
	for name, h := range map[string]string{
		"another workspace": hash(base, other, mcpFlags{}),
		"--model":           hash(base, ws, mcpFlags{model: "offline"}),
		"--host":            hash(base, ws, mcpFlags{host: "codex"}),
		"another key":       hash(append(base[:3:3], "ANTHROPIC_API_KEY=sk-two"), ws, mcpFlags{}),
		"CODEX_HOME":        hash(append(base, "CODEX_HOME="+other), ws, mcpFlags{}),
		"SUPERAGENTS_MODEL": hash(append(base, "SUPERAGENTS_MODEL=offline"), ws, mcpFlags{}),
		"HTTPS_PROXY":       hash(append(base, "HTTPS_PROXY=http://proxy:3128"), ws, mcpFlags{}),
		"http_proxy":        hash(append(base, "http_proxy=http://proxy:3128"), ws, mcpFlags{}),
		"NO_PROXY":          hash(append(base, "NO_PROXY=example.com"), ws, mcpFlags{}),
		"SSL_CERT_FILE":     hash(append(base, "SSL_CERT_FILE=/etc/ca.pem"), ws, mcpFlags{}),
		"SSL_CERT_DIR":      hash(append(base, "SSL_CERT_DIR=/etc/certs"), ws, mcpFlags{}),
		"GITHUB_TOKEN":      hash(append(base, "GITHUB_TOKEN=ghp_one"), ws, mcpFlags{}),
		"GH_TOKEN":          hash(append(base, "GH_TOKEN=ghp_one"), ws, mcpFlags{}),
		"another *_TOKEN":   hash(append(base, "NPM_TOKEN=npm_one"), ws, mcpFlags{}),
	} {
		if h == first {
			t.Errorf("%s gave the same server", name)
		}
	}
	// A configuration file written, then edited.
	project := filepath.Join(ws, config.ProjectDir, config.FileName)
	if err := os.MkdirAll(filepath.Dir(project), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(project, []byte("model = \"offline\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	written := hash(base, ws, mcpFlags{})
	if written == first {
		t.Error("a new configuration file gave the same server")
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(project, later, later); err != nil {
		t.Fatal(err)
	}
	if hash(base, ws, mcpFlags{}) == written {
		t.Error("an edited configuration file gave the same server")
	}
}

// TestTasksModel: the line `superagents mcp` starts with names the model
// and where its key comes from, never the key.
func TestTasksModel(t *testing.T) {
	for _, tt := range []struct {
		env   []string
		model string
		want  string
	}{
		{nil, "", "the offline model (no API key set)"},
		{nil, "offline", "the offline model (--model)"},
		{[]string{"SUPERAGENTS_MODEL=offline"}, "", "the offline model (chosen by SUPERAGENTS_MODEL)"},
		{[]string{"ANTHROPIC_API_KEY=sk-secret"}, "", "anthropic/claude-sonnet-4-5 (ANTHROPIC_API_KEY)"},
		{nil, "openai/gpt-4.1", "openai/gpt-4.1 (no API key: OPENAI_API_KEY is not set)"},
	} {
		env := append([]string{"HOME=" + t.TempDir()}, tt.env...)
		a := &app{workspace: t.TempDir(), env: Env{Getenv: getenvOf(env)}}
		cfg, err := a.loadConfig(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		if got := tasksModel(cfg); got != tt.want {
			t.Errorf("%v --model %q: %q, want %q", tt.env, tt.model, got, tt.want)
		}
	}
}

// TestMCPSandboxWarning: the proxy warns as the server's engine does when
// the sandbox cannot be had, and says nothing when the sandbox is off.
func TestMCPSandboxWarning(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + home}
	a := &app{workspace: ws, env: Env{Environ: env, Getenv: getenvOf(env)}}
	cfg, err := a.loadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Sandbox.Writable = []string{notDir}
	if w := a.mcpSandboxWarning(cfg); !strings.Contains(w, notDir+" is not a directory") {
		t.Errorf("warning %q, want one that says %s is not a directory", w, notDir)
	}
	cfg.Sandbox.Mode = sandbox.Off
	if w := a.mcpSandboxWarning(cfg); w != "" {
		t.Errorf("sandbox off: warning %q", w)
	}
}
