package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/golden"
	"github.com/superagents/superagents/internal/sandboxtest"
)

var searchTree = map[string]string{
	"main.go":              "package main\n\nfunc main() {\n\t// TODO: flags\n}\n",
	"README.md":            "# demo\nTODO: write docs\n",
	"internal/a/a.go":      "package a\n\nfunc A() {} // todo lower\n",
	"internal/a/a_test.go": "package a\n\n// TODO: test A\n",
	"internal/b/b.go":      "package b\n",
	"web/app.ts":           "// TODO: ship\n",
	"web/logo.png":         "\x89PNG\r\n\x1a\n\x00\x00TODO",
	".git/config":          "[core]\nTODO = inside git\n",
	".hidden/x.go":         "package hidden // TODO\n",
	"empty/":               "",
}

// toolCase is one call and the exact output it must give.
type toolCase struct {
	name    string
	input   obj
	want    string
	isError bool
}

func runToolCases(t *testing.T, set *Set, tool string, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, set, tool, tc.input)
			if res.IsError != tc.isError || res.Output != tc.want {
				t.Errorf("got %+v\nwant %q (IsError=%v)", res, tc.want, tc.isError)
			}
		})
	}
}

func TestLs(t *testing.T) {
	ws, set := newTestWorkspace(t, searchTree, Options{})
	must(t, os.Symlink("main.go", filepath.Join(ws.Dir(), "link.go")))
	runToolCases(t, set, Ls, []toolCase{
		{"workspace", obj{}, ".git/\n.hidden/\nREADME.md\nempty/\ninternal/\nlink.go -> main.go\nmain.go\nweb/\n", false},
		{"subdirectory", obj{"path": "internal/a"}, "internal/a/a.go\ninternal/a/a_test.go\n", false},
		{"empty directory", obj{"path": "empty"}, "[empty is empty]", false},
		{"a file", obj{"path": "main.go"}, "main.go is a file, not a directory; use read to see it", true},
		{"missing", obj{"path": "nope"}, "nope does not exist", true},
	})
}

func TestGlob(t *testing.T) {
	ws, set := newTestWorkspace(t, searchTree, Options{})
	runToolCases(t, set, Glob, []toolCase{
		{"double star", obj{"pattern": "**/*.go"}, ".hidden/x.go\ninternal/a/a.go\ninternal/a/a_test.go\ninternal/b/b.go\nmain.go\n", false},
		{"one level", obj{"pattern": "*.go"}, "main.go\n", false},
		{"under a directory", obj{"pattern": "internal/**/*_test.go"}, "internal/a/a_test.go\n", false},
		{"with path", obj{"pattern": "*.go", "path": "internal/b"}, "internal/b/b.go\n", false},
		{"absolute pattern inside", obj{"pattern": filepath.Join(ws.Dir(), "web") + "/*.ts"}, "web/app.ts\n", false},
		{"alternatives", obj{"pattern": "**/*.{ts,md}"}, "README.md\nweb/app.ts\n", false},
		{".git skipped", obj{"pattern": "**/config"}, "no files match **/config in .", false},
		{".git when named", obj{"pattern": ".git/*"}, ".git/config\n", false},
		{"no match", obj{"pattern": "**/*.rs"}, "no files match **/*.rs in .", false},
		{"malformed", obj{"pattern": "[a-"}, `pattern "[a-" is malformed (check its brackets and braces)`, true},
		{"outside", obj{"pattern": "../*"}, "path .. is outside the workspace: it climbs above the workspace with '..'", true},
	})
}

func TestGlobCapsResults(t *testing.T) {
	files := map[string]string{}
	for i := range MaxListEntries + 5 {
		files[fmt.Sprintf("d/f%04d.txt", i)] = ""
	}
	_, set := newTestWorkspace(t, files, Options{})
	res := call(t, set, Glob, obj{"pattern": "d/*.txt"})
	if got := strings.Count(res.Output, ".txt\n"); got != MaxListEntries {
		t.Errorf("%d paths listed, want %d", got, MaxListEntries)
	}
	if !strings.HasSuffix(res.Output, fmt.Sprintf("[%d of %d matching files shown; use a narrower pattern or path]\n", MaxListEntries, MaxListEntries+5)) {
		t.Errorf("no cap note: %q", res.Output[len(res.Output)-100:])
	}
}

func TestGrep(t *testing.T) {
	_, set := newTestWorkspace(t, searchTree, Options{})
	runToolCases(t, set, Grep, []toolCase{
		{"everywhere, skipping .git and binaries", obj{"pattern": "TODO"},
			".hidden/x.go:1:package hidden // TODO\nREADME.md:2:TODO: write docs\ninternal/a/a_test.go:3:// TODO: test A\nmain.go:4:\t// TODO: flags\nweb/app.ts:1:// TODO: ship\n", false},
		{"file filter by name", obj{"pattern": "TODO", "glob": "*.go"},
			".hidden/x.go:1:package hidden // TODO\ninternal/a/a_test.go:3:// TODO: test A\nmain.go:4:\t// TODO: flags\n", false},
		{"file filter by path", obj{"pattern": "TODO", "glob": "internal/**/*_test.go"},
			"internal/a/a_test.go:3:// TODO: test A\n", false},
		{"path and relative filter", obj{"pattern": "package", "path": "internal", "glob": "b/*.go"},
			"internal/b/b.go:1:package b\n", false},
		{"a single file", obj{"pattern": "func", "path": "main.go"}, "main.go:3:func main() {\n", false},
		{"ignore case", obj{"pattern": "todo lower|todo: SHIP", "ignore_case": true},
			"internal/a/a.go:3:func A() {} // todo lower\nweb/app.ts:1:// TODO: ship\n", false},
		{"anchors per line", obj{"pattern": "^package a$"}, "internal/a/a.go:1:package a\ninternal/a/a_test.go:1:package a\n", false},
		{"no match", obj{"pattern": "nothing here"}, "no matches for nothing here in .", false},
		{"bad regexp", obj{"pattern": "a(b"}, "pattern is not a valid regular expression: error parsing regexp: missing closing ): `a(b`", true},
		{"bad glob", obj{"pattern": "a", "glob": "{x"}, `glob "{x" is malformed (check its brackets and braces)`, true},
		{"missing path", obj{"pattern": "a", "path": "nope"}, "nope does not exist", true},
	})
}

func TestGrepCapsMatches(t *testing.T) {
	var b strings.Builder
	for i := range 150 {
		fmt.Fprintf(&b, "match %d %s\n", i, strings.Repeat("y", 400))
	}
	_, set := newTestWorkspace(t, map[string]string{"one.txt": b.String(), "two.txt": b.String()}, Options{})
	res := call(t, set, Grep, obj{"pattern": "match"})
	lines := strings.Split(strings.TrimSuffix(res.Output, "\n"), "\n")
	if len(lines) != MaxGrepMatches+1 {
		t.Fatalf("%d lines, want %d matches and a note", len(lines), MaxGrepMatches)
	}
	if want := "[showing 200 of 300 matching lines in 2 files; narrow the pattern, path or glob to see the rest]"; lines[MaxGrepMatches] != want {
		t.Errorf("note = %q, want %q", lines[MaxGrepMatches], want)
	}
	if !strings.HasPrefix(lines[150], "two.txt:1:match 0") {
		t.Errorf("line 151 = %q", lines[150])
	}
	if n := len([]rune(strings.SplitN(lines[0], ":", 3)[2])); n != maxGrepLineChars+1 {
		t.Errorf("long line shown with %d characters, want %d and an ellipsis", n, maxGrepLineChars)
	}
}

// TestSpecsGolden pins what models are told about the built-in tools,
// where the sandbox is enforced (the bash tool says otherwise elsewhere).
func TestSpecsGolden(t *testing.T) {
	sandboxtest.Require(t, true)
	_, set := newTestWorkspace(t, nil, Options{})
	out, err := json.MarshalIndent(set.Specs(), "", "  ")
	must(t, err)
	golden.Check(t, "specs.golden", append(out, '\n'))
}

// TestTranscriptGolden runs a session of calls on a fixed tree and pins
// every output, as the model would read it.
func TestTranscriptGolden(t *testing.T) {
	_, set := newTestWorkspace(t, searchTree, Options{})
	calls := []struct {
		tool  string
		input string
	}{
		{Ls, `{}`},
		{Glob, `{"pattern":"**/*.go"}`},
		{Grep, `{"pattern":"TODO","glob":"*.go"}`},
		{Read, `{"path":"main.go","offset":3,"limit":2}`},
		{Edit, `{"path":"main.go","old_string":"// TODO: flags","new_string":"flag.Parse()"}`},
		{Edit, `{"path":"main.go","old_string":"TODO","new_string":"x"}`},
		{Write, `{"path":"cmd/tool/main.go","content":"package main\n"}`},
		{Read, `{"path":"cmd/tool/main.go"}`},
		{Read, `{"path":"../etc/passwd"}`},
		{Bash, `{"command":"echo hello; echo oops >&2; exit 2"}`},
		{"missing_tool", `{}`},
	}
	var b strings.Builder
	for _, c := range calls {
		res, err := set.Call(t.Context(), c.tool, json.RawMessage(c.input))
		must(t, err)
		status := "ok"
		if res.IsError {
			status = "error"
		}
		fmt.Fprintf(&b, "=== %s %s\n--- %s\n%s\n\n", c.tool, c.input, status, res.Output)
	}
	golden.Check(t, "transcript.golden", []byte(b.String()))
}
