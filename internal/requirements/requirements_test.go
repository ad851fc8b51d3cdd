package requirements

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// moduleRoot is the directory of the go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = up
	}
}

// TestRequirementsNameRealTests: every test docs/requirements.md names is
// declared where it says, and every requirement is tested or says it is not.
func TestRequirementsNameRealTests(t *testing.T) {
	root := moduleRoot(t)
	f, err := os.Open(filepath.Join(root, "docs", "requirements.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, err := range Check(root, f) {
		t.Error(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	reqs, _ := Parse(f)
	if len(reqs) < 50 {
		t.Errorf("%d requirements read: the page's format is no longer understood", len(reqs))
	}
}

// A small module for the self-tests: a package with a table-driven test, a
// suite package whose subtests another package's test runs, and the root.
var fixture = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.26\n",
	"root_test.go": `package m
import "testing"
func TestRoot(t *testing.T) {}
`,
	"tasks/tasks_test.go": `package tasks
import "testing"
func TestLaunch(t *testing.T) {
	for _, tt := range []struct{ name string }{{"fork with resume"}} {
		t.Run(tt.name, func(t *testing.T) {})
	}
}
func FuzzParse(f *testing.F) {}
func helper() {}
`,
	"tasks/tasks.go": `package tasks
func TestNotATestFile() {}
`,
	"suite/suite.go": `package suite
import "testing"
func Run(t *testing.T) { t.Run("ForkAndClear", func(t *testing.T) {}) }
`,
	"store/store_test.go": `package store
import (
	"testing"
	"example.com/m/suite"
)
func TestConformance(t *testing.T) { suite.Run(t) }
`,
}

func writeFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range fixture {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCheck(t *testing.T) {
	root := writeFixture(t)
	tests := []struct {
		name string
		page string
		want []string // each must be in one error; none: no error
	}{
		{"good references", "# Tasks\n\n### TASK-LAUNCH-1 Launch\nText.\n\n- `tasks.TestLaunch`\n- `tasks.TestLaunch/fork_with_resume`\n- `tasks.FuzzParse`\n- `superagents.TestRoot`\n- `store.TestConformance/ForkAndClear`\n", nil},
		{"untested requirement", "### TASK-CLEAR-2 Clear\n- untested: no test yet.\n", nil},
		{"missing test", "### TASK-LAUNCH-1 Launch\n- `tasks.TestGone`\n", []string{"requirement TASK-LAUNCH-1: test tasks.TestGone: no func TestGone"}},
		{"missing package", "### FORK-PIPE-3 Tiers\n- `nowhere.TestX`\n", []string{"requirement FORK-PIPE-3: test nowhere.TestX: no package directory nowhere"}},
		{"function of a non-test file", "### TASK-LAUNCH-1 Launch\n- `tasks.TestNotATestFile`\n", []string{"no func TestNotATestFile"}},
		{"not a test function", "### TASK-LAUNCH-1 Launch\n- `tasks.TestHelper`\n", []string{"no func TestHelper"}},
		{"missing subtest", "### TASK-LAUNCH-1 Launch\n- `tasks.TestLaunch/no_such_case`\n", []string{`no subtest named "no_such_case" in TestLaunch`}},
		{"missing suite subtest", "### TASK-LAUNCH-1 Launch\n- `store.TestConformance/Nothing`\n", []string{`no subtest named "Nothing"`}},
		{"duplicate ID", "### TASK-LAUNCH-1 A\n- `tasks.TestLaunch`\n### TASK-LAUNCH-1 B\n- `tasks.TestLaunch`\n", []string{"TASK-LAUNCH-1 is a duplicate of line 1"}},
		{"no ID", "### Launch returns at once\n- `tasks.TestLaunch`\n", []string{`requirement "Launch returns at once" has no ID`, "outside any requirement"}},
		{"ID without a number", "### TASK-LAUNCH Launch\n- untested\n", []string{"has no ID", "untested mark outside any requirement"}},
		{"neither tested nor marked", "### TASK-LIST-4 List\nText only.\n", []string{"requirement TASK-LIST-4 names no test and is not marked untested"}},
		{"tested and marked", "### TASK-LIST-4 List\n- `tasks.TestLaunch`\n- untested\n", []string{"names tests and is marked untested"}},
		{"reference outside a requirement", "# Tasks\n- `tasks.TestLaunch`\n### TASK-LIST-4 List\n- untested\n", []string{"test tasks.TestLaunch is outside any requirement"}},
		{"a section ends the requirement", "### TASK-LIST-4 List\n- untested\n## Next\n- `tasks.TestLaunch`\n", []string{"outside any requirement"}},
		{"malformed reference", "### TASK-LIST-4 List\n- `tasks.TestLaunch extra`\n", []string{"malformed test reference", "names no test"}},
		{"fenced code is not read", "### TASK-LIST-4 List\n- untested\n```\n### not a requirement\n- `tasks.TestGone`\n```\n", nil},
		{"empty page", "# Requirements\n", []string{"no requirements found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := Check(root, strings.NewReader(tt.page))
			if len(tt.want) == 0 {
				if err := errors.Join(errs...); err != nil {
					t.Fatalf("errors:\n%v", err)
				}
				return
			}
			if len(errs) != len(tt.want) {
				t.Fatalf("%d errors, want %d:\n%v", len(errs), len(tt.want), errors.Join(errs...))
			}
			for i, want := range tt.want {
				if !strings.Contains(errs[i].Error(), want) {
					t.Errorf("error %q, want it to say %q", errs[i], want)
				}
			}
		})
	}
}

func TestParse(t *testing.T) {
	page := "# R\n\n### FORK-HIST-2 — Replay walks back to a clear\nText.\n\n- `sqlite.TestConformance/HistoryWalkthrough/grandchild_sees_the_grandparent's_first_question`\n- `llm/offline.TestForkInheritsHistory`\n- `docs/requirements.md` is prose\n"
	reqs, errs := Parse(strings.NewReader(page))
	if len(errs) != 0 || len(reqs) != 1 {
		t.Fatalf("Parse = %+v, %v", reqs, errs)
	}
	r := reqs[0]
	if r.ID != "FORK-HIST-2" || r.Title != "Replay walks back to a clear" || r.Line != 3 || len(r.Tests) != 2 {
		t.Fatalf("requirement = %+v", r)
	}
	if a := r.Tests[0]; a.Dir != "sqlite" || a.Func != "TestConformance" || len(a.Subtests) != 2 || a.Subtests[1] != "grandchild_sees_the_grandparent's_first_question" {
		t.Errorf("first reference = %+v", a)
	}
	if b := r.Tests[1]; b.Dir != "llm/offline" || b.Func != "TestForkInheritsHistory" || b.Subtests != nil {
		t.Errorf("second reference = %+v", b)
	}
}
