package sandbox_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/sandboxtest"
	"github.com/superagents/superagents/sandbox"
)

// dirs are the places a test writes to: the workspace, a temporary
// directory given as the sandbox's, and a directory outside both.
type dirs struct{ workspace, temp, outside string }

func newDirs(t *testing.T) dirs {
	t.Helper()
	root := t.TempDir()
	d := dirs{filepath.Join(root, "workspace"), filepath.Join(root, "temp"), filepath.Join(root, "outside")}
	for _, dir := range []string{d.workspace, d.temp, d.outside} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// run runs script with sh -c in the sandbox, in dir, and returns its
// combined output and whether it exited 0.
func run(t *testing.T, p sandbox.Policy, dir, script string) (string, bool) {
	t.Helper()
	env := []string{"PATH=" + os.Getenv("PATH")}
	s, err := sandbox.New(p, env)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := s.Command([]string{"sh", "-c", script}, env)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("run %q: %v", script, err)
	}
	return out.String(), err == nil
}

func TestFileWrites(t *testing.T) {
	sandboxtest.Require(t, false)
	tests := []struct {
		name string
		mode sandbox.Mode
		// script writes; where names the directory it writes in.
		script    string
		where     func(dirs) string
		writable  bool // the policy adds the outside directory
		wantWrite bool
	}{
		{"inside the workspace", sandbox.WorkspaceWrite, `echo x > f`, func(d dirs) string { return d.workspace }, false, true},
		{"in a new subdirectory of the workspace", sandbox.WorkspaceWrite, `mkdir -p a/b && echo x > a/b/f && mv a/b/f f`, func(d dirs) string { return d.workspace }, false, true},
		{"in the temporary directory", sandbox.WorkspaceWrite, `echo x > f`, func(d dirs) string { return d.temp }, false, true},
		{"outside, refused by default", sandbox.WorkspaceWrite, `echo x > f`, func(d dirs) string { return d.outside }, false, false},
		{"outside, when made writable", sandbox.WorkspaceWrite, `echo x > f`, func(d dirs) string { return d.outside }, true, true},
		{"outside, by a child process", sandbox.WorkspaceWrite, `sh -c 'echo x > f'`, func(d dirs) string { return d.outside }, false, false},
		{"outside, by a script", sandbox.WorkspaceWrite, `printf '#!/bin/sh\necho x > "$1"/f\n' > ` + "\"$WS\"" + `/s.sh && chmod +x "$WS"/s.sh && "$WS"/s.sh "$PWD"`, func(d dirs) string { return d.outside }, false, false},
		{"outside, by a background process", sandbox.WorkspaceWrite, `(echo x > f) & wait`, func(d dirs) string { return d.outside }, false, false},
		{"read-only: inside the workspace", sandbox.ReadOnly, `echo x > f`, func(d dirs) string { return d.workspace }, false, false},
		{"read-only: in the temporary directory", sandbox.ReadOnly, `echo x > f`, func(d dirs) string { return d.temp }, false, false},
		{"read-only: /dev/null", sandbox.ReadOnly, `echo x > /dev/null && echo x > f`, func(d dirs) string { return d.workspace }, false, false},
		{"off: outside", sandbox.Off, `echo x > f`, func(d dirs) string { return d.outside }, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := newDirs(t)
			p := sandbox.Policy{Mode: tc.mode, Workspace: d.workspace, TempDirs: []string{d.temp}}
			if tc.writable {
				p.Writable = []string{d.outside}
			}
			dir := tc.where(d)
			out, _ := run(t, p, dir, "WS="+d.workspace+"; "+tc.script)
			_, err := os.Stat(filepath.Join(dir, "f"))
			if wrote := err == nil; wrote != tc.wantWrite {
				t.Fatalf("wrote = %v, want %v; output:\n%s", wrote, tc.wantWrite, out)
			}
			if !tc.wantWrite && !strings.Contains(out, "Permission denied") {
				t.Errorf("the refusal is not a permission error:\n%s", out)
			}
		})
	}
}

func TestReadsEverywhere(t *testing.T) {
	sandboxtest.Require(t, false)
	d := newDirs(t)
	if err := os.WriteFile(filepath.Join(d.outside, "f"), []byte("outside content"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok := run(t, sandbox.Policy{Mode: sandbox.ReadOnly, Workspace: d.workspace}, d.workspace, "cat "+filepath.Join(d.outside, "f"))
	if !ok || out != "outside content" {
		t.Fatalf("ok=%v output %q", ok, out)
	}
}

func TestSystemTempDirIsWritable(t *testing.T) {
	sandboxtest.Require(t, false)
	d := newDirs(t)
	// No TempDirs: the system's, which t.TempDir is in.
	out, ok := run(t, sandbox.Policy{Workspace: d.workspace}, d.workspace, `f=$(mktemp) && echo x > "$f" && rm "$f" && echo ok`)
	if !ok || out != "ok\n" {
		t.Fatalf("ok=%v output %q", ok, out)
	}
}

func TestNetwork(t *testing.T) {
	sandboxtest.Require(t, true)
	port := sandboxtest.Listen(t, "hello from the listener")
	// bash connects itself (/dev/tcp), as would curl or a script.
	script := fmt.Sprintf(`exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && head -n 1 <&3'`, port)
	for _, tc := range []struct {
		name    string
		network bool
		want    string
		ok      bool
	}{
		{"refused by default", false, "Permission denied", false},
		{"allowed by network = true", true, "hello from the listener", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDirs(t)
			out, ok := run(t, sandbox.Policy{Workspace: d.workspace, Network: tc.network}, d.workspace, script)
			if ok != tc.ok || !strings.Contains(out, tc.want) {
				t.Fatalf("ok=%v output %q; want ok=%v and %q", ok, out, tc.ok, tc.want)
			}
		})
	}
}

func TestTheLauncherLeavesNoMarker(t *testing.T) {
	sandboxtest.Require(t, false)
	d := newDirs(t)
	out, ok := run(t, sandbox.Policy{Workspace: d.workspace}, d.workspace, `env; echo "argv0=$0"`)
	if !ok || strings.Contains(out, "SUPERAGENTS_SANDBOX") {
		t.Fatalf("ok=%v, the command sees the launcher's marker:\n%s", ok, out)
	}
}

func TestCommandNotFound(t *testing.T) {
	d := newDirs(t)
	s, err := sandbox.New(sandbox.Policy{Workspace: d.workspace}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Command([]string{"no-such-command-here"}, nil); err == nil {
		t.Fatal("no error for a missing command")
	}
	if _, err := s.Command(nil, nil); err == nil {
		t.Fatal("no error for no command")
	}
}
