package style

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The size rules: small files and functions are read, reviewed and changed
// in one sitting.
const (
	maxFileLines = 600
	maxFuncLines = 80
)

// testSupportDirs hold test code outside _test.go files (the conformance
// suite, fake servers, test helpers, the benchmark program): the size
// rules do not apply there. A pattern matches the directory and everything
// below it; its elements are path.Match patterns.
var testSupportDirs = []string{
	"internal/llm/llmtest",
	"internal/*test",
	"internal/benchcli",
}

// sizeKey names a file, or a function in it ("Type.Method" for a method).
type sizeKey struct {
	file string
	fn   string
}

// pendingSizes break the size rules today and are being split: each must
// still break them (the test fails when one no longer does, so that it is
// taken off this list and the rule then guards it).
var pendingSizes = []sizeKey{}

// importRule is a rule on the imports of the non-test files of the
// packages pkg names. Packages are named by their directory from the
// module's root: "" is the root package, "x/..." is x and every package
// below it, "..." is every package.
type importRule struct {
	pkg    string
	except []string // packages pkg names that the rule leaves out
	// stdlibOnly: pkg imports nothing but the standard library.
	stdlibOnly bool
	// only, when not nil: the module's packages pkg may import, no other.
	only []string
	// not: the module's packages pkg must not import.
	not []string
	why string
}

var waysIn = []string{"internal/repl", "internal/httpapi", "internal/mcpserver", "internal/cli"}

// layering is the architecture of docs/architecture.md, enforced.
var layering = []importRule{
	{pkg: "", stdlibOnly: true,
		why: "the domain model at the root depends on nothing"},
	// The ways in, and the task tools they share, import what they are
	// allowed to, no more: the runtime (never the engine, the task
	// manager or the agent loop behind it), the domain, and the few
	// packages of their own surface. None imports another way in.
	{pkg: "internal/repl", only: []string{"", "internal/mdterm", "internal/runtime", "internal/tasktools", "internal/events", "internal/cost"},
		why: "the chat is an adapter over runtime/: a way in reaches the engine, tasks and the agent loop through it, and the ways in are siblings"},
	{pkg: "internal/httpapi", only: []string{"", "internal/mdterm", "internal/runtime", "internal/tasktools", "internal/config", "internal/cost", "internal/llm"},
		why: "the HTTP API is an adapter over runtime/: a way in reaches the engine, tasks and the agent loop through it, and the ways in are siblings"},
	{pkg: "internal/mcpserver", only: []string{"", "internal/mdterm", "internal/runtime", "internal/tasktools", "internal/config", "internal/events", "mcptasks", "transcripts"},
		why: "the MCP server is an adapter over runtime/: a way in reaches the engine, tasks and the agent loop through it, and the ways in are siblings"},
	{pkg: "internal/cli", only: []string{"", "internal/mdterm", "internal/runtime", "internal/tasktools", "internal/agents", "internal/config", "internal/cost", "forkctx", "internal/instructions", "internal/mcpclient",
		"internal/mcpdaemon", "internal/postgres", "sandbox", "internal/sqlite", "internal/taskqueue", "internal/tools", "transcripts", "internal/xdg"},
		why: "the command line is the composition root (it opens the store, chooses the dispatch and the tools) and works through runtime/; frontends/ starts the long-lived ways in"},
	{pkg: "internal/tasktools", only: []string{"", "internal/mdterm", "internal/runtime", "internal/agents", "internal/cost", "internal/tools"},
		why: "the task tool surface is over runtime/, as the ways in are"},
	{pkg: "...", except: []string{"internal/frontends", "cmd/...", "internal/hosttest"}, not: waysIn,
		why: "frontends/ and cmd/ are the composition root that wires the ways in (internal/hosttest serves the HTTP API to hosts in tests)"},
	{pkg: "internal/sqlite/...", only: []string{"", "internal/storekit"},
		why: "a store builds on the domain model and internal helpers only, never on runtime, tasks, engine or a way in"},
	{pkg: "internal/postgres/...", only: []string{"", "internal/storekit"},
		why: "a store builds on the domain model and internal helpers only, never on runtime, tasks, engine or a way in"},
	{pkg: "internal/runtime", not: []string{"internal/sqlite", "internal/postgres"},
		why: "the runtime works on any Store; the command line picks one"},
	{pkg: "internal/repl", not: []string{"internal/sqlite", "internal/postgres", "internal/taskqueue"},
		why: "a way in reads the store through the runtime's read-only view and writes through the runtime; the command line opens the store"},
	{pkg: "internal/httpapi", not: []string{"internal/sqlite", "internal/postgres", "internal/taskqueue"},
		why: "a way in reads the store through the runtime's read-only view and writes through the runtime; the command line opens the store"},
	{pkg: "internal/mcpserver", not: []string{"internal/sqlite", "internal/postgres", "internal/taskqueue"},
		why: "a way in reads the store through the runtime's read-only view and writes through the runtime; the command line opens the store"},
	{pkg: "internal/tasktools", not: []string{"internal/sqlite", "internal/postgres", "internal/taskqueue"},
		why: "a way in reads the store through the runtime's read-only view and writes through the runtime; the command line opens the store"},
	{pkg: "internal/runtime", not: []string{"internal/taskqueue"},
		why: "the runtime works on any task dispatch; the command line picks one"},
	{pkg: "internal/engine", not: []string{"internal/runtime", "internal/tasktools", "internal/tasks"},
		why: "the engine is below the runtime and gets the task tools from it"},
	{pkg: "internal/tasks", not: []string{"internal/runtime", "internal/tasktools"},
		why: "the task manager is below the runtime; the tool surface is over it"},
	{pkg: "internal/runner", only: []string{"", "internal/proc"},
		why: "a process's liveness and turn leases are below the task manager and the runtime, which both take leases through it"},
	{pkg: "internal/agent", not: []string{"internal/runtime", "internal/tasktools", "internal/tasks", "internal/engine"},
		why: "the agent loop knows only models and tools"},
}

// pendingLayering are rules of the architecture that do not hold yet: they
// become enforced when the runtime is the only way to the engine and tasks.
// Each must still be broken (the test fails when one holds, so that it
// moves to layering).
var pendingLayering = []importRule{}

func TestSizes(t *testing.T) {
	m := loadModule(t)
	found := map[sizeKey]bool{}
	for _, v := range sizeViolations(m.files) {
		found[v.key] = true
		if !slices.Contains(pendingSizes, v.key) {
			t.Error(v)
		}
	}
	for _, k := range pendingSizes {
		if !found[k] {
			t.Errorf("%s is listed in pendingSizes but keeps the size rules now (or is gone): take it off the list", k)
		}
	}
}

func TestLayering(t *testing.T) {
	m := loadModule(t)
	for _, r := range layering {
		for _, err := range checkRuleNames(m.imports, r) {
			t.Errorf("layering: %v", err)
		}
		for _, v := range layeringViolations(m.path, m.imports, r) {
			t.Error(v)
		}
	}
	for _, r := range pendingLayering {
		for _, err := range checkRuleNames(m.imports, r) {
			t.Errorf("pendingLayering: %v", err)
		}
		if len(layeringViolations(m.path, m.imports, r)) == 0 {
			t.Errorf("the pending rule %s holds now: move it to layering, where it is enforced", r)
		}
	}
}

func (k sizeKey) String() string {
	if k.fn == "" {
		return k.file
	}
	return k.file + " func " + k.fn
}

type sizeViolation struct {
	key   sizeKey
	lines int
}

func (v sizeViolation) String() string {
	if v.key.fn == "" {
		return fmt.Sprintf("%s has %d lines: a non-test Go file has at most %d; split it by concern",
			v.key.file, v.lines, maxFileLines)
	}
	return fmt.Sprintf("%s: func %s has %d lines: a function outside tests has at most %d; split it into functions whose names say what they do",
		v.key.file, v.key.fn, v.lines, maxFuncLines)
}

// sourceFile is a parsed Go file of the module.
type sourceFile struct {
	rel   string // slash-separated, from the module's root
	fset  *token.FileSet
	file  *ast.File
	lines int
}

func parseSource(rel string, src []byte) (sourceFile, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return sourceFile{}, fmt.Errorf("parse %s: %w", rel, err)
	}
	lines := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		lines++
	}
	return sourceFile{rel: rel, fset: fset, file: f, lines: lines}, nil
}

// isTestCode reports whether the size rules leave rel alone: tests, test
// support and generated files.
func isTestCode(f sourceFile) bool {
	if strings.HasSuffix(f.rel, "_test.go") || ast.IsGenerated(f.file) {
		return true
	}
	dir := strings.Split(path.Dir(f.rel), "/")
	for _, pattern := range testSupportDirs {
		elems := strings.Split(pattern, "/")
		if len(dir) < len(elems) {
			continue
		}
		if ok, _ := path.Match(pattern, strings.Join(dir[:len(elems)], "/")); ok {
			return true
		}
	}
	return false
}

func sizeViolations(files []sourceFile) []sizeViolation {
	var out []sizeViolation
	for _, f := range files {
		if isTestCode(f) {
			continue
		}
		if f.lines > maxFileLines {
			out = append(out, sizeViolation{key: sizeKey{file: f.rel}, lines: f.lines})
		}
		for _, d := range f.file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			n := f.fset.Position(fd.End()).Line - f.fset.Position(fd.Pos()).Line + 1
			if n > maxFuncLines {
				out = append(out, sizeViolation{key: sizeKey{file: f.rel, fn: funcName(fd)}, lines: n})
			}
		}
	}
	return out
}

// funcName is "Name" for a function, "Type.Name" for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

// pkgImports maps a package (its directory from the module's root) to the
// paths its non-test files import, each with one file that imports it.
type pkgImports map[string]map[string]string

func (r importRule) String() string {
	var parts []string
	if r.stdlibOnly {
		parts = append(parts, "imports only the standard library")
	}
	if r.only != nil {
		parts = append(parts, "may import only "+pkgList(r.only)+" of the module")
	}
	if len(r.not) > 0 {
		parts = append(parts, "must not import "+pkgList(r.not))
	}
	s := pkgName(r.pkg)
	if len(r.except) > 0 {
		s += " (but " + pkgList(r.except) + ")"
	}
	return fmt.Sprintf("%q (%s %s)", r.why, s, strings.Join(parts, " and "))
}

func pkgName(p string) string {
	switch p {
	case "":
		return "the root package"
	case "...":
		return "every package"
	}
	return p
}

func pkgList(ps []string) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = pkgName(p)
	}
	return strings.Join(names, ", ")
}

// matchPkg reports whether the package dir is named by pattern.
func matchPkg(dir, pattern string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return dir == base || strings.HasPrefix(dir, base+"/")
	}
	return dir == pattern
}

func matchAny(dir string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matchPkg(dir, p) })
}

// moduleDir is the package directory an import path names in the module
// modPath ("" for the root), and whether it is in the module at all.
func moduleDir(modPath, importPath string) (string, bool) {
	if importPath == modPath {
		return "", true
	}
	rest, ok := strings.CutPrefix(importPath, modPath+"/")
	return rest, ok
}

// isStdlib: the standard library's paths have no dot in their first element.
func isStdlib(importPath string) bool {
	first, _, _ := strings.Cut(importPath, "/")
	return !strings.Contains(first, ".")
}

// layeringViolations lists how the packages of imports break r.
func layeringViolations(modPath string, imports pkgImports, r importRule) []string {
	var out []string
	for _, pkg := range sortedKeys(imports) {
		if !matchPkg(pkg, r.pkg) || matchAny(pkg, r.except) {
			continue
		}
		for _, imp := range sortedKeys(imports[pkg]) {
			file := imports[pkg][imp]
			dir, inModule := moduleDir(modPath, imp)
			switch {
			case r.stdlibOnly && !isStdlib(imp):
				out = append(out, fmt.Sprintf("%s imports %s: %s imports only the standard library (%s)",
					file, imp, pkgName(pkg), r.why))
			case inModule && r.only != nil && !matchAny(dir, r.only):
				out = append(out, fmt.Sprintf("%s imports %s: %s may import only %s of the module (%s)",
					file, imp, pkgName(pkg), pkgList(r.only), r.why))
			case inModule && matchAny(dir, r.not):
				out = append(out, fmt.Sprintf("%s imports %s: %s must not import %s (%s)",
					file, imp, pkgName(pkg), pkgName(dir), r.why))
			}
		}
	}
	return out
}

// checkRuleNames reports the packages a rule names that match no package,
// so that a renamed package does not leave a rule guarding nothing.
func checkRuleNames(imports pkgImports, r importRule) []error {
	var errs []error
	for _, p := range slices.Concat([]string{r.pkg}, r.except, r.only, r.not) {
		found := false
		for pkg := range imports {
			if matchPkg(pkg, p) {
				found = true
				break
			}
		}
		if !found {
			errs = append(errs, fmt.Errorf("rule %s names %s, which is no package of the module", r, pkgName(p)))
		}
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

type module struct {
	path    string
	files   []sourceFile // the non-test Go files
	imports pkgImports
}

// loadModule parses the non-test Go files of the module this test is in
// (every build constraint alike), without type-checking: fast.
func loadModule(t *testing.T) module {
	t.Helper()
	root, modPath, err := findModule()
	if err != nil {
		t.Fatal(err)
	}
	m := module{path: modPath, imports: pkgImports{}}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return skipDir(root, p, d)
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("read source: %w", err)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return fmt.Errorf("path from the module's root: %w", err)
		}
		f, err := parseSource(filepath.ToSlash(rel), src)
		if err != nil {
			return err
		}
		m.files = append(m.files, f)
		m.addImports(f)
		return nil
	})
	if err != nil {
		t.Fatalf("load the module at %s: %v", root, err)
	}
	return m
}

func (m module) addImports(f sourceFile) {
	dir := path.Dir(f.rel)
	if dir == "." {
		dir = ""
	}
	if m.imports[dir] == nil {
		m.imports[dir] = map[string]string{}
	}
	for _, spec := range f.file.Imports {
		imp, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue // the parser has checked it is a string
		}
		if _, seen := m.imports[dir][imp]; !seen {
			m.imports[dir][imp] = f.rel
		}
	}
}

// skipDir leaves out what the go command leaves out: testdata, hidden and
// underscore directories, and other modules nested in this one.
func skipDir(root, p string, d fs.DirEntry) error {
	if p == root {
		return nil
	}
	name := d.Name()
	if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "node_modules" {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
		return filepath.SkipDir
	}
	return nil
}

// findModule finds the root of the module around the working directory and
// the module's path.
func findModule() (root, modPath string, err error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", "", fmt.Errorf("working directory: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for line := range strings.Lines(string(data)) {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
					return dir, strings.Trim(strings.TrimSpace(rest), `"`), nil
				}
			}
			return "", "", fmt.Errorf("%s has no module line", filepath.Join(dir, "go.mod"))
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
