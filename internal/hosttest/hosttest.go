// Package hosttest drives the real agent hosts — Claude Code, Codex and
// OpenCode, installed from npm — headless, with superagents as their MCP
// server, each against a scripted model server on loopback that speaks
// the host's own wire API (Anthropic Messages, OpenAI Responses, OpenAI
// Chat Completions, all streamed). Every request a host sends its model is
// recorded, so that a test reads what the host's model was shown.
// superagents' own sub-agents talk to another scripted model (SubModel).
//
// scripts/test installs the hosts into a cache directory and sets
// SUPERAGENTS_REQUIRE_HOSTS, so that there the tests must run; a plain go
// test skips them when the hosts are missing.
//
// Each host runs in a home of its own (a temporary HOME with the host's
// configuration, a workspace, superagents' data directory), offline: its
// telemetry, update checks and model catalogue fetches are turned off, and
// its only model is the scripted one.
package hosttest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/superagents/superagents/internal/npmtest"
)

// Environment variables scripts/test sets.
const (
	// EnvDir is the npm prefix the hosts are installed in (default
	// $XDG_CACHE_HOME/superagents-test/hosts, or ~/.cache/...).
	EnvDir = "SUPERAGENTS_HOSTS_NPM_DIR"
	// EnvRequire makes a missing host fail the test instead of skipping
	// it.
	EnvRequire = "SUPERAGENTS_REQUIRE_HOSTS"
)

// The hosts' names, as superagents knows them (mcp --host).
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
	OpenCode   = "opencode"
)

// Binary returns the native executable of an installed host, or skips the
// test. The npm packages ship it in a package per platform (an optional
// dependency); it is run directly, without node.
func Binary(t testing.TB, host string) string {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		npmtest.Skip(t, EnvRequire, format, args...)
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		skip("the host tests run on linux/amd64 only")
	}
	dir := npmtest.Prefix(t, EnvDir, "hosts", EnvRequire)
	nm := filepath.Join(dir, "node_modules")
	path := map[string]string{
		ClaudeCode: filepath.Join(nm, "@anthropic-ai", "claude-code-linux-x64", "claude"),
		Codex:      filepath.Join(nm, "@openai", "codex-linux-x64", "vendor", "x86_64-unknown-linux-musl", "bin", "codex"),
		OpenCode:   filepath.Join(nm, "opencode-linux-x64", "bin", "opencode"),
	}[host]
	if path == "" {
		t.Fatalf("hosttest: unknown host %q", host)
	}
	if _, err := os.Stat(path); err != nil {
		skip("%s is not installed in %s (%v)", host, dir, err)
	}
	return path
}

// BuildSuperagents builds the superagents command into dir and returns
// its path. A test binary builds it once, in TestMain.
func BuildSuperagents(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "superagents")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/superagents/superagents/cmd/superagents")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// Result is what one run of a host or of the superagents command gave.
type Result struct {
	Stdout, Stderr string
	Err            error
}

// String shows the run for a failure message, trimmed.
func (r Result) String() string {
	return fmt.Sprintf("error: %v\nstdout: %s\nstderr: %s", r.Err, Trim(r.Stdout, 1500), Trim(r.Stderr, 1500))
}

// run runs a command in dir with exactly env.
func run(ctx context.Context, dir string, env []string, name string, args ...string) Result {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	return Result{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
}

// baseEnv is the environment every host starts with: none of the
// caller's keys or settings, a home of its own (each host adds its own
// configuration and offline switches).
func baseEnv(home string) []string {
	env := []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"TERM=dumb",
		"TMPDIR=" + filepath.Join(home, "tmp"),
		"NO_COLOR=1",
	}
	return env
}
