package tools

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

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

// checkGolden compares got with testdata/name, or rewrites the file with
// -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (run go test -update after checking):\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

type obj = map[string]any
