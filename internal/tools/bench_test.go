package tools

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// benchTree is 10,000 small Go-like files in 100 directories of 10
// subdirectories each, built once per process.
var benchTree = sync.OnceValue(func() map[string]string {
	files := make(map[string]string, 10_000)
	for i := range 10_000 {
		var b strings.Builder
		fmt.Fprintf(&b, "package p%d\n\nimport \"fmt\"\n\n", i%100)
		for j := range 40 {
			fmt.Fprintf(&b, "func f%d_%d() { fmt.Println(%d) }\n", i, j, i*j)
		}
		if i%500 == 0 {
			b.WriteString("// NEEDLE: rare marker\n")
		}
		ext := ".go"
		if i%4 == 0 {
			ext = ".txt"
		}
		files[fmt.Sprintf("d%02d/s%d/file%05d%s", i%100, i%10, i, ext)] = b.String()
	}
	return files
})

func benchSet(b *testing.B) *Set {
	b.Helper()
	_, set := newTestWorkspace(b, benchTree(), Options{})
	return set
}

func BenchmarkGrep10kFiles(b *testing.B) {
	set := benchSet(b)
	for _, bc := range []struct{ name, input string }{
		{"rare literal", `{"pattern":"NEEDLE"}`},
		{"regexp with glob", `{"pattern":"func f\\d+_39\\(","glob":"*.txt"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				res, err := set.Call(b.Context(), Grep, []byte(bc.input))
				if err != nil || res.IsError {
					b.Fatal(err, res.Output)
				}
			}
		})
	}
}

func BenchmarkGlob10kFiles(b *testing.B) {
	set := benchSet(b)
	for _, bc := range []struct{ name, input string }{
		{"all go files", `{"pattern":"**/*.go"}`},
		{"one directory", `{"pattern":"d07/*/*.txt"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				res, err := set.Call(b.Context(), Glob, []byte(bc.input))
				if err != nil || res.IsError {
					b.Fatal(err, res.Output)
				}
			}
		})
	}
}

func BenchmarkRead10MB(b *testing.B) {
	var content strings.Builder
	for i := 0; content.Len() < 10<<20; i++ {
		fmt.Fprintf(&content, "line %d: %s\n", i, strings.Repeat("lorem ipsum ", 8))
	}
	_, set := newTestWorkspace(b, map[string]string{"big.txt": content.String()}, Options{})
	b.SetBytes(int64(content.Len()))
	for _, bc := range []struct{ name, input string }{
		{"first 2000 lines", `{"path":"big.txt"}`},
		{"last lines", `{"path":"big.txt","offset":96000,"limit":100}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				res, err := set.Call(b.Context(), Read, []byte(bc.input))
				if err != nil || res.IsError {
					b.Fatal(err, res.Output)
				}
			}
		})
	}
}

// BenchmarkGrepGitignore is the rare-literal grep over the same tree with a
// .gitignore at its root and one in each top directory, and without them.
func BenchmarkGrepGitignore(b *testing.B) {
	files := make(map[string]string, len(benchTree())+101)
	for k, v := range benchTree() {
		files[k] = v
	}
	files[".gitignore"] = "*.log\n/d99/\nbuild/\n"
	for i := range 100 {
		files[fmt.Sprintf("d%02d/.gitignore", i)] = "gen_*.go\n!keep.go\n"
	}
	_, set := newTestWorkspace(b, files, Options{})
	for _, bc := range []struct{ name, input string }{
		{"with .gitignore files", `{"pattern":"NEEDLE"}`},
		{"include_ignored", `{"pattern":"NEEDLE","include_ignored":true}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				res, err := set.Call(b.Context(), Grep, []byte(bc.input))
				if err != nil || res.IsError {
					b.Fatal(err, res.Output)
				}
			}
		})
	}
}
