package style

import (
	"fmt"
	"go/ast"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A re-export gives one thing a second name in another package of the
// module (type X = p.Y, or a constant or variable whose value is p.Y), and the reader then
// has to find out that both mean the same. The project names a thing
// where it lives; the exceptions are kept on purpose, each for a reason.
var reexportExceptions = map[string]string{
	"internal/llm.ErrStreamIdle":     "made in internal/llm/internal/wire, which callers of internal/llm cannot import",
	"internal/llm.ErrRequestTimeout": "made in internal/llm/internal/wire, which callers of internal/llm cannot import",
	"internal/llm.ErrCut":            "made in internal/llm/internal/wire, which callers of internal/llm cannot import",
}

// pendingReexports are re-exports still there, being removed: each must
// still be one (the test fails when it is gone, so that it comes off the
// list).
var pendingReexports = []string{}

// reexports lists the re-exports of the module's non-test code, of names
// of the module's packages (modPath's), as "package.Name" (the package
// as its directory).
func reexports(files []sourceFile, modPath string) []string {
	var out []string
	for _, f := range files {
		if isTestCode(f) {
			continue
		}
		imported := importNames(f.file, modPath)
		pkg := path.Dir(f.rel)
		if pkg == "." {
			pkg = f.file.Name.Name
		}
		fromImport := func(e ast.Expr) bool {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok {
				return false
			}
			id, ok := sel.X.(*ast.Ident)
			return ok && imported[id.Name] && sel.Sel.IsExported()
		}
		for _, d := range f.file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					if sp.Assign.IsValid() && sp.Name.IsExported() && fromImport(sp.Type) {
						out = append(out, pkg+"."+sp.Name.Name)
					}
				case *ast.ValueSpec:
					if gd.Tok != token.CONST && gd.Tok != token.VAR {
						continue
					}
					for i, name := range sp.Names {
						if i < len(sp.Values) && name.IsExported() && fromImport(sp.Values[i]) {
							out = append(out, pkg+"."+name.Name)
						}
					}
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// importNames are the names a file's imports of the module's packages are
// known by.
func importNames(f *ast.File, modPath string) map[string]bool {
	names := map[string]bool{}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil || (p != modPath && !strings.HasPrefix(p, modPath+"/")) {
			continue
		}
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = true
	}
	return names
}

func TestNoReexports(t *testing.T) {
	m := loadModule(t)
	found := reexports(m.files, m.path)
	for _, r := range found {
		if _, ok := reexportExceptions[r]; ok || slices.Contains(pendingReexports, r) {
			continue
		}
		t.Errorf("%s re-exports another package's name: use that name where it lives (or, if it must stay, say why in reexportExceptions)", r)
	}
	for _, r := range pendingReexports {
		if !slices.Contains(found, r) {
			t.Errorf("%s is listed in pendingReexports but is gone: take it off the list", r)
		}
	}
	for r := range reexportExceptions {
		if !slices.Contains(found, r) {
			t.Errorf("%s is listed in reexportExceptions but is gone: take it off the list", r)
		}
	}
}

func TestReexportsFound(t *testing.T) {
	src := `package p

import (
	"errors"
	"time"
	other "example.com/m/q"
	"example.com/m/r"
)

type A = other.T
type b = other.T
type C other.T
const D = r.K
var E, F = r.V, errors.New("x")
var G = local
const H = time.Second
`
	f, err := parseSource("p/p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(reexports([]sourceFile{f}, "example.com/m"))
	if want := "[p.A p.D p.E]"; got != want {
		t.Errorf("reexports = %s, want %s", got, want)
	}
}
