// Package npmtest finds, for tests, the reference MCP servers from npm.
// scripts/test installs them into a cache directory and sets
// SUPERAGENTS_REQUIRE_MCP_SERVERS, so that there the tests that use them
// must run; a plain go test skips those tests when node or the packages
// are missing.
package npmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Environment variables scripts/test sets.
const (
	// EnvDir is the npm prefix the packages are installed in (default
	// $XDG_CACHE_HOME/superagents-test/npm, or ~/.cache/...).
	EnvDir = "SUPERAGENTS_MCP_NPM_DIR"
	// EnvRequire makes a missing package fail the test instead of
	// skipping it.
	EnvRequire = "SUPERAGENTS_REQUIRE_MCP_SERVERS"
)

// Skip skips the test for the reason given, or fails it when the
// environment variable require is set: where scripts/test set it, the
// test must run.
func Skip(t testing.TB, require, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(require) != "" {
		t.Fatalf("%s (%s is set: these tests must run)", msg, require)
	}
	t.Skipf("%s; scripts/test installs it", msg)
}

// Prefix is the npm prefix that the environment variable env names, else
// superagents-test/<name> in the user's cache directory, where
// scripts/test installs packages; it skips the test (see Skip) when there
// is none.
func Prefix(t testing.TB, env, name, require string) string {
	t.Helper()
	if dir := os.Getenv(env); dir != "" {
		return dir
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		Skip(t, require, "no cache directory: %v", err)
	}
	return filepath.Join(cache, "superagents-test", name)
}

// Server returns the entry point (dist/index.js, run with node) of the
// installed package @modelcontextprotocol/<pkg>, or skips the test.
func Server(t testing.TB, pkg string) string {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		Skip(t, EnvRequire, format, args...)
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not installed")
	}
	dir := Prefix(t, EnvDir, "npm", EnvRequire)
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		skip("npm package @modelcontextprotocol/%s is not installed in %s", pkg, dir)
	}
	return entry
}
