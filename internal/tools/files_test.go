package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestRead(t *testing.T) {
	long := strings.Repeat("é", MaxLineChars+10)
	_, set := newTestWorkspace(t, map[string]string{
		"ten.txt":    numbered(1, 10),
		"big.txt":    numbered(1, 3000),
		"empty.txt":  "",
		"crlf.txt":   "one\r\ntwo\r\n",
		"noeol.txt":  "a\nb",
		"long.txt":   long + "\nshort\n",
		"bin.dat":    "PK\x03\x04\x00\x00binary",
		"latin1.txt": "caf\xe9\n",
		"dir/":       "",
	}, Options{})
	tests := []struct {
		name    string
		input   obj
		want    []string // substrings of the output
		notWant []string
		isError bool
	}{
		{name: "whole file numbered", input: obj{"path": "ten.txt"},
			want: []string{"     1\tline 1\n", "    10\tline 10\n"}, notWant: []string{"showing"}},
		{name: "offset and limit", input: obj{"path": "ten.txt", "offset": 3, "limit": 2},
			want: []string{"     3\tline 3\n     4\tline 4\n[showing lines 3-4 of 10; continue with offset=5]"}, notWant: []string{"line 2\n", "line 5\n"}},
		{name: "offset to the end", input: obj{"path": "ten.txt", "offset": 9},
			want: []string{"     9\tline 9\n    10\tline 10\n"}, notWant: []string{"showing"}},
		{name: "default limit on a big file", input: obj{"path": "big.txt"},
			want: []string{"  2000\tline 2000\n[showing lines 1-2000 of 3000; continue with offset=2001]"}, notWant: []string{"line 2001"}},
		{name: "offset past the end", input: obj{"path": "ten.txt", "offset": 11}, isError: true,
			want: []string{"offset 11 is past the end of ten.txt, which has 10 lines"}},
		{name: "negative limit", input: obj{"path": "ten.txt", "limit": -1}, isError: true, want: []string{"positive"}},
		{name: "empty file", input: obj{"path": "empty.txt"}, want: []string{"[empty.txt is empty]"}},
		{name: "crlf endings hidden", input: obj{"path": "crlf.txt"}, want: []string{"     1\tone\n     2\ttwo\n"}, notWant: []string{"\r"}},
		{name: "last line without newline", input: obj{"path": "noeol.txt"}, want: []string{"     2\tb\n"}},
		{name: "long line cut", input: obj{"path": "long.txt"}, want: []string{"[line cut: 10 more characters]", "     2\tshort"}},
		{name: "binary refused", input: obj{"path": "bin.dat"}, isError: true, want: []string{"bin.dat is a binary file"}},
		{name: "invalid utf-8 replaced", input: obj{"path": "latin1.txt"}, want: []string{"caf\uFFFD"}},
		{name: "directory", input: obj{"path": "dir"}, isError: true, want: []string{"dir is a directory; use ls"}},
		{name: "missing", input: obj{"path": "nope.txt"}, isError: true, want: []string{"nope.txt does not exist"}},
		{name: "missing path field", input: obj{}, isError: true, want: []string{`missing properties: ["path"]`}},
		{name: "wrong type", input: obj{"path": "ten.txt", "offset": "3"}, isError: true, want: []string{"offset"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, set, Read, tc.input)
			if res.IsError != tc.isError {
				t.Errorf("IsError = %v, want %v: %q", res.IsError, tc.isError, res.Output)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("output lacks %q:\n%s", w, clip(res.Output))
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(res.Output, w) {
					t.Errorf("output has %q:\n%s", w, clip(res.Output))
				}
			}
		})
	}
}

func TestReadCapsHugeOutput(t *testing.T) {
	line := strings.Repeat("x", 1500)
	_, set := newTestWorkspace(t, map[string]string{"wide.txt": strings.Repeat(line+"\n", 500)}, Options{})
	res := call(t, set, Read, obj{"path": "wide.txt"})
	if res.IsError {
		t.Fatal(res.Output)
	}
	shown := MaxReadChars / 1500
	want := fmt.Sprintf("[output capped at %d characters: showing lines 1-%d of 500; continue with offset=%d]", MaxReadChars, shown, shown+1)
	if !strings.HasSuffix(res.Output, want) {
		t.Errorf("output ends with %q, want %q", res.Output[len(res.Output)-120:], want)
	}
	if len(res.Output) > MaxReadChars+shown*20+200 {
		t.Errorf("output is %d bytes, more than the cap allows", len(res.Output))
	}
}

func TestWrite(t *testing.T) {
	ws, set := newTestWorkspace(t, map[string]string{"old.sh": "old\n", "adir/": ""}, Options{})
	must(t, os.Chmod(filepath.Join(ws.Dir(), "old.sh"), 0o755))

	res := call(t, set, Write, obj{"path": "new/deep/file.txt", "content": "a\nb"})
	if res.IsError || res.Output != "created new/deep/file.txt (3 bytes, 2 lines)" {
		t.Errorf("create: %+v", res)
	}
	readBack(t, ws, "new/deep/file.txt", "a\nb")

	res = call(t, set, Write, obj{"path": filepath.Join(ws.Dir(), "old.sh"), "content": "new\n"})
	if res.IsError || res.Output != "overwrote old.sh (4 bytes, 1 line)" {
		t.Errorf("overwrite: %+v", res)
	}
	readBack(t, ws, "old.sh", "new\n")
	if info, _ := os.Stat(filepath.Join(ws.Dir(), "old.sh")); info.Mode().Perm() != 0o755 {
		t.Errorf("mode changed to %v", info.Mode())
	}

	for _, tc := range []struct{ path, want string }{
		{"adir", "adir is a directory"},
		{".", "not the workspace itself"},
		{"old.sh/child", "old.sh/child"},
	} {
		if res := call(t, set, Write, obj{"path": tc.path, "content": "x"}); !res.IsError || !strings.Contains(res.Output, tc.want) {
			t.Errorf("write %s: %+v, want error with %q", tc.path, res, tc.want)
		}
	}
}

func TestEdit(t *testing.T) {
	const src = "package main\n\nfunc a() { return 1 }\nfunc b() { return 1 }\n"
	tests := []struct {
		name     string
		file     string
		input    obj
		isError  bool
		wantOut  string
		wantFile string
	}{
		{name: "unique match", file: src,
			input:   obj{"old_string": "func a() { return 1 }", "new_string": "func a() { return 2 }"},
			wantOut: "edited f.go: replaced 1 occurrence at line 3", wantFile: strings.Replace(src, "a() { return 1", "a() { return 2", 1)},
		{name: "missing", file: src, isError: true,
			input:   obj{"old_string": "func c()", "new_string": "x"},
			wantOut: "old_string was not found in f.go", wantFile: src},
		{name: "missing with a whitespace hint", file: src, isError: true,
			input:   obj{"old_string": "  func a()\n", "new_string": "x"},
			wantOut: "different surrounding whitespace", wantFile: src},
		{name: "not unique", file: src, isError: true,
			input:   obj{"old_string": "return 1", "new_string": "return 3"},
			wantOut: "old_string occurs 2 times in f.go (at lines 3, 4)", wantFile: src},
		{name: "replace all", file: src,
			input:   obj{"old_string": "return 1", "new_string": "return 3", "replace_all": true},
			wantOut: "replaced 2 occurrences, the first at line 3", wantFile: strings.ReplaceAll(src, "return 1", "return 3")},
		{name: "multi-line in a CRLF file", file: "a\r\nb\r\nc\r\n",
			input:   obj{"old_string": "a\nb\n", "new_string": "x\ny\n"},
			wantOut: "replaced 1 occurrence at line 1", wantFile: "x\r\ny\r\nc\r\n"},
		{name: "empty old_string", file: src, isError: true,
			input:   obj{"old_string": "", "new_string": "x"},
			wantOut: "old_string is empty", wantFile: src},
		{name: "no change", file: src, isError: true,
			input:   obj{"old_string": "main", "new_string": "main"},
			wantOut: "the same", wantFile: src},
		{name: "binary", file: "a\x00b", isError: true,
			input:   obj{"old_string": "a", "new_string": "b"},
			wantOut: "binary", wantFile: "a\x00b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, set := newTestWorkspace(t, map[string]string{"f.go": tc.file}, Options{})
			tc.input["path"] = "f.go"
			res := call(t, set, Edit, tc.input)
			if res.IsError != tc.isError || !strings.Contains(res.Output, tc.wantOut) {
				t.Errorf("got %+v, want IsError=%v and %q", res, tc.isError, tc.wantOut)
			}
			readBack(t, ws, "f.go", tc.wantFile)
		})
	}
	t.Run("missing file", func(t *testing.T) {
		_, set := newTestWorkspace(t, nil, Options{})
		res := call(t, set, Edit, obj{"path": "nope", "old_string": "a", "new_string": "b"})
		if !res.IsError || !strings.Contains(res.Output, "nope does not exist") {
			t.Errorf("got %+v", res)
		}
	})
}

func readBack(t *testing.T, ws *Workspace, rel, want string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(ws.Dir(), filepath.FromSlash(rel)))
	must(t, err)
	if string(got) != want {
		t.Errorf("%s holds %q, want %q", rel, got, want)
	}
}

func clip(s string) string {
	if len(s) > 600 {
		return s[:300] + " ... " + s[len(s)-300:]
	}
	return s
}
