package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// makeTree creates files (path → content) under dir; a path ending in "/"
// is an empty directory.
func makeTree(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if name[len(name)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// newTestWorkspace returns a workspace on a new temporary directory
// holding files, and the built-in tools on it.
func newTestWorkspace(t testing.TB, files map[string]string, opts Options) (*Workspace, *Set) {
	t.Helper()
	dir := t.TempDir()
	makeTree(t, dir, files)
	ws, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	set, err := Builtins(ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ws, set
}

// call runs a tool with input given as a Go value and fails the test on a
// returned error (which only a cancelled context may cause).
func call(t testing.TB, set *Set, name string, input any) Result {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	res, err := set.Call(context.Background(), name, raw)
	if err != nil {
		t.Fatalf("%s(%s): unexpected error %v", name, raw, err)
	}
	return res
}

type obj = map[string]any
