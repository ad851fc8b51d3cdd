package style

import (
	"fmt"
	"go/ast"
	"path"
	"slices"
	"strconv"
	"testing"
)

// testOnlyCalls are functions that hand out what a layer keeps to itself,
// for tests: only the named packages may call them from non-test code.
// runtime.PartsOf gives the runtime's engine, task manager and bus to
// internal/stacktest, which the tests of those parts use; a way in that
// called it would go around the runtime, which the layering forbids.
var testOnlyCalls = []testOnlyCall{
	{pkg: "internal/runtime", fn: "PartsOf", callers: []string{"internal/stacktest"}},
}

type testOnlyCall struct {
	pkg, fn string   // the function: its package, by directory from the module's root
	callers []string // the packages allowed to call it
}

func TestTestOnlyCalls(t *testing.T) {
	m := loadModule(t)
	for _, c := range testOnlyCalls {
		for _, v := range testOnlyViolations(m.path, m.files, c) {
			t.Error(v)
		}
	}
}

// testOnlyViolations lists the calls of c.fn (any reference to it) in
// files outside c's callers.
func testOnlyViolations(modPath string, files []sourceFile, c testOnlyCall) []string {
	var out []string
	for _, f := range files {
		dir := path.Dir(f.rel)
		if dir == "." {
			dir = ""
		}
		if slices.Contains(c.callers, dir) {
			continue
		}
		names := map[string]bool{} // the names f gives c.pkg
		for _, spec := range f.file.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil || imp != path.Join(modPath, c.pkg) {
				continue
			}
			name := path.Base(imp)
			if spec.Name != nil {
				name = spec.Name.Name
			}
			names[name] = true
		}
		if len(names) == 0 {
			continue
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != c.fn {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && names[id.Name] {
				out = append(out, fmt.Sprintf("%s: %s.%s is for tests (only %v may use it): go through the runtime's methods",
					f.fset.Position(sel.Pos()), c.pkg, c.fn, c.callers))
			}
			return true
		})
	}
	return out
}

func TestTestOnlyViolations(t *testing.T) {
	rule := testOnlyCall{pkg: "runtime", fn: "PartsOf", callers: []string{"internal/stacktest"}}
	for _, tt := range []struct {
		name, rel, src string
		want           int
	}{
		{"a way in", "httpapi/x.go", "package httpapi\nimport \"example.com/m/runtime\"\nvar _ = runtime.PartsOf\n", 1},
		{"renamed import", "repl/x.go", "package repl\nimport rt \"example.com/m/runtime\"\nfunc f(r *rt.Runtime) { _ = rt.PartsOf(r) }\n", 1},
		{"an allowed caller", "internal/stacktest/x.go", "package stacktest\nimport \"example.com/m/runtime\"\nvar _ = runtime.PartsOf\n", 0},
		{"another function", "httpapi/x.go", "package httpapi\nimport \"example.com/m/runtime\"\nvar _ = runtime.Open\n", 0},
		{"another package's PartsOf", "httpapi/x.go", "package httpapi\nimport \"example.com/m/other\"\nvar _ = other.PartsOf\n", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseSource(tt.rel, []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			got := testOnlyViolations("example.com/m", []sourceFile{f}, rule)
			if len(got) != tt.want {
				t.Fatalf("violations %q, want %d", got, tt.want)
			}
		})
	}
}
