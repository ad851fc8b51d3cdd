// Package worktree gives a task a git worktree of its own: a checkout of
// the workspace's repository on a branch of its own, so that tasks that run
// at once never write over each other or over the user's checkout. It runs
// the git command; git's own worktrees are what users review and merge.
package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ErrNotRepository: the directory is not inside a git repository (or its
// repository has no commit to start a worktree from).
var ErrNotRepository = errors.New("not a git repository")

// Tree is a worktree made for a task: where it is, its branch, the commit
// it started from and the repository (its main working tree) it belongs to.
type Tree struct {
	Repo   string
	Path   string
	Branch string
	Base   string
}

// Changes is what a worktree holds that its base does not.
type Changes struct {
	// Commits is how many commits its branch has beyond the base.
	Commits int
	// Stat is `git diff --stat` from the base to the worktree's files as
	// they are, uncommitted and untracked changes included; empty when
	// they are the base's.
	Stat string
}

// None reports whether the worktree holds nothing of its own.
func (c Changes) None() bool { return c.Commits == 0 && c.Stat == "" }

// Toplevel returns the main working tree of the repository that holds
// dir (a worktree's dir gives its repository's), or ErrNotRepository.
func Toplevel(ctx context.Context, dir string) (string, error) {
	common, err := git(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", fmt.Errorf("%w: %s is not inside a git repository, and a worktree needs one (run git init and commit, or launch without worktree isolation)", ErrNotRepository, dir)
	}
	if filepath.Base(common) != ".git" {
		// A bare repository, or one whose git directory is elsewhere.
		return git(ctx, dir, nil, "rev-parse", "--show-toplevel")
	}
	return filepath.Dir(common), nil
}

// DefaultDir is where worktrees go when no other directory is given:
// inside the repository's git directory, out of its working tree.
func DefaultDir(ctx context.Context, dir string) (string, error) {
	common, err := git(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", fmt.Errorf("%w: %s is not inside a git repository, and a worktree needs one (run git init and commit, or launch without worktree isolation)", ErrNotRepository, dir)
	}
	return filepath.Join(common, "superagents", "worktrees"), nil
}

// Create makes a new worktree at path, on a new branch, from the current
// HEAD of the repository that holds dir. path must not exist; its parent
// is created.
func Create(ctx context.Context, dir, path, branch string) (Tree, error) {
	top, err := Toplevel(ctx, dir)
	if err != nil {
		return Tree{}, err
	}
	base, err := git(ctx, dir, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return Tree{}, fmt.Errorf("%w: the repository %s has no commit yet, and a worktree starts from one (commit first, or launch without worktree isolation)", ErrNotRepository, top)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Tree{}, fmt.Errorf("create worktree: %w", err)
	}
	if _, err := git(ctx, top, nil, "worktree", "add", "--quiet", "-b", branch, path, base); err != nil {
		return Tree{}, fmt.Errorf("create worktree %s: %w", path, err)
	}
	return Tree{Repo: top, Path: path, Branch: branch, Base: base}, nil
}

// CreateFrom makes a new worktree at path, on a new branch, from the
// HEAD of the worktree from, in from's repository: Create for a worktree
// whose files (its .git file included) commands may have written, which
// reads its HEAD through the git directories its record names.
func CreateFrom(ctx context.Context, from Tree, path, branch string) (Tree, error) {
	d, err := from.dirs(ctx)
	if err != nil {
		return Tree{}, err
	}
	base, err := from.git(ctx, d, nil, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if err != nil {
		return Tree{}, fmt.Errorf("%w: the worktree %s has no commit to start from", ErrNotRepository, from.Path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return Tree{}, fmt.Errorf("create worktree: %w", err)
	}
	if _, err := git(ctx, from.Repo, nil, "worktree", "add", "--quiet", "-b", branch, path, base); err != nil {
		return Tree{}, fmt.Errorf("create worktree %s: %w", path, err)
	}
	return Tree{Repo: from.Repo, Path: path, Branch: branch, Base: base}, nil
}

// Exists reports whether the worktree's directory is there.
func (t Tree) Exists() bool {
	_, err := os.Lstat(filepath.Join(t.Path, ".git"))
	return err == nil
}

// Ensure makes sure the worktree is there, making it again if it was
// removed: on its branch when the branch is kept, else on a new branch
// from the base.
func (t Tree) Ensure(ctx context.Context) error {
	if t.Exists() {
		return nil
	}
	// A worktree whose directory went away is still registered until
	// pruned, and git refuses to add it again.
	if _, err := git(ctx, t.Repo, nil, "worktree", "prune"); err != nil {
		return fmt.Errorf("restore worktree %s: %w", t.Path, err)
	}
	if err := os.MkdirAll(filepath.Dir(t.Path), 0o755); err != nil {
		return fmt.Errorf("restore worktree: %w", err)
	}
	args := []string{"worktree", "add", "--quiet", t.Path, t.Branch}
	if !t.branchExists(ctx) {
		args = []string{"worktree", "add", "--quiet", "-b", t.Branch, t.Path, t.Base}
	}
	if _, err := git(ctx, t.Repo, nil, args...); err != nil {
		return fmt.Errorf("restore worktree %s: %w", t.Path, err)
	}
	return nil
}

func (t Tree) branchExists(ctx context.Context) bool {
	_, err := git(ctx, t.Repo, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+t.Branch)
	return err == nil
}

// GitDirs are the directories of the repository's git directory that git
// writes to as it commits in the worktree: the worktree's own, and the
// objects, refs and logs it shares with the repository (that exist). A
// sandbox that confines commands to the worktree lets them write there
// too, and nowhere else in the repository.
func (t Tree) GitDirs(ctx context.Context) ([]string, error) {
	d, err := t.dirs(ctx)
	if err != nil {
		return nil, err
	}
	dirs := []string{d.own}
	for _, name := range []string{"objects", "refs", "logs"} {
		if _, err := os.Stat(filepath.Join(d.common, name)); err == nil {
			dirs = append(dirs, filepath.Join(d.common, name))
		}
	}
	return dirs, nil
}

// gitDirs are a worktree's git directories: the repository's, which its
// worktrees share, and the worktree's own within it.
type gitDirs struct {
	common, own string
}

// dirs finds the worktree's git directories from its record, never from
// its .git file or its own git directory's commondir file: commands in
// the worktree may write those, and could name a git directory of their
// making, whose configuration names programs for git to run. The
// repository's comes from its main working tree; the worktree's own is
// the one there whose gitdir file names the worktree. A command can only
// write its own worktree's: one that names no worktree or another's is
// refused. The .git and commondir files are then made to point at them
// again if they do not: git reads commondir for branches even when told
// the repository's git directory, and the user's own git commands in the
// worktree read both.
func (t Tree) dirs(ctx context.Context) (gitDirs, error) {
	common, err := git(ctx, t.Repo, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return gitDirs{}, fmt.Errorf("git directory of %s: %w", t.Repo, err)
	}
	want := []string{filepath.Join(t.Path, ".git")}
	if real, err := filepath.EvalSymlinks(t.Path); err == nil {
		want = append(want, filepath.Join(real, ".git"))
	}
	root := filepath.Join(common, "worktrees")
	entries, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return gitDirs{}, fmt.Errorf("git directory of worktree %s: %w", t.Path, err)
	}
	var found []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		own := filepath.Join(root, e.Name())
		b, err := readSmall(filepath.Join(own, "gitdir"))
		if err != nil {
			continue
		}
		gitdir := strings.TrimRight(string(b), " \t\r\n")
		if !filepath.IsAbs(gitdir) { // git may write it relative
			gitdir = filepath.Join(own, gitdir)
		}
		if slices.Contains(want, filepath.Clean(gitdir)) {
			found = append(found, own)
		}
	}
	if len(found) == 0 {
		return gitDirs{}, fmt.Errorf("git directory of worktree %s: the repository %s has no worktree there", t.Path, t.Repo)
	}
	if len(found) > 1 {
		return gitDirs{}, fmt.Errorf("git directory of worktree %s: %s all claim it", t.Path, strings.Join(found, ", "))
	}
	d := gitDirs{common: common, own: found[0]}
	if err := t.repair(d); err != nil {
		return gitDirs{}, fmt.Errorf("git directory of worktree %s: %w", t.Path, err)
	}
	return d, nil
}

// repair writes the worktree's .git file (when there is one) and its own
// git directory's commondir file again when they do not point at its git
// directories, as git worktree add wrote them.
func (t Tree) repair(d gitDirs) error {
	dotgit := filepath.Join(t.Path, ".git")
	if _, err := os.Lstat(dotgit); err == nil && !pointsAt(dotgit, t.Path, "gitdir: ", d.own) {
		if err := rewrite(dotgit, "gitdir: "+d.own+"\n"); err != nil {
			return err
		}
	}
	commondir := filepath.Join(d.own, "commondir")
	if !pointsAt(commondir, d.own, "", d.common) {
		// The worktree's own is <common>/worktrees/<name>.
		return rewrite(commondir, "../..\n")
	}
	return nil
}

// pointsAt reports whether the file at path holds prefix and a path to
// want (relative to dir when it is relative).
func pointsAt(path, dir, prefix, want string) bool {
	b, err := readSmall(path)
	if err != nil {
		return false
	}
	to, ok := strings.CutPrefix(strings.TrimRight(string(b), " \t\r\n"), prefix)
	if !ok || to == "" {
		return false
	}
	if !filepath.IsAbs(to) {
		to = filepath.Join(dir, to)
	}
	to = filepath.Clean(to)
	if to == filepath.Clean(want) {
		return true
	}
	realTo, errTo := filepath.EvalSymlinks(to)
	realWant, errWant := filepath.EvalSymlinks(want)
	return errTo == nil && errWant == nil && realTo == realWant
}

// rewrite replaces what is at path (a file, a link, a directory) with a
// new file holding text: nothing is written through a link.
func rewrite(path, text string) error {
	if err := os.RemoveAll(path); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readSmall reads a small regular file (a path git wrote), and nothing
// else: no link, no pipe that would never end, no endless device.
func readSmall(path string) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 64<<10))
}

// openRegular opens path if it is a regular file, not a link to one.
func openRegular(path string) (*os.File, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if after, err := f.Stat(); err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, fmt.Errorf("%s changed as it was opened", path)
	}
	return f, nil
}

// git runs a git command on the worktree, with its git directories (see
// dirs) and working tree named, so that git does not look for them in
// its .git file.
func (t Tree) git(ctx context.Context, d gitDirs, env []string, args ...string) (string, error) {
	named := []string{"GIT_DIR=" + d.own, "GIT_COMMON_DIR=" + d.common, "GIT_WORK_TREE=" + t.Path}
	return git(ctx, t.Path, append(named, env...), args...)
}

// Changes reports what the worktree holds beyond its base. Uncommitted and
// untracked files are staged in a copy of the worktree's index, so the
// worktree itself is left as it is.
func (t Tree) Changes(ctx context.Context) (Changes, error) {
	d, err := t.dirs(ctx)
	if err != nil {
		return Changes{}, err
	}
	return t.changes(ctx, d)
}

func (t Tree) changes(ctx context.Context, d gitDirs) (Changes, error) {
	var c Changes
	count, err := t.git(ctx, d, nil, "rev-list", "--count", t.Base+"..HEAD")
	if err != nil {
		return c, fmt.Errorf("changes of worktree %s: %w", t.Path, err)
	}
	if c.Commits, err = strconv.Atoi(count); err != nil {
		return c, fmt.Errorf("changes of worktree %s: commit count %q: %w", t.Path, count, err)
	}
	index, err := t.indexCopy(d)
	if err != nil {
		return c, err
	}
	defer os.Remove(index)
	env := []string{"GIT_INDEX_FILE=" + index}
	if _, err := t.git(ctx, d, env, "add", "--all"); err != nil {
		return c, fmt.Errorf("changes of worktree %s: %w", t.Path, err)
	}
	if c.Stat, err = t.git(ctx, d, env, "diff", "--cached", "--stat", t.Base); err != nil {
		return c, fmt.Errorf("changes of worktree %s: %w", t.Path, err)
	}
	return c, nil
}

// indexCopy copies the worktree's index (which keeps what git knows of
// its files, so unchanged ones are not read again) to a temporary file.
func (t Tree) indexCopy(d gitDirs) (string, error) {
	tmp, err := os.CreateTemp("", "superagents-index-*")
	if err != nil {
		return "", fmt.Errorf("index of worktree %s: %w", t.Path, err)
	}
	defer tmp.Close()
	src, err := openRegular(filepath.Join(d.own, "index"))
	switch {
	case errors.Is(err, os.ErrNotExist): // no index yet: git starts one
		return tmp.Name(), nil
	case err != nil:
		os.Remove(tmp.Name())
		return "", fmt.Errorf("index of worktree %s: %w", t.Path, err)
	}
	defer src.Close()
	if _, err := io.Copy(tmp, src); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("index of worktree %s: %w", t.Path, err)
	}
	return tmp.Name(), nil
}

// Discard removes the worktree and its branch, whatever they hold.
func (t Tree) Discard(ctx context.Context) error {
	if err := t.removeTree(ctx); err != nil {
		return err
	}
	if t.branchExists(ctx) {
		if _, err := git(ctx, t.Repo, nil, "branch", "--quiet", "-D", t.Branch); err != nil {
			return fmt.Errorf("delete branch %s: %w", t.Branch, err)
		}
	}
	return nil
}

// Release removes the worktree and keeps its branch when it holds
// anything: uncommitted and untracked changes are first committed on it
// as a work-in-progress commit with message msg, so nothing is lost. A
// worktree that holds nothing is discarded with its branch. It reports
// whether the branch was kept.
func (t Tree) Release(ctx context.Context, msg string) (kept bool, err error) {
	if !t.Exists() {
		// Removed already (a task that changed nothing, or by hand): the
		// branch says whether anything is left.
		if err := t.removeTree(ctx); err != nil {
			return false, err
		}
		if !t.branchExists(ctx) {
			return false, nil
		}
		count, err := git(ctx, t.Repo, nil, "rev-list", "--count", t.Base+".."+t.Branch)
		if err != nil {
			return false, fmt.Errorf("release worktree %s: %w", t.Path, err)
		}
		if count != "0" {
			return true, nil
		}
		return false, t.Discard(ctx)
	}
	d, err := t.dirs(ctx)
	if err != nil {
		return false, err
	}
	c, err := t.changes(ctx, d)
	if err != nil {
		return false, err
	}
	if c.None() {
		return false, t.Discard(ctx)
	}
	if err := t.commitAll(ctx, d, msg); err != nil {
		return false, err
	}
	return true, t.removeTree(ctx)
}

// commitAll commits every change of the worktree, untracked files
// included, when there are any. Hooks and signing are skipped: this
// commit only keeps work that would otherwise be lost.
func (t Tree) commitAll(ctx context.Context, d gitDirs, msg string) error {
	status, err := t.git(ctx, d, nil, "status", "--porcelain")
	if err != nil {
		return fmt.Errorf("commit worktree %s: %w", t.Path, err)
	}
	if status == "" {
		return nil
	}
	if _, err := t.git(ctx, d, nil, "add", "--all"); err != nil {
		return fmt.Errorf("commit worktree %s: %w", t.Path, err)
	}
	args := []string{"-c", "commit.gpgsign=false"}
	// Someone's identity is needed; the user's when git has one.
	if name, _ := t.git(ctx, d, nil, "config", "user.name"); name == "" {
		args = append(args, "-c", "user.name=superagents")
	}
	if email, _ := t.git(ctx, d, nil, "config", "user.email"); email == "" {
		args = append(args, "-c", "user.email=superagents@localhost")
	}
	args = append(args, "commit", "--quiet", "--no-verify", "-m", msg)
	if _, err := t.git(ctx, d, nil, args...); err != nil {
		return fmt.Errorf("commit worktree %s: %w", t.Path, err)
	}
	return nil
}

// removeTree removes the worktree's directory and git's record of it.
func (t Tree) removeTree(ctx context.Context) error {
	if t.Exists() {
		// git removes a worktree whose .git file points back to its git
		// directory, and a command may have changed that file: dirs
		// puts it right.
		if _, err := t.dirs(ctx); err != nil {
			return fmt.Errorf("remove worktree %s: %w", t.Path, err)
		}
		if _, err := git(ctx, t.Repo, nil, "worktree", "remove", "--force", "--force", t.Path); err != nil {
			return fmt.Errorf("remove worktree %s: %w", t.Path, err)
		}
		return nil
	}
	if _, err := git(ctx, t.Repo, nil, "worktree", "prune"); err != nil {
		return fmt.Errorf("remove worktree %s: %w", t.Path, err)
	}
	return nil
}

// safe is the configuration every git command here runs with, whatever
// the repository's says: it runs no hook and no file system monitor, and
// keeps no untracked cache (which the monitor's answers feed). The hooks
// and configuration are the user's, for the user's own git commands.
var safe = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false"}

// git runs a git command in dir and returns its output, trimmed. The
// error carries what git said.
func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", slices.Concat([]string{"-C", dir}, safe, args)...)
	cmd.Env = append(gitEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			return "", fmt.Errorf("git %s: %w", args[0], err)
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	// Only the end is trimmed: a diff's --stat lines start with spaces.
	return strings.TrimRight(stdout.String(), " \n"), nil
}

// gitEnv is the process's environment without the variables that would
// point git at another repository or index than the one asked for (set
// when superagents itself runs from a git hook), and without prompts.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY", "GIT_PREFIX":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0")
}
