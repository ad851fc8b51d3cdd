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

// Server returns the entry point (dist/index.js, run with node) of the
// installed package @modelcontextprotocol/<pkg>, or skips the test.
func Server(t testing.TB, pkg string) string {
	t.Helper()
	skip := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv(EnvRequire) != "" {
			t.Fatalf("%s (%s is set: these tests must run)", msg, EnvRequire)
		}
		t.Skipf("%s; scripts/test installs it", msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not installed")
	}
	dir := os.Getenv(EnvDir)
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			skip("no cache directory: %v", err)
		}
		dir = filepath.Join(cache, "superagents-test", "npm")
	}
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		skip("npm package @modelcontextprotocol/%s is not installed in %s", pkg, dir)
	}
	return entry
}
