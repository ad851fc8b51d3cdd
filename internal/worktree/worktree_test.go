package worktree_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/superagents/superagents/internal/worktree"
)

// run runs a command in dir and fails the test if it fails.
func run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newRepo makes a repository with one commit holding a.txt.
func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "git", "init", "--quiet", "--initial-branch=main")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "git", "add", "a.txt")
	run(t, dir, "git", "commit", "--quiet", "-m", "first")
	return dir
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCreateErrors(t *testing.T) {
	ctx := context.Background()
	empty := t.TempDir()
	run(t, empty, "git", "init", "--quiet")
	tests := []struct {
		name string
		dir  string
		want string
	}{
		{"not a repository", t.TempDir(), "is not inside a git repository"},
		{"no commit", empty, "has no commit yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := worktree.Create(ctx, tt.dir, filepath.Join(t.TempDir(), "wt"), "superagents/x")
			if !errors.Is(err, worktree.ErrNotRepository) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrNotRepository saying %q", err, tt.want)
			}
		})
	}
}

func TestChangesAndRelease(t *testing.T) {
	tests := []struct {
		name     string
		change   func(t *testing.T, wt string)
		stat     string // in the diff stat; "" for none
		commits  int
		wantKept bool
	}{
		{"nothing", func(*testing.T, string) {}, "", 0, false},
		{"modified", func(t *testing.T, wt string) { write(t, filepath.Join(wt, "a.txt"), "two\n") }, "a.txt", 0, true},
		{"untracked", func(t *testing.T, wt string) { write(t, filepath.Join(wt, "new.txt"), "new\n") }, "new.txt", 0, true},
		{"committed", func(t *testing.T, wt string) {
			write(t, filepath.Join(wt, "b.txt"), "b\n")
			run(t, wt, "git", "add", "b.txt")
			run(t, wt, "git", "commit", "--quiet", "-m", "b")
		}, "b.txt", 1, true},
		{"committed and reverted", func(t *testing.T, wt string) {
			write(t, filepath.Join(wt, "a.txt"), "two\n")
			run(t, wt, "git", "commit", "--quiet", "-am", "two")
			write(t, filepath.Join(wt, "a.txt"), "one\n")
			run(t, wt, "git", "commit", "--quiet", "-am", "one")
		}, "", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			repo := newRepo(t)
			tree, err := worktree.Create(ctx, repo, filepath.Join(t.TempDir(), "wts", "wt"), "superagents/t1")
			if err != nil {
				t.Fatal(err)
			}
			tt.change(t, tree.Path)
			c, err := tree.Changes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if c.Commits != tt.commits || (tt.stat == "") != (c.Stat == "") || !strings.Contains(c.Stat, tt.stat) {
				t.Fatalf("changes = %+v, want %d commits and a stat naming %q", c, tt.commits, tt.stat)
			}
			// Reading the changes stages nothing in the worktree itself.
			if tt.name == "untracked" {
				if st := run(t, tree.Path, "git", "status", "--porcelain"); st != "?? new.txt" {
					t.Fatalf("status after Changes = %q, want the file still untracked", st)
				}
			}
			kept, err := tree.Release(ctx, "work in progress")
			if err != nil {
				t.Fatal(err)
			}
			if kept != tt.wantKept {
				t.Fatalf("kept = %v, want %v", kept, tt.wantKept)
			}
			if _, err := os.Stat(tree.Path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("worktree directory still there: %v", err)
			}
			branches := run(t, repo, "git", "branch", "--list", tree.Branch)
			if (branches != "") != tt.wantKept {
				t.Fatalf("branch listing %q, want kept=%v", branches, tt.wantKept)
			}
			if tt.wantKept && tt.stat != "" {
				// What was there is on the branch.
				files := run(t, repo, "git", "diff", "--name-only", tree.Base, tree.Branch)
				if !strings.Contains(files, tt.stat) {
					t.Fatalf("branch changes %q, want %s", files, tt.stat)
				}
			}
			if wts := run(t, repo, "git", "worktree", "list"); strings.Contains(wts, tree.Path) {
				t.Fatalf("git still lists the worktree:\n%s", wts)
			}
			if st := run(t, repo, "git", "status", "--porcelain"); st != "" {
				t.Fatalf("the main checkout changed: %q", st)
			}
		})
	}
}

func TestEnsureRestores(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	tree, err := worktree.Create(ctx, repo, filepath.Join(t.TempDir(), "wt"), "superagents/t2")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tree.Path, "kept.txt"), "kept\n")
	if kept, err := tree.Release(ctx, "wip"); err != nil || !kept {
		t.Fatalf("Release = %v, %v", kept, err)
	}
	if err := tree.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(tree.Path, "kept.txt")); err != nil || string(b) != "kept\n" {
		t.Fatalf("restored worktree lacks the branch's file: %q, %v", b, err)
	}
	if head := run(t, tree.Path, "git", "rev-parse", "--abbrev-ref", "HEAD"); head != tree.Branch {
		t.Fatalf("restored worktree is on %q, want %s", head, tree.Branch)
	}
	// A worktree whose branch went too starts again from the base.
	if err := tree.Discard(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tree.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	if head := run(t, tree.Path, "git", "rev-parse", "HEAD"); head != tree.Base {
		t.Fatalf("worktree made again at %s, want the base %s", head, tree.Base)
	}
	if err := tree.Ensure(ctx); err != nil { // there already: nothing to do
		t.Fatal(err)
	}
}

// BenchmarkWorktree measures, on a copy of this repository (a local
// clone: the benchmark leaves the real one alone), what a task with a
// worktree adds: making the worktree at launch and removing it when the
// task changed nothing, and reading what it changed as it ends.
func BenchmarkWorktree(b *testing.B) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		b.Skip("not run inside a git repository")
	}
	repo := filepath.Join(b.TempDir(), "repo")
	run(b, ".", "git", "clone", "--quiet", strings.TrimSpace(string(top)), repo)
	ctx := context.Background()
	dir := b.TempDir()
	b.Run("create+remove", func(b *testing.B) {
		for b.Loop() {
			tree, err := worktree.Create(ctx, repo, filepath.Join(dir, "wt"), "superagents/bench")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tree.Release(ctx, "wip"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("changes", func(b *testing.B) {
		tree, err := worktree.Create(ctx, repo, filepath.Join(dir, "wt"), "superagents/bench")
		if err != nil {
			b.Fatal(err)
		}
		defer tree.Discard(ctx)
		write(b, filepath.Join(tree.Path, "README.md"), "changed\n")
		write(b, filepath.Join(tree.Path, "new.txt"), "new\n")
		for b.Loop() {
			c, err := tree.Changes(ctx)
			if err != nil || c.None() {
				b.Fatalf("changes = %+v, %v", c, err)
			}
		}
	})
}

// marker is a script at dir/NAME that creates dir/NAME.ran when run, and
// the path of that file.
func marker(t *testing.T, dir, name string) (script, ran string) {
	t.Helper()
	script, ran = filepath.Join(dir, name), filepath.Join(dir, name+".ran")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntouch '"+ran+"'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, ran
}

func notRun(t *testing.T, ran, when string) {
	t.Helper()
	if _, err := os.Stat(ran); err == nil {
		t.Fatalf("%s ran a program the repository's configuration named", when)
	}
}

// A command in the worktree can write its .git file and its own git
// directory (the sandbox lets it, so that it can commit). What it writes
// there must not lead superagents' own git commands, which run outside
// the sandbox, to another git directory and the programs its
// configuration names.
func TestTamperedGitDir(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, wt, fake string)
	}{
		{".git file", func(t *testing.T, wt, fake string) {
			write(t, filepath.Join(wt, ".git"), "gitdir: "+fake+"\n")
		}},
		{"commondir", func(t *testing.T, wt, fake string) {
			own := run(t, wt, "git", "rev-parse", "--path-format=absolute", "--git-dir")
			write(t, filepath.Join(own, "commondir"), fake+"\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			repo := newRepo(t)
			tree, err := worktree.Create(ctx, repo, filepath.Join(t.TempDir(), "wt"), "superagents/t3")
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(tree.Path, "a.txt"), "changed\n")
			// What a command could make: a copy of the repository (so
			// that git finds the commits it looks for) whose
			// configuration runs a program of its choosing.
			tmp := t.TempDir()
			fake := filepath.Join(tmp, "fake.git")
			run(t, tmp, "git", "clone", "--quiet", "--bare", repo, fake)
			script, ran := marker(t, tmp, "fsmonitor")
			hooks := filepath.Join(tmp, "hooks")
			if err := os.Mkdir(hooks, 0o755); err != nil {
				t.Fatal(err)
			}
			marker(t, hooks, "post-commit")
			run(t, fake, "git", "config", "core.bare", "false")
			run(t, fake, "git", "config", "core.fsmonitor", script)
			run(t, fake, "git", "config", "core.hooksPath", hooks)
			own := run(t, tree.Path, "git", "rev-parse", "--path-format=absolute", "--git-dir")
			index, err := os.ReadFile(filepath.Join(own, "index"))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(fake, "index"), string(index))
			tt.tamper(t, tree.Path, fake)

			c, err := tree.Changes(ctx)
			notRun(t, ran, "Changes")
			if err == nil && (c.Commits != 0 || !strings.Contains(c.Stat, "a.txt")) {
				t.Fatalf("changes = %+v, want the worktree's own (a.txt changed)", c)
			}
			if err == nil {
				// The worktree points at the repository again, for the
				// user's own git commands there.
				if got, want := run(t, tree.Path, "git", "rev-parse", "--path-format=absolute", "--git-common-dir"),
					run(t, repo, "git", "rev-parse", "--path-format=absolute", "--git-common-dir"); got != want {
					t.Fatalf("the worktree's repository is %s after Changes, want %s", got, want)
				}
				run(t, tree.Path, "git", "status")
				notRun(t, ran, "git status in the worktree after Changes")
			}

			// A task launched from this one's worktree starts from it, in
			// the same repository.
			tt.tamper(t, tree.Path, fake)
			sub, err := worktree.CreateFrom(ctx, tree, filepath.Join(t.TempDir(), "sub"), "superagents/t3-sub")
			notRun(t, ran, "CreateFrom")
			if err == nil {
				if sub.Repo != repo || sub.Base != tree.Base {
					t.Fatalf("CreateFrom = %+v, want a worktree of %s from %s", sub, repo, tree.Base)
				}
				if wts := run(t, repo, "git", "worktree", "list"); !strings.Contains(wts, sub.Path) {
					t.Fatalf("the repository does not list the new worktree:\n%s", wts)
				}
			}

			tt.tamper(t, tree.Path, fake)
			kept, err := tree.Release(ctx, "work in progress")
			notRun(t, ran, "Release")
			notRun(t, filepath.Join(hooks, "post-commit.ran"), "Release")
			if err != nil {
				t.Logf("Release refused: %v", err)
				return
			}
			if !kept {
				t.Fatal("Release dropped the worktree's change")
			}
			if got := run(t, repo, "git", "show", tree.Branch+":a.txt"); got != "changed" {
				t.Fatalf("the branch in the repository holds a.txt = %q, want the worktree's change", got)
			}
			if _, err := os.Stat(tree.Path); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("worktree directory still there: %v", err)
			}
		})
	}
}

// The repository's hooks are the user's, for the user's own git
// commands: superagents' commands run none of them.
func TestHooksNotRun(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	hooks := filepath.Join(repo, ".git", "hooks")
	_, checkout := marker(t, hooks, "post-checkout")
	_, commit := marker(t, hooks, "post-commit")
	tree, err := worktree.Create(ctx, repo, filepath.Join(t.TempDir(), "wt"), "superagents/t4")
	if err != nil {
		t.Fatal(err)
	}
	notRun(t, checkout, "Create")
	write(t, filepath.Join(tree.Path, "a.txt"), "changed\n")
	if kept, err := tree.Release(ctx, "wip"); err != nil || !kept {
		t.Fatalf("Release = %v, %v", kept, err)
	}
	notRun(t, commit, "Release")
	if err := tree.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	notRun(t, checkout, "Ensure")
}
