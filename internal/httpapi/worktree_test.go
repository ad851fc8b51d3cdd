package httpapi_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tasks"
)

// TestLaunchInAWorktree: POST /v1/tasks takes superagents_task's
// isolation: a task launched with "worktree" shows its worktree and
// branch; an unknown isolation, or one the workspace cannot give (no
// repository), is refused with a reason.
func TestLaunchInAWorktree(t *testing.T) {
	h := newHarness(t)
	parent := h.session()
	launch := func(isolation string) map[string]any {
		return map[string]any{"session_id": parent.ID, "agent": "general", "description": "apart",
			"prompt": "quick: done", "isolation": isolation}
	}
	tests := []struct {
		name, isolation, wantErr, field string
	}{
		{"unknown isolation", "vm", `isolation "vm" is unknown`, "isolation"},
		{"not a repository", "worktree", "is not inside a git repository", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.request("POST", "/v1/tasks", launch(tt.isolation))
			var body struct {
				Error string `json:"error"`
				Field string `json:"field"`
			}
			r.decode(t, &body)
			if r.status != http.StatusBadRequest || !strings.Contains(body.Error, tt.wantErr) || body.Field != tt.field {
				t.Fatalf("= %d %+v, want 400 about %q in field %q", r.status, body, tt.wantErr, tt.field)
			}
		})
	}

	for _, args := range [][]string{{"init", "--quiet"}, {"add", "a.txt"}, {"commit", "--quiet", "-m", "first"}} {
		if args[0] == "add" {
			if err := os.WriteFile(filepath.Join(h.ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("git", append([]string{"-C", h.ws, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	var launched sa.Task
	h.ok(http.StatusCreated, "POST", "/v1/tasks", launch("worktree"), &launched)
	if launched.Worktree == nil || !strings.HasPrefix(launched.Worktree.Branch, tasks.BranchPrefix) || launched.Worktree.Path == "" {
		t.Fatalf("launched task's worktree = %+v", launched.Worktree)
	}
	// It changed nothing: its worktree is gone with it.
	ended := h.waitTask(launched.ID)
	if ended.Status != sa.TaskCompleted || ended.Worktree == nil || !ended.Worktree.Removed {
		t.Fatalf("ended %s with worktree %+v, want completed and its worktree removed", ended.Status, ended.Worktree)
	}
	if _, err := os.Stat(launched.Worktree.Path); err == nil {
		t.Fatalf("worktree %s is still there", launched.Worktree.Path)
	}
}
