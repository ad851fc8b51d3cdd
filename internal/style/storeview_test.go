package style

import (
	"fmt"
	"go/ast"
	"path"
	"slices"
	"strconv"
	"testing"
)

// The ways in read the store through the view the runtime hands them
// (storeView: a method of a type of a package, by directory from the
// module's root), and write through the runtime's operations only: the
// interface of the root package that view returns has none of the
// methods of the root package's Store that write.
var storeView = viewMethod{pkg: "internal/runtime", recv: "Runtime", method: "Store"}

// storeWrites are the methods of the root package's Store that write, or
// close it, each named as the interface declares it (an interface of
// another package it embeds by its qualified name). Every method of Store
// is either here or in the view: a new one is to be put on one side.
var storeWrites = []string{
	"CreateSession", "Fork", "Append", "DeleteSession",
	"CreateTask", "UpdateTask", "FinishTask",
	"RegisterRunner", "TouchRunner", "RemoveRunner",
	"AcquireTurn", "ReleaseTurn",
	"CreateHostSession", "AppendHost", "MoveNotices",
	"AskInput", "AnswerInputs",
	"SendTaskMessage", "DeliverTaskMessages",
	"io.Closer",
}

type viewMethod struct{ pkg, recv, method string }

func TestStoreViewIsReadOnly(t *testing.T) {
	m := loadModule(t)
	for _, v := range storeViewViolations(m.path, m.files, storeView, storeWrites) {
		t.Error(v)
	}
}

// storeViewViolations lists how the interface view returns breaks the
// rule: a write method in it, a method of Store on neither side, a write
// that Store no longer has.
func storeViewViolations(modPath string, files []sourceFile, view viewMethod, writes []string) []string {
	ifaces := rootInterfaces(files)
	store, ok := ifaces["Store"]
	if !ok {
		return []string{"the root package declares no interface Store"}
	}
	name, where, err := viewResult(modPath, files, view)
	if err != nil {
		return []string{err.Error()}
	}
	if _, ok := ifaces[name]; !ok {
		return []string{fmt.Sprintf("%s: %s.%s.%s returns %s, which is no interface of the root package: it is to return a read-only view of the store",
			where, view.pkg, view.recv, view.method, name)}
	}
	storeMethods, viewMethods := methodSet(ifaces, "Store", store), methodSet(ifaces, name, ifaces[name])
	var out []string
	for _, mname := range viewMethods {
		switch {
		case slices.Contains(writes, mname):
			out = append(out, fmt.Sprintf("%s: %s.%s.%s returns the root package's %s, which has %s, a method that writes: a way in writes through the runtime's operations, never through the store",
				where, view.pkg, view.recv, view.method, name, mname))
		case !slices.Contains(storeMethods, mname):
			out = append(out, fmt.Sprintf("%s: the root package's %s has %s, which Store has not: the view holds reads of the store only",
				where, name, mname))
		}
	}
	for _, mname := range storeMethods {
		if !slices.Contains(viewMethods, mname) && !slices.Contains(writes, mname) {
			out = append(out, fmt.Sprintf("the root package's Store has %s, which is neither in %s nor in storeWrites: put it on one side", mname, name))
		}
	}
	for _, w := range writes {
		if !slices.Contains(storeMethods, w) {
			out = append(out, fmt.Sprintf("storeWrites names %s, which the root package's Store has not (any more): take it off", w))
		}
	}
	return out
}

// rootInterfaces are the interface types the root package declares (in
// the non-test files loadModule reads).
func rootInterfaces(files []sourceFile) map[string]*ast.InterfaceType {
	out := map[string]*ast.InterfaceType{}
	for _, f := range files {
		if path.Dir(f.rel) != "." {
			continue
		}
		for _, d := range f.file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				if ts, ok := spec.(*ast.TypeSpec); ok {
					if it, ok := ts.Type.(*ast.InterfaceType); ok {
						out[ts.Name.Name] = it
					}
				}
			}
		}
	}
	return out
}

// methodSet lists the methods of the root package's interface name, those
// of the interfaces it embeds included (one of another package by its
// qualified name, "io.Closer"), sorted.
func methodSet(ifaces map[string]*ast.InterfaceType, name string, it *ast.InterfaceType) []string {
	seen := map[string]bool{name: true}
	var out []string
	var walk func(it *ast.InterfaceType)
	walk = func(it *ast.InterfaceType) {
		for _, field := range it.Methods.List {
			for _, n := range field.Names {
				out = append(out, n.Name)
			}
			if len(field.Names) > 0 {
				continue
			}
			switch x := field.Type.(type) {
			case *ast.Ident:
				if inner, ok := ifaces[x.Name]; ok && !seen[x.Name] {
					seen[x.Name] = true
					walk(inner)
				}
			case *ast.SelectorExpr:
				if pkg, ok := x.X.(*ast.Ident); ok {
					out = append(out, pkg.Name+"."+x.Sel.Name)
				}
			}
		}
	}
	walk(it)
	slices.Sort(out)
	return slices.Compact(out)
}

// viewResult finds the method view in its package and returns the name of
// the root package's type it returns, and where it is declared.
func viewResult(modPath string, files []sourceFile, view viewMethod) (string, string, error) {
	for _, f := range files {
		if path.Dir(f.rel) != view.pkg {
			continue
		}
		for _, d := range f.file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Name.Name != view.method || funcName(fd) != view.recv+"."+view.method {
				continue
			}
			where := f.fset.Position(fd.Pos()).String()
			if fd.Type.Results == nil || len(fd.Type.Results.List) != 1 || len(fd.Type.Results.List[0].Names) > 1 {
				return "", where, fmt.Errorf("%s: %s.%s.%s is to return one value, the store's read-only view", where, view.pkg, view.recv, view.method)
			}
			if sel, ok := fd.Type.Results.List[0].Type.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok && rootImportNames(modPath, f.file)[pkg.Name] {
					return sel.Sel.Name, where, nil
				}
			}
			return "", where, fmt.Errorf("%s: %s.%s.%s returns no type of the root package: it is to return the store's read-only view", where, view.pkg, view.recv, view.method)
		}
	}
	return "", "", fmt.Errorf("no method %s.%s.%s: storeView names what hands the ways in the store's read-only view", view.pkg, view.recv, view.method)
}

// rootImportNames are the names a file gives the module's root package.
func rootImportNames(modPath string, f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, spec := range f.Imports {
		imp, err := strconv.Unquote(spec.Path.Value)
		if err != nil || imp != modPath {
			continue
		}
		name := path.Base(imp)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		names[name] = true
	}
	return names
}

func TestStoreViewViolations(t *testing.T) {
	const root = `package m
import "io"
type Store interface { Sessions; io.Closer }
type Sessions interface { SessionReader; CreateSession() }
type SessionReader interface { Session() }
type Both interface { SessionReader; CreateSession() }
`
	rt := func(result string) string {
		return "package runtime\nimport sa \"example.com/m\"\ntype Runtime struct{}\nfunc (rt *Runtime) Store() " + result + " { return nil }\n"
	}
	writes := []string{"CreateSession", "io.Closer"}
	for _, tt := range []struct {
		name, runtime string
		writes        []string
		want          int
	}{
		{"the whole store", rt("sa.Store"), writes, 2},
		{"a view with a write", rt("sa.Both"), writes, 1},
		{"the reads", rt("sa.SessionReader"), writes, 0},
		{"a type of another package", rt("io.Reader"), writes, 1},
		{"a method of Store on neither side", rt("sa.SessionReader"), []string{"io.Closer"}, 1},
		{"a write Store has not", rt("sa.SessionReader"), append([]string{"Gone"}, writes...), 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var files []sourceFile
			for rel, src := range map[string]string{"store.go": root, "internal/runtime/api.go": tt.runtime} {
				f, err := parseSource(rel, []byte(src))
				if err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
			}
			got := storeViewViolations("example.com/m", files, storeView, tt.writes)
			if len(got) != tt.want {
				t.Fatalf("violations %q, want %d", got, tt.want)
			}
		})
	}
}
