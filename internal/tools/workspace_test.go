package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkspaceEscapes tries every way out of the workspace through every
// file tool: each must be refused with a clear message, and nothing outside
// may be read or changed.
func TestWorkspaceEscapes(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, set := newTestWorkspace(t, map[string]string{"inside.txt": "fine\n", "sub/a.txt": "a\n"}, Options{})
	must(t, os.Symlink(secret, filepath.Join(ws.Dir(), "link-to-secret")))
	must(t, os.Symlink(outside, filepath.Join(ws.Dir(), "linkdir")))
	must(t, os.Symlink("../..", filepath.Join(ws.Dir(), "sub", "up")))

	paths := []struct {
		name, path, wantMsg string
	}{
		{"dot-dot", "../secret.txt", "outside the workspace"},
		{"dot-dot inside a path", "sub/../../secret.txt", "outside the workspace"},
		{"absolute outside", "/etc/passwd", "outside the workspace"},
		{"absolute to the secret", secret, "outside the workspace"},
		{"symlink to a file outside", "link-to-secret", "outside the workspace through a symbolic link"},
		{"symlinked directory outside", "linkdir/secret.txt", "outside the workspace through a symbolic link"},
		{"relative symlink climbing out", "sub/up/secret.txt", "outside the workspace through a symbolic link"},
	}
	for _, p := range paths {
		for _, tc := range []struct {
			tool  string
			input obj
		}{
			{Read, obj{"path": p.path}},
			{Write, obj{"path": p.path, "content": "pwned"}},
			{Edit, obj{"path": p.path, "old_string": "TOP", "new_string": "pwned"}},
			{Ls, obj{"path": p.path}},
			{Grep, obj{"pattern": "SECRET", "path": p.path}},
			{Glob, obj{"pattern": "*", "path": p.path}},
		} {
			t.Run(tc.tool+"/"+p.name, func(t *testing.T) {
				res := call(t, set, tc.tool, tc.input)
				if !res.IsError || !strings.Contains(res.Output, p.wantMsg) {
					t.Errorf("got %+v, want an error saying %q", res, p.wantMsg)
				}
				if strings.Contains(res.Output, "TOP SECRET") {
					t.Errorf("the secret leaked: %q", res.Output)
				}
			})
		}
	}
	got, err := os.ReadFile(secret)
	must(t, err)
	if string(got) != "TOP SECRET\n" {
		t.Fatalf("the file outside was changed: %q", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("files were created outside: %v", entries)
	}
}

func TestWorkspaceAllowsPathsInside(t *testing.T) {
	ws, set := newTestWorkspace(t, map[string]string{"dir/file.txt": "content\n"}, Options{})
	must(t, os.Symlink("dir/file.txt", filepath.Join(ws.Dir(), "inner-link")))
	must(t, os.Symlink("dir", filepath.Join(ws.Dir(), "inner-dir")))
	for _, p := range []string{
		"dir/file.txt",
		"./dir/../dir/file.txt",
		filepath.Join(ws.Dir(), "dir", "file.txt"),
		"inner-link",
		"inner-dir/file.txt",
	} {
		res := call(t, set, Read, obj{"path": p})
		if res.IsError || !strings.Contains(res.Output, "content") {
			t.Errorf("read %s: %+v", p, res)
		}
	}
}

func TestWorkspaceRel(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	must(t, os.Mkdir(real, 0o755))
	alias := filepath.Join(dir, "alias")
	must(t, os.Symlink(real, alias))
	ws, err := OpenWorkspace(alias)
	must(t, err)
	defer ws.Close()
	tests := []struct {
		in, want, wantErr string
	}{
		{"", ".", ""},
		{".", ".", ""},
		{"a/b/../c", "a/c", ""},
		{alias + "/x/y", "x/y", ""},
		{real + "/x", "x", ""}, // the same directory under its real name
		{alias, ".", ""},
		{"..", "", "outside the workspace"},
		{"../real/x", "", "outside the workspace"},
		{dir, "", "outside the workspace"},
		{"a\x00b", "", "NUL"},
	}
	for _, tc := range tests {
		got, err := ws.Rel(tc.in)
		switch {
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("Rel(%q) = %q, %v; want error %q", tc.in, got, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || got != tc.want):
			t.Errorf("Rel(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestOpenWorkspaceErrors(t *testing.T) {
	if _, err := OpenWorkspace(""); err == nil {
		t.Error("empty name accepted")
	}
	if _, err := OpenWorkspace(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing directory accepted")
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
