package instructions_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/engine"
	"github.com/superagents/superagents/internal/golden"
	"github.com/superagents/superagents/internal/instructions"
	"github.com/superagents/superagents/internal/llm/llmtest"
	"github.com/superagents/superagents/internal/stacktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tree writes files (path → content; a path ending in / is a directory)
// under root.
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// repo is a repository tree: instructions at the root, a CLAUDE.md-only
// directory, and a workspace with both files (AGENTS.md wins), plus files
// that must not be read (above the root, in a sibling).
func repo(t *testing.T) (root, ws, user string) {
	top := t.TempDir()
	root, user = filepath.Join(top, "repo"), filepath.Join(top, "user")
	tree(t, top, map[string]string{
		"AGENTS.md":                   "ABOVE THE REPOSITORY: never read",
		"repo/.git/":                  "",
		"repo/AGENTS.md":              "Run go test before you commit.\n",
		"repo/services/CLAUDE.md":     "Services log with slog.\n",
		"repo/services/api/AGENTS.md": "The API speaks JSON only.\n",
		"repo/services/api/CLAUDE.md": "SHADOWED BY AGENTS.md: never read",
		"repo/docs/AGENTS.md":         "SIBLING: never read",
		"user/AGENTS.md":              "Answer in British English.\n",
		"user/CLAUDE.md":              "NOT A USER FILE NAME: never read",
	})
	return root, filepath.Join(root, "services", "api"), user
}

func TestFind(t *testing.T) {
	root, ws, user := repo(t)
	files, err := instructions.Find(ws, user)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(user, "AGENTS.md"),
		filepath.Join(root, "AGENTS.md"),
		filepath.Join(root, "services", "CLAUDE.md"),
		filepath.Join(ws, "AGENTS.md"),
	}
	if len(files) != len(want) {
		t.Fatalf("found %d files, want %v", len(files), want)
	}
	for i, f := range files {
		if f.Path != want[i] || f.Cut != 0 || strings.Contains(f.Text, "never read") {
			t.Errorf("file %d = %+v, want %s", i, f, want[i])
		}
	}
	// Rendered with the paths made stable for the golden file.
	out := strings.ReplaceAll(instructions.Render(files), filepath.Dir(root), "/TMP")
	golden.Check(t, "render.golden", []byte(out))
}

func TestNoRepository(t *testing.T) {
	ws := t.TempDir()
	tree(t, ws, map[string]string{"CLAUDE.md": "Only this."})
	files, err := instructions.Find(ws, "")
	if err != nil || len(files) != 1 || files[0].Text != "Only this." {
		t.Fatalf("files = %+v, %v", files, err)
	}
	if files, err := instructions.Find(t.TempDir(), ""); err != nil || len(files) != 0 || instructions.Render(files) != "" {
		t.Fatalf("empty workspace: %+v, %v", files, err)
	}
}

// TestCaps: a file over the cap is cut at a character boundary with a
// note, and the total cap serves the files nearest the workspace first.
func TestCaps(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("é", instructions.MaxFileBytes) // 2 bytes each
	tree(t, root, map[string]string{
		".git/":           "",
		"AGENTS.md":       big,
		"a/AGENTS.md":     big,
		"a/b/AGENTS.md":   big,
		"a/b/c/AGENTS.md": big,
	})
	files, err := instructions.Find(filepath.Join(root, "a", "b", "c"), "")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		total += len(f.Text)
		if !strings.HasPrefix(f.Path, root) || f.Cut == 0 || strings.ContainsRune(f.Text, '\uFFFD') {
			t.Errorf("%s: cut %d, valid text %v", f.Path, f.Cut, !strings.ContainsRune(f.Text, '\uFFFD'))
		}
	}
	if total > instructions.MaxTotalBytes {
		t.Fatalf("%d bytes in all, over the cap", total)
	}
	if len(files) != 4 || files[0].Path != filepath.Join(root, "AGENTS.md") || files[0].Text != "" || files[3].Text == "" {
		t.Fatalf("the root's file should be the one left out, with a note: %d files, first %+v", len(files), files[0].Path)
	}
	if out := instructions.Render(files); !strings.Contains(out, "bytes of AGENTS.md were cut") {
		t.Fatal("no note of the cut")
	}
}

// TestInstructionsReachTheModel: the request the model receives holds the
// instructions, through a real engine turn.
func TestInstructionsReachTheModel(t *testing.T) {
	_, ws, user := repo(t)
	text, err := instructions.Load(ws, user)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewAnthropic(t)
	srv.Push(llmtest.Reply{Text: "ok"})
	stack := stacktest.OpenWith(t, t.TempDir(), ws, stacktest.Config(t, ws, srv.BaseURL()), stacktest.Extras{Instructions: text})
	defer stack.Close()
	eng := stack.Engine
	sess, err := stack.Store.CreateSession(context.Background(), sa.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Run(context.Background(), sess.ID, engine.TurnOptions{}, engine.UserMessage("hi")); err != nil {
		t.Fatal(err)
	}
	var body struct {
		System json.RawMessage `json:"system"`
	}
	if err := srv.Requests()[0].Decode(&body); err != nil {
		t.Fatal(err)
	}
	system := string(body.System)
	order := []string{"Answer in British English.", "Run go test before you commit.", "Services log with slog.", "The API speaks JSON only."}
	last := -1
	for _, s := range order {
		i := strings.Index(system, s)
		if i < 0 || i < last {
			t.Fatalf("system prompt lacks %q or has it out of order:\n%s", s, system)
		}
		last = i
	}
	if strings.Contains(system, "never read") {
		t.Fatalf("system prompt holds a file it should not:\n%s", system)
	}
}

// TestBackgroundTasksGetInstructions: a task launched in the background
// works in the same workspace, and its model request holds the
// instructions too.
func TestBackgroundTasksGetInstructions(t *testing.T) {
	_, ws, user := repo(t)
	text, err := instructions.Load(ws, user)
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewAnthropic(t)
	var mu sync.Mutex
	var childSystem string
	srv.Handle(func(req llmtest.Request) llmtest.Reply {
		body := string(req.Body)
		switch {
		case strings.Contains(body, "Verify the endpoints"): // the task's own request
			mu.Lock()
			childSystem = body
			mu.Unlock()
			return llmtest.Reply{Text: "checked"}
		case func() bool { _, ok := req.LastToolResult(); return ok }():
			return llmtest.Reply{Text: "launched"}
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{stacktest.ToolCall(sa.TaskTool, map[string]any{
			"description": "verify the endpoints", "prompt": "Verify the endpoints", "agent": "general"})}}
	})
	stack := stacktest.OpenWith(t, t.TempDir(), ws, stacktest.Config(t, ws, srv.BaseURL()), stacktest.Extras{Instructions: text})
	defer stack.Close()
	sess, err := stack.Store.CreateSession(context.Background(), sa.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stack.Engine.Run(context.Background(), sess.ID, engine.TurnOptions{}, engine.UserMessage("Do it in the background.")); err != nil {
		t.Fatal(err)
	}
	list, err := stack.Store.ListTasks(context.Background(), sa.TaskFilter{})
	if err != nil || len(list) != 1 {
		t.Fatalf("tasks: %v, %v", list, err)
	}
	stack.WaitTask(t, list[0].ID)
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(childSystem, "The API speaks JSON only.") || !strings.Contains(childSystem, "Answer in British English.") {
		t.Fatalf("the task's request lacks the instructions:\n%s", childSystem)
	}
}
