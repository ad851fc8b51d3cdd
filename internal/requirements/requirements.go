// Package requirements reads docs/requirements.md and checks that every
// test it names exists, so that the page cannot drift from the tests.
package requirements

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// RootPackage names the module's root package in a reference
// (superagents.TestX), as no directory name can.
const RootPackage = "superagents"

// Requirement is one entry of the page: its ID, the tests that check it and
// whether it is marked untested.
type Requirement struct {
	ID       string
	Title    string
	Line     int
	Tests    []Ref
	Untested bool
}

// Ref names a test: the package's directory relative to the module, the
// function, and the subtest names after it, if any.
type Ref struct {
	Raw      string
	Dir      string
	Func     string
	Subtests []string
	Line     int
}

var (
	// A requirement starts with a third-level heading whose first word is
	// its ID: letters and digits in groups joined by '-', ending in a number.
	headingRE = regexp.MustCompile(`^###\s+(\S+)\s*(.*)$`)
	idRE      = regexp.MustCompile(`^[A-Z][A-Z0-9]*(-[A-Z][A-Z0-9]*)*-[0-9]+$`)
	// A test is a list item holding one reference in backquotes.
	refItemRE = regexp.MustCompile("^\\s*[-*]\\s+`([^`]+)`")
	refRE     = regexp.MustCompile(`^([A-Za-z0-9_./-]+)\.((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)((?:/[^/\s]+)*)$`)
	// The untested mark: a list item that starts with the word.
	untestedRE = regexp.MustCompile(`^\s*[-*]\s+\*{0,2}untested\b`)
)

// Parse reads the page. A heading of the third level that is no ID, a
// malformed reference and a reference outside any requirement are errors.
func Parse(r io.Reader) ([]Requirement, []error) {
	var (
		reqs []Requirement
		errs []error
		cur  *Requirement
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	fence := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		if strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "###") {
			cur = nil // a new section: references must not run on into it
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil && !strings.HasPrefix(line, "####") {
			id := strings.TrimSuffix(m[1], ":")
			if !idRE.MatchString(id) {
				errs = append(errs, fmt.Errorf("line %d: requirement %q has no ID (want a heading like \"### TASK-LAUNCH-1 title\")", n, strings.TrimSpace(strings.TrimPrefix(line, "###"))))
				cur = nil
				continue
			}
			reqs = append(reqs, Requirement{ID: id, Title: strings.TrimLeft(m[2], " —-:"), Line: n})
			cur = &reqs[len(reqs)-1]
			continue
		}
		if untestedRE.MatchString(line) {
			if cur == nil {
				errs = append(errs, fmt.Errorf("line %d: an untested mark outside any requirement", n))
				continue
			}
			cur.Untested = true
			continue
		}
		m := refItemRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ref, ok := parseRef(m[1], n)
		if !ok {
			// A list item in backquotes that names no test (a file, a
			// setting) is prose, unless it looks like a test.
			if strings.Contains(m[1], ".Test") || strings.Contains(m[1], ".Benchmark") || strings.Contains(m[1], ".Fuzz") {
				errs = append(errs, fmt.Errorf("line %d: malformed test reference %q (want dir.TestName or dir.TestName/subtest)", n, m[1]))
			}
			continue
		}
		if cur == nil {
			errs = append(errs, fmt.Errorf("line %d: test %s is outside any requirement", n, ref.Raw))
			continue
		}
		cur.Tests = append(cur.Tests, ref)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, fmt.Errorf("read requirements: %w", err))
	}
	return reqs, errs
}

func parseRef(s string, line int) (Ref, bool) {
	m := refRE.FindStringSubmatch(s)
	if m == nil {
		return Ref{}, false
	}
	r := Ref{Raw: s, Dir: m[1], Func: m[2], Line: line}
	if r.Dir == RootPackage {
		r.Dir = "."
	}
	if m[3] != "" {
		r.Subtests = strings.Split(m[3][1:], "/")
	}
	return r, true
}

// Check parses the page and checks it against the module at root: IDs
// unique, each requirement tested or marked untested (not both), and every
// test declared in a _test.go file of its package's directory, each
// subtest name a string literal where that test can reach it.
func Check(root string, page io.Reader) []error {
	reqs, errs := Parse(page)
	if len(reqs) == 0 && len(errs) == 0 {
		return []error{fmt.Errorf("no requirements found")}
	}
	seen := map[string]int{}
	idx := newIndex(root)
	for _, r := range reqs {
		if first, dup := seen[r.ID]; dup {
			errs = append(errs, fmt.Errorf("line %d: requirement %s is a duplicate of line %d", r.Line, r.ID, first))
		} else {
			seen[r.ID] = r.Line
		}
		switch {
		case len(r.Tests) == 0 && !r.Untested:
			errs = append(errs, fmt.Errorf("line %d: requirement %s names no test and is not marked untested", r.Line, r.ID))
		case len(r.Tests) > 0 && r.Untested:
			errs = append(errs, fmt.Errorf("line %d: requirement %s names tests and is marked untested", r.Line, r.ID))
		}
		for _, t := range r.Tests {
			if err := idx.check(t); err != nil {
				errs = append(errs, fmt.Errorf("line %d: requirement %s: test %s: %w", t.Line, r.ID, t.Raw, err))
			}
		}
	}
	return errs
}

// pkg is what the parsed files of one directory declare.
type pkg struct {
	funcs    map[string]*ast.FuncDecl // test functions, by name
	files    map[*ast.FuncDecl]*ast.File
	literals map[string]bool // every string literal of the package's files
	err      error
}

type index struct {
	root   string
	module string
	pkgs   map[string]*pkg
}

func newIndex(root string) *index {
	idx := &index{root: root, pkgs: map[string]*pkg{}}
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) == 2 && f[0] == "module" {
				idx.module = f[1]
				break
			}
		}
	}
	return idx
}

func (idx *index) load(dir string) *pkg {
	if p, ok := idx.pkgs[dir]; ok {
		return p
	}
	p := &pkg{funcs: map[string]*ast.FuncDecl{}, files: map[*ast.FuncDecl]*ast.File{}, literals: map[string]bool{}}
	idx.pkgs[dir] = p
	full := filepath.Join(idx.root, filepath.FromSlash(dir))
	entries, err := os.ReadDir(full)
	if err != nil {
		p.err = fmt.Errorf("no package directory %s", dir)
		return p
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(full, name), nil, parser.SkipObjectResolution)
		if err != nil {
			p.err = fmt.Errorf("parse %s: %w", filepath.ToSlash(filepath.Join(dir, name)), err)
			return p
		}
		for lit := range literalsIn(f) {
			p.literals[lit] = true
		}
		if !strings.HasSuffix(name, "_test.go") {
			continue
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				p.funcs[fd.Name.Name] = fd
				p.files[fd] = f
			}
		}
	}
	return p
}

func (idx *index) check(r Ref) error {
	p := idx.load(r.Dir)
	if p.err != nil {
		return p.err
	}
	fd, ok := p.funcs[r.Func]
	if !ok {
		return fmt.Errorf("no func %s in the _test.go files of %s", r.Func, r.Dir)
	}
	if len(r.Subtests) == 0 {
		return nil
	}
	// Subtest names are looked for among the string literals of the
	// function, then of its package, then of the module's packages its
	// file imports (a suite such as storetest names its own subtests).
	scopes := []func() map[string]bool{
		func() map[string]bool { return literalsIn(fd) },
		func() map[string]bool { return p.literals },
		func() map[string]bool {
			all := map[string]bool{}
			for _, imp := range p.files[fd].Imports {
				path, err := strconv.Unquote(imp.Path.Value)
				if err != nil || idx.module == "" || !strings.HasPrefix(path, idx.module+"/") {
					continue
				}
				for lit := range idx.load(strings.TrimPrefix(path, idx.module+"/")).literals {
					all[lit] = true
				}
			}
			return all
		},
	}
	var missing []string
	for _, sub := range r.Subtests {
		found := false
		for _, scope := range scopes {
			if hasSubtest(scope(), sub) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, sub)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return fmt.Errorf("no subtest named %q in %s", strings.Join(missing, ", "), r.Func)
	}
	return nil
}

// hasSubtest reports whether a literal, as testing rewrites a subtest's
// name (spaces become underscores), is the name.
func hasSubtest(lits map[string]bool, name string) bool {
	if lits[name] {
		return true
	}
	for l := range lits {
		if strings.ReplaceAll(l, " ", "_") == name {
			return true
		}
	}
	return false
}

func literalsIn(n ast.Node) map[string]bool {
	lits := map[string]bool{}
	ast.Inspect(n, func(n ast.Node) bool {
		if bl, ok := n.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			if s, err := strconv.Unquote(bl.Value); err == nil {
				lits[s] = true
			}
		}
		return true
	})
	return lits
}
