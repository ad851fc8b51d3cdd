package agents

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/golden"

	"github.com/google/go-cmp/cmp"

	"github.com/superagents/superagents/internal/tools"
	"github.com/superagents/superagents/sandbox"
)

func TestBuiltins(t *testing.T) {
	builtins, err := Builtins()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Profile{}
	for _, p := range builtins {
		byName[p.Name] = p
		if p.Source.Kind != Builtin || p.Description == "" || len(p.Prompt) < 200 {
			t.Errorf("built-in %s is incomplete: %+v", p.Name, p)
		}
	}
	if diff := cmp.Diff([]string{"explore", "general"}, names(builtins)); diff != "" {
		t.Fatalf("built-ins (-want +got):\n%s", diff)
	}

	dir := t.TempDir()
	ws, err := tools.OpenWorkspace(dir)
	must(t, err)
	defer ws.Close()
	all, err := tools.Builtins(ws, tools.Options{})
	must(t, err)
	for _, tc := range []struct {
		profile string
		want    []string
	}{
		{"general", []string{"read", "write", "edit", "ls", "glob", "grep", "bash"}},
		{"explore", []string{"read", "ls", "glob", "grep"}},
	} {
		set, err := byName[tc.profile].SelectTools(all)
		must(t, err)
		if diff := cmp.Diff(tc.want, set.Names()); diff != "" {
			t.Errorf("%s tools (-want +got):\n%s", tc.profile, diff)
		}
		if tc.profile == "explore" && set.ReadOnly().Len() != set.Len() {
			t.Error("explore has a tool that writes")
		}
	}
}

func TestSystemPrompt(t *testing.T) {
	p := Profile{Prompt: "Base prompt."}
	if got := p.SystemPrompt([]string{"read", "bash"}); got != "Base prompt." {
		t.Errorf("without task tools: %q", got)
	}
	got := p.SystemPrompt([]string{"read", sa.TaskTool, sa.OutputTool})
	for _, want := range []string{"Base prompt.\n\n# Background tasks\n", sa.TaskTool, sa.OutputTool, "fork: true"} {
		if !strings.Contains(got, want) {
			t.Errorf("prompt lacks %q:\n%s", want, got)
		}
	}
	for _, absent := range []string{sa.ListTool, sa.CancelTool} {
		if strings.Contains(got, absent) {
			t.Errorf("prompt names %s, which the agent does not have", absent)
		}
	}
	if got := p.SystemPrompt([]string{sa.OutputTool}); got != "Base prompt." {
		t.Errorf("output tool alone adds the section: %q", got)
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		file string
		want Profile
	}{
		{"everything", "---\nname: reviewer\ndescription: Reviews diffs.\nmodel: anthropic/claude-sonnet-4-5\ntools: [read, grep, superagents_*]\nmax_steps: 30\n---\n\nYou review code.\n\nBe brief.\n",
			Profile{Name: "reviewer", Description: "Reviews diffs.", Model: "anthropic/claude-sonnet-4-5", Tools: []string{"read", "grep", "superagents_*"}, MaxSteps: 30, Prompt: "You review code.\n\nBe brief."}},
		{"name from the file name, tools as a string", "---\ndescription: Writes docs.\ntools: read, write , glob\n---\nDocs.",
			Profile{Name: "file", Description: "Writes docs.", Tools: []string{"read", "write", "glob"}, Prompt: "Docs."}},
		{"no tools key: all tools", "---\ndescription: d\n---\np", Profile{Name: "file", Description: "d", Prompt: "p"}},
		{"empty tools list: none", "---\ndescription: d\ntools: []\n---\np", Profile{Name: "file", Description: "d", Tools: []string{}, Prompt: "p"}},
		{"block list and folded description", "---\ndescription: >\n  Two\n  lines.\ntools:\n  - read\n  - ls\n---\np",
			Profile{Name: "file", Description: "Two lines.", Tools: []string{"read", "ls"}, Prompt: "p"}},
		{"CRLF and a byte order mark", "\uFEFF---\r\nname: win\r\ndescription: d\r\n---\r\nline 1\r\nline 2\r\n",
			Profile{Name: "win", Description: "d", Prompt: "line 1\nline 2"}},
		{"a --- inside the body", "---\ndescription: d\n---\nabove\n---\nbelow", Profile{Name: "file", Description: "d", Prompt: "above\n---\nbelow"}},
		{"a read-only sandbox", "---\ndescription: d\nsandbox: read-only\n---\np", Profile{Name: "file", Description: "d", Sandbox: sandbox.ReadOnly, Prompt: "p"}},
		{"worktree isolation", "---\ndescription: d\nisolation: worktree\n---\np", Profile{Name: "file", Description: "d", Isolation: "worktree", Prompt: "p"}},
		{"no isolation", "---\ndescription: d\nisolation: none\n---\np", Profile{Name: "file", Description: "d", Prompt: "p"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("dir/file.md", []byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string // every problem, as path:line: message prefixes
	}{
		{"no front matter", "You are an agent.\n", []string{"a.md:1: the file must start with YAML front matter"}},
		{"empty file", "", []string{"a.md:1: the file must start with YAML front matter"}},
		{"never closed", "---\nname: a\ndescription: d\n", []string{"a.md:1: the front matter opened here is never closed"}},
		{"unknown key", "---\nname: a\ndescription: d\ncolour: blue\n---\np",
			[]string{`a.md:4: unknown key "colour"; the keys are name, description, model, tools, max_steps`}},
		{"unclosed list", "---\nname: a\ndescription: d\ntools: [read\n---\np", []string{"a.md:4: front matter is not valid YAML: did not find expected ',' or ']'"}},
		{"list item in a mapping", "---\nname: a\ndescription: d\n- x\n---\np", []string{"a.md:2: front matter is not valid YAML: did not find expected key"}},
		{"unterminated string", "---\nname: a\ndescription: \"d\n---\np", []string{"a.md:3: front matter is not valid YAML: found unexpected end of stream"}},
		{"bad indentation", "---\nname: a\n  description: d\n---\np", []string{"a.md:3: front matter is not valid YAML: mapping values are not allowed in this context"}},
		{"tab indentation", "---\nname: a\ndescription:\n\t- d\n---\np", []string{"a.md:4: front matter is not valid YAML: found character that cannot start any token"}},
		{"several problems", "---\nname: Bad Name\ndescription: d\nmax_steps: many\nextra: 1\n---\np", []string{
			`a.md:2: name "Bad Name": use 1 to 64 lowercase letters`,
			"a.md:4: max_steps must be a whole number",
			`a.md:5: unknown key "extra"`,
		}},
		{"negative max_steps", "---\ndescription: d\nmax_steps: -2\n---\np", []string{"a.md:3: max_steps must be a whole number, 0 or more"}},
		{"unknown sandbox mode", "---\ndescription: d\n\nsandbox: strict\n---\np", []string{`a.md:4: sandbox: unknown sandbox mode "strict" (want "workspace-write", "read-only" or "off")`}},
		{"sandbox as a list", "---\ndescription: d\nsandbox: [off]\n---\np", []string{"a.md:3: sandbox must be text"}},
		{"unknown isolation", "---\ndescription: d\nisolation: vm\n---\np", []string{`a.md:3: isolation: unknown isolation "vm" (want "worktree" or "none")`}},
		{"missing description", "---\nname: a\n---\np", []string{"a.md:1: the front matter has no description"}},
		{"empty description", "---\nname: a\ndescription: \"\"\n---\np", []string{"a.md:3: the description is empty"}},
		{"empty prompt", "---\ndescription: d\n---\n\n  \n", []string{"a.md:3: the system prompt is empty"}},
		{"duplicate key", "---\ndescription: d\ndescription: e\n---\np", []string{`a.md:3: "description" is given twice (first at line 2)`}},
		{"not a mapping", "---\n- a\n- b\n---\np", []string{"a.md:2: the front matter must be keys and values"}},
		{"empty front matter", "---\n---\np", []string{"a.md:1: the front matter is empty"}},
		{"bad tool pattern", "---\ndescription: d\ntools:\n  - read\n  - \"[x\"\n---\np", []string{`a.md:5: tools: tool pattern "[x": syntax error in pattern`}},
		{"tools without a value", "---\ndescription: d\ntools:\n---\np", []string{"a.md:3: tools has no value"}},
		{"tools as a mapping", "---\ndescription: d\ntools: {read: true}\n---\np", []string{"a.md:3: tools must be a list of tool names"}},
		{"name as a list", "---\nname: [a]\ndescription: d\n---\np", []string{"a.md:2: name must be text"}},
		{"model with spaces", "---\ndescription: d\nmodel: claude sonnet\n---\np", []string{`a.md:3: model "claude sonnet": a model is one word`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("a.md", []byte(tc.file))
			if err == nil {
				t.Fatal("no error")
			}
			problems := flatten(err)
			if len(problems) != len(tc.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(problems), len(tc.want), err)
			}
			for i, p := range problems {
				var fe *FileError
				if !errors.As(p, &fe) {
					t.Errorf("problem %d is %T, not a *FileError", i, p)
				}
				if !strings.HasPrefix(p.Error(), tc.want[i]) {
					t.Errorf("problem %d:\n got %s\nwant %s...", i, p, tc.want[i])
				}
			}
		})
	}
}

// writeProfiles writes files (name → content) into dir.
func writeProfiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	must(t, os.MkdirAll(dir, 0o755))
	for name, content := range files {
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
}

func profile(name, description string, extra ...string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n" + strings.Join(extra, "\n") + "\n---\nYou are " + name + ".\n"
}

// testDirs sets up a workspace and a home with project and user profiles.
func testDirs(t *testing.T) (workspace, home string, dirs Dirs) {
	root := t.TempDir()
	workspace, home = filepath.Join(root, "project"), filepath.Join(root, "home")
	dirs = Dirs{Project: ProjectDir(workspace), User: filepath.Join(home, ".config", "superagents", "agents")}
	writeProfiles(t, dirs.User, map[string]string{
		"general.md":  profile("general", "The user's own general agent.", "model: openai/gpt-4.1"),
		"reviewer.md": profile("reviewer", "Reviews changes (user version).", "tools: [read, grep]"),
		"notes.txt":   "not a profile",
		".draft.md":   "an editor's temporary file",
	})
	writeProfiles(t, dirs.Project, map[string]string{
		"reviewer.md": profile("reviewer", "Reviews changes against the project's style guide before they are merged, and explains every finding with a reference.", "tools: [read, grep, glob]", "max_steps: 40"),
		"docs.md":     profile("docs", "Writes documentation.", "model: anthropic/claude-sonnet-4-5", "tools: []"),
		"broken.md":   "---\nname: broken\ndescription: d\nmodle: x\n---\np\n",
		"nofront.md":  "just text\n",
		"dup.md":      profile("docs", "A second docs."),
	})
	must(t, os.Mkdir(filepath.Join(dirs.Project, "sub.md"), 0o755))
	return workspace, home, dirs
}

func TestLoadPrecedence(t *testing.T) {
	_, _, dirs := testDirs(t)
	c, problems := Load(dirs)
	if diff := cmp.Diff([]string{"docs", "explore", "general", "reviewer"}, c.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	tests := []struct {
		name      string
		source    Source
		overrides []Source
		check     func(Profile) bool
	}{
		{"explore", Source{Kind: Builtin}, nil, func(p Profile) bool { return len(p.Tools) == 4 }},
		{"general", Source{Kind: User, Path: filepath.Join(dirs.User, "general.md")}, []Source{{Kind: Builtin}},
			func(p Profile) bool { return p.Model == "openai/gpt-4.1" }},
		{"reviewer", Source{Kind: Project, Path: filepath.Join(dirs.Project, "reviewer.md")},
			[]Source{{Kind: User, Path: filepath.Join(dirs.User, "reviewer.md")}},
			func(p Profile) bool { return p.MaxSteps == 40 && len(p.Tools) == 3 }},
		{"docs", Source{Kind: Project, Path: filepath.Join(dirs.Project, "docs.md")}, nil,
			func(p Profile) bool { return p.Description == "Writes documentation." }},
	}
	for _, tc := range tests {
		p, ok := c.Get(tc.name)
		if !ok {
			t.Errorf("%s not loaded", tc.name)
			continue
		}
		if diff := cmp.Diff(tc.source, p.Source); diff != "" {
			t.Errorf("%s source (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tc.overrides, p.Overrides); diff != "" {
			t.Errorf("%s overrides (-want +got):\n%s", tc.name, diff)
		}
		if !tc.check(p) {
			t.Errorf("%s has the wrong content: %+v", tc.name, p)
		}
	}

	// The malformed files are reported with path and line; the rest loaded.
	var got []string
	for _, err := range problems {
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("%v is not a *FileError", err)
			continue
		}
		got = append(got, filepath.Base(fe.Path)+":"+itoa(fe.Line))
	}
	if diff := cmp.Diff([]string{"broken.md:4", "dup.md:1", "nofront.md:1"}, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s\n%v", diff, problems)
	}
}

func TestLoadWithoutDirectories(t *testing.T) {
	c, problems := Load(Dirs{Project: filepath.Join(t.TempDir(), "missing"), User: ""})
	if len(problems) != 0 {
		t.Errorf("problems: %v", problems)
	}
	if diff := cmp.Diff([]string{"explore", "general"}, c.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}

func TestLoadUnreadableDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	must(t, os.WriteFile(file, nil, 0o644))
	_, problems := Load(Dirs{User: file})
	if len(problems) != 1 || !strings.Contains(problems[0].Error(), "read user profile directory") {
		t.Errorf("problems: %v", problems)
	}
}

func TestRenderListGolden(t *testing.T) {
	workspace, home, dirs := testDirs(t)
	c, problems := Load(dirs)
	var b bytes.Buffer
	must(t, RenderList(&b, c.List(), problems, RenderOptions{Workspace: workspace, Home: home}))
	golden.Check(t, "list.golden", b.Bytes())
}

func TestUserDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, tc := range []struct{ xdg, want string }{
		{"", filepath.Join(home, ".config", "superagents", "agents")},
		{"/etc/xdg-config", "/etc/xdg-config/superagents/agents"},
		{"relative/dir", filepath.Join(home, ".config", "superagents", "agents")},
	} {
		t.Setenv("XDG_CONFIG_HOME", tc.xdg)
		got, err := UserDir()
		if err != nil || got != tc.want {
			t.Errorf("XDG_CONFIG_HOME=%q: UserDir() = %q, %v; want %q", tc.xdg, got, err, tc.want)
		}
	}
	if got := DefaultDirs("/ws"); got.Project != "/ws/.superagents/agents" {
		t.Errorf("DefaultDirs project = %q", got.Project)
	}
}

// FuzzParse: any file gets a profile or errors that each name the file and
// a line inside it; never a panic. A parsed profile is valid.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"---\nname: a\ndescription: d\ntools: [read, \"superagents_*\"]\nmax_steps: 3\n---\nprompt\n",
		"---\ndescription: d\ntools: read, grep\n---\np",
		"---\nname: [\n---\np", "---\n: :\n---\n", "---\n&a [*a]\n---\n", "\uFEFF---\r\ndescription: x\r\n---\r\np",
		"---\ndescription: |\n  multi\n  line\n---\n\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("f.md", data)
		if err != nil {
			lines := bytes.Count(data, []byte("\n")) + 1
			for _, problem := range flatten(err) {
				var fe *FileError
				if !errors.As(problem, &fe) || fe.Path != "f.md" {
					t.Fatalf("problem without the file: %v", problem)
				}
				if fe.Line < 0 || fe.Line > lines {
					t.Fatalf("line %d is outside the file's %d lines: %v", fe.Line, lines, problem)
				}
			}
			return
		}
		if !namePattern.MatchString(p.Name) || p.Description == "" || p.Prompt == "" || p.MaxSteps < 0 {
			t.Fatalf("invalid profile accepted: %+v", p)
		}
		if err := tools.ValidateToolPatterns(p.Tools); err != nil {
			t.Fatalf("bad tool pattern accepted: %v", err)
		}
	})
}

func names(ps []Profile) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
