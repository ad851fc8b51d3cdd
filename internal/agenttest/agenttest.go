// Package agenttest sets up what tests of the agent loop share: a real
// SQLite store and a real workspace with some of the built-in tools.
package agenttest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/superagents/superagents/internal/sqlite"
	"github.com/superagents/superagents/internal/tools"
)

// Store opens a SQLite store in dir, closed when the test ends.
func Store(t testing.TB, dir string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.OpenDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Tools opens a workspace in a new directory holding files (name →
// content), closed when the test ends, and returns the named built-in
// tools over it.
func Tools(t testing.TB, files map[string]string, names ...string) *tools.Set {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := tools.OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	all, err := tools.Builtins(ws, tools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := all.Select(names)
	if err != nil {
		t.Fatal(err)
	}
	return set
}
