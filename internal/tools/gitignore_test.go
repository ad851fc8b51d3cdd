package tools

import (
	"strings"
	"testing"
)

// TestGitignore: grep, glob and ls leave out what the workspace's
// .gitignore files ignore (nested files apply below their directory, !
// re-includes), unless include_ignored is set or the path asked for is
// itself ignored.
func TestGitignore(t *testing.T) {
	_, set := newTestWorkspace(t, map[string]string{
		".gitignore":          "*.log\nbuild/\n/secret.txt\n!keep.log\n",
		"main.go":             "needle\n",
		"app.log":             "needle\n",
		"keep.log":            "needle\n",
		"secret.txt":          "needle\n",
		"build/out.go":        "needle\n",
		"sub/.gitignore":      "gen_*.go\n",
		"sub/gen_a.go":        "needle\n",
		"sub/real.go":         "needle\n",
		"sub/secret.txt":      "needle\n", // /secret.txt is anchored to the root
		"other/gen_b.go":      "needle\n", // sub's rule does not reach here
		"node_modules/x/y.js": "needle\n",
		"node_modules/.keep":  "",
		"vendor/.gitignore":   "*\n",
		"vendor/lib.go":       "needle\n",
	}, Options{})
	tests := []struct {
		name    string
		tool    string
		input   map[string]any
		want    []string
		notWant []string
	}{
		{"grep skips ignored files", Grep, map[string]any{"pattern": "needle"},
			[]string{"main.go:1", "keep.log:1", "sub/real.go:1", "sub/secret.txt:1", "other/gen_b.go:1", "node_modules/x/y.js:1"},
			[]string{"app.log", "\nsecret.txt:1", "build/", "sub/gen_a.go", "vendor/lib.go"}},
		{"grep with include_ignored", Grep, map[string]any{"pattern": "needle", "include_ignored": true},
			[]string{"app.log:1", "build/out.go:1", "sub/gen_a.go:1", "vendor/lib.go:1"}, nil},
		{"grep of an ignored directory named outright", Grep, map[string]any{"pattern": "needle", "path": "build"},
			[]string{"build/out.go:1"}, nil},
		{"glob", Glob, map[string]any{"pattern": "**/*.go"},
			[]string{"main.go", "sub/real.go", "other/gen_b.go"},
			[]string{"build/out.go", "sub/gen_a.go", "vendor/lib.go"}},
		{"glob finding only ignored files says so", Glob, map[string]any{"pattern": "**/gen_a.go"},
			[]string{"no files match", "ignored by .gitignore", "include_ignored"}, nil},
		{"ls", Ls, map[string]any{},
			[]string{"main.go", "keep.log", "sub/", "[3 paths ignored by .gitignore"},
			[]string{"app.log", "build/", "secret.txt\n"}},
		{"ls with include_ignored", Ls, map[string]any{"include_ignored": true},
			[]string{"app.log", "build/", "secret.txt"}, []string{"ignored by .gitignore"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, set, tt.tool, tt.input)
			if res.IsError {
				t.Fatal(res.Output)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("output lacks %q:\n%s", w, res.Output)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(res.Output, w) {
					t.Errorf("output has %q:\n%s", w, res.Output)
				}
			}
		})
	}
}
