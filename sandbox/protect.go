package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// protectedNames are the paths in a workspace that commands and the file
// tools may not write, even in workspace-write mode: each names programs
// that something outside the sandbox runs later, or where the user's
// keys go, so that writing one would be a way out of the sandbox.
//
//   - .superagents: the project's configuration (in a trusted project its
//     providers, keys and MCP servers count) and its agent profiles;
//   - .mcp.json: the MCP servers superagents starts in a trusted project;
//   - .git/config, .git/hooks and .git/commondir (which would name another
//     repository's configuration): what the user's own git runs (hooks,
//     core.fsmonitor, core.sshCommand, ...) at the next git status; and
//     .git itself where it is a file (a worktree's pointer to its git
//     directory), which may not be made to point elsewhere.
//
// A person changes them; an agent asks the person to. A workspace that
// is not a repository yet is not protected from becoming one: a command
// may run git init, and so write the configuration of the repository it
// makes.
var protectedNames = []string{".superagents", ".mcp.json", ".git/config", ".git/hooks", ".git/commondir"}

// gitName is the repository's directory, or a worktree's file that
// points to it.
const gitName = ".git"

// refusedSuffix is added to a protected path a command created, which is
// moved aside rather than deleted: nothing is lost, and nothing reads it.
const refusedSuffix = ".refused-by-sandbox"

// protectedPaths are the workspace's protected paths, absolute, in the
// order of protectedNames (a path may not exist).
func protectedPaths(workspace string) []string {
	paths := make([]string, len(protectedNames))
	for i, name := range protectedNames {
		paths[i] = filepath.Join(workspace, filepath.FromSlash(name))
	}
	return paths
}

// ProtectedRefusal returns why the file tools may not write path (an
// absolute path inside the workspace), for the model, or "" when they
// may. Symbolic links on the way are followed, so that a link to .git
// does not lead into its hooks.
func (s *Sandbox) ProtectedRefusal(path string) string {
	if s.policy.Mode == Off || len(s.protected) == 0 {
		return ""
	}
	// Compared without case: on macOS .MCP.json is .mcp.json.
	resolved := resolveExisting(path)
	git := filepath.Join(s.policy.Workspace, gitName)
	for _, candidate := range []string{filepath.Clean(path), resolved} {
		if strings.EqualFold(candidate, git) || strings.EqualFold(candidate, realPath(git)) {
			return fmt.Sprintf("%s is protected: agents may not write %s, which tells git where the repository is. Do not try to get around it: tell the user what to change there", candidate, gitName)
		}
	}
	for i, p := range s.protected {
		for _, candidate := range []string{filepath.Clean(path), resolved} {
			if withinFold(candidate, p) || withinFold(candidate, realPath(p)) {
				return fmt.Sprintf("%s is protected: agents may not change %s, which %s. Do not try to get around it: tell the user what to change there",
					candidate, protectedNames[i], protectedWhy(protectedNames[i]))
			}
		}
	}
	return ""
}

// protectedWhy says what a protected path holds, for a refusal.
func protectedWhy(name string) string {
	switch name {
	case ".superagents":
		return "holds the project's superagents configuration and agent profiles"
	case ".mcp.json":
		return "names the MCP servers superagents starts"
	default:
		return "names programs git runs"
	}
}

// resolveExisting is path with the symbolic links of its longest existing
// part resolved, and the rest joined as given.
func resolveExisting(path string) string {
	path = filepath.Clean(path)
	rest := ""
	for dir := path; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest)
		}
		if dir == filepath.Dir(dir) {
			return path
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// Guard notes which protected paths are absent before a command runs;
// Restore, after it ended, moves aside those it created (every process a
// command started has ended with it where commands are isolated). Where
// they exist, the sandbox keeps protected paths read-only itself.
type Guard struct {
	absent []string
	// repo: the workspace was a repository (its .git existed), whose git
	// files are then protected.
	repo bool
	// links are the protected paths that were symbolic links, and their
	// targets: a link is not kept read-only, so it is put back.
	links map[string]string
}

// Guard returns the guard of a command about to run (nil when nothing is
// protected: Restore on nil does nothing).
func (s *Sandbox) Guard() *Guard {
	if s.policy.Mode != WorkspaceWrite || len(s.protected) == 0 {
		return nil
	}
	g := &Guard{links: map[string]string{}}
	if _, err := os.Lstat(filepath.Join(s.policy.Workspace, gitName)); err == nil {
		g.repo = true
	}
	for _, p := range s.protected {
		info, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			g.absent = append(g.absent, p)
		case err == nil && info.Mode()&fs.ModeSymlink != 0:
			if target, err := os.Readlink(p); err == nil {
				g.links[p] = target
			}
		}
	}
	return g
}

// Restore moves aside each protected path the command created and returns
// a note for its output ("" when it created none).
func (g *Guard) Restore() string {
	if g == nil {
		return ""
	}
	var moved, failed []string
	moveAside := func(p string) bool {
		if err := os.Rename(p, asideName(p)); err != nil {
			failed = append(failed, fmt.Sprintf("%s (%v)", p, err))
			return false
		}
		moved = append(moved, p)
		return true
	}
	for _, p := range g.absent {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		// The git files matter only in a repository the command did not
		// make itself (git init writes them).
		if !g.repo && filepath.Base(filepath.Dir(p)) == gitName {
			continue
		}
		moveAside(p)
	}
	for _, p := range slices.Sorted(maps.Keys(g.links)) {
		if target, err := os.Readlink(p); err == nil && target == g.links[p] {
			continue
		}
		if _, err := os.Lstat(p); err == nil && !moveAside(p) {
			continue
		}
		if err := os.Symlink(g.links[p], p); err != nil {
			failed = append(failed, fmt.Sprintf("%s (the link to %s not put back: %v)", p, g.links[p], err))
		}
	}
	var note []string
	if len(moved) > 0 {
		note = append(note, fmt.Sprintf("[sandbox: this command created or replaced %s, which agents may not write (it names programs run outside the sandbox, or where keys go); moved aside to the same name with %q. Tell the user if the project needs it.]",
			strings.Join(moved, ", "), refusedSuffix))
	}
	if len(failed) > 0 {
		note = append(note, "[sandbox: this command created "+strings.Join(failed, ", ")+", which agents may not write, and it could not be moved aside: tell the user.]")
	}
	return strings.Join(note, "\n")
}

// asideName is the name p is moved aside to: p with refusedSuffix, and a
// number when an earlier one is there.
func asideName(p string) string {
	name := p + refusedSuffix
	for n := 2; n < 1000; n++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
		name = fmt.Sprintf("%s%s.%d", p, refusedSuffix, n)
	}
	return name
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// withinFold is within, without case.
func withinFold(path, dir string) bool {
	return within(strings.ToLower(path), strings.ToLower(dir))
}
