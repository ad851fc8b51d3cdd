package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

type globInput struct {
	Pattern string `json:"pattern" jsonschema:"The pattern, e.g. **/*.go or src/**/*_test.ts. * matches within one path segment, ** any number of segments, {a,b} alternatives, [abc] one character."`
	Path    string `json:"path,omitempty" jsonschema:"The directory the pattern is relative to: a path relative to the workspace, or an absolute path inside it. Default: the workspace itself."`
	// IncludeIgnored turns off the .gitignore files.
	IncludeIgnored bool `json:"include_ignored,omitempty" jsonschema:"Also match paths the workspace's .gitignore files ignore."`
}

const globDescription = `Find files in the workspace by name pattern (** matches any number of directories). Returns matching file paths relative to the workspace, sorted, at most 1000. The .git directory is skipped unless the pattern names it, and so are paths the workspace's .gitignore files ignore unless include_ignored is set. Use grep to search file contents.`

func newGlob(ws *Workspace) (Tool, error) {
	return New(Glob, globDescription, true, func(ctx context.Context, in globInput) (Result, error) {
		return globFiles(ctx, ws, in)
	})
}

func globFiles(ctx context.Context, ws *Workspace, in globInput) (Result, error) {
	if in.Pattern == "" {
		return Errorf("pattern is empty"), nil
	}
	base, pattern := doublestar.SplitPattern(strings.TrimPrefix(in.Pattern, "./"))
	if !path.IsAbs(base) {
		base = path.Join(in.Path, base)
	}
	dir, err := ws.Rel(base)
	if err != nil {
		return Errorf("%v", err), nil
	}
	if !doublestar.ValidatePattern(pattern) {
		return Errorf("pattern %q is malformed (check its brackets and braces)", in.Pattern), nil
	}
	skipGit := !strings.Contains(in.Pattern, ".git")
	// Without "**" a pattern of n segments matches nothing deeper.
	maxDepth := -1
	if !strings.Contains(pattern, "**") {
		maxDepth = strings.Count(pattern, "/") + 1
	}

	var out strings.Builder
	found := 0
	ig := ignorerFor(ws, dir, in.IncludeIgnored)
	err = walk(ctx, ws, dir, func(e entry) error {
		sub := relTo(dir, e.path)
		if ig.skip(e) {
			if e.d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.d.IsDir() {
			if skipGit && e.name == ".git" || maxDepth >= 0 && depth(sub) >= maxDepth {
				return fs.SkipDir
			}
			return nil
		}
		if doublestar.MatchUnvalidated(pattern, sub) {
			if found < MaxListEntries {
				out.WriteString(e.path + "\n")
			}
			found++
		}
		return nil
	})
	if err != nil {
		return walkFailure(dir, err)
	}
	if found == 0 {
		return Result{Output: fmt.Sprintf("no files match %s in %s", in.Pattern, dir) + ig.note()}, nil
	}
	if found > MaxListEntries {
		fmt.Fprintf(&out, "[%d of %d matching files shown; use a narrower pattern or path]\n", MaxListEntries, found)
	}
	return Result{Output: out.String()}, nil
}

// entry is a file or directory met by walk.
type entry struct {
	path   string      // relative to the workspace
	d      fs.DirEntry // what ReadDir said about it (symbolic links are not followed)
	parent *os.Root    // the directory holding it
	name   string      // its name in parent
}

// open opens the entry's file with a single openat from its directory.
func (e entry) open() (*os.File, error) { return e.parent.Open(e.name) }

// walk visits everything below dir (a workspace-relative path, or a
// single file) in lexical order, without following symbolic links.
// Returning fs.SkipDir for a directory skips its contents. Unreadable
// entries below dir are skipped; a cancelled ctx stops the walk.
//
// Each directory is opened once as an os.Root and its entries relative to
// it: resolving every path from the workspace's root again would cost a
// system call per path component.
func walk(ctx context.Context, ws *Workspace, dir string, visit func(entry) error) error {
	info, err := ws.Root().Stat(dir)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		err := visit(entry{path: dir, d: fs.FileInfoToDirEntry(info), parent: ws.Root(), name: dir})
		if errors.Is(err, fs.SkipDir) {
			return nil
		}
		return err
	}
	sub, err := ws.Root().OpenRoot(dir)
	if err != nil {
		return err
	}
	defer sub.Close()
	return walkDir(ctx, sub, dir, visit)
}

func walkDir(ctx context.Context, dir *os.Root, rel string, visit func(entry) error) error {
	f, err := dir.Open(".")
	if err != nil {
		return nil // unreadable: skip
	}
	entries, _ := f.ReadDir(-1) // keep what could be read
	f.Close()
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, d := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := entry{path: path.Join(rel, d.Name()), d: d, parent: dir, name: d.Name()}
		err := visit(e)
		if errors.Is(err, fs.SkipDir) {
			continue
		}
		if err != nil {
			return err
		}
		if d.IsDir() {
			sub, err := dir.OpenRoot(d.Name())
			if err != nil {
				continue // unreadable: skip
			}
			err = walkDir(ctx, sub, e.path, visit)
			sub.Close()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// walkFailure turns a walk's error into the call's outcome.
func walkFailure(dir string, err error) (Result, error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return Result{}, err
	}
	return Errorf("%s", describeFSError(dir, err)), nil
}

// relTo returns p relative to dir (both slash paths relative to the
// workspace, p inside dir).
func relTo(dir, p string) string {
	if dir == "." {
		return p
	}
	if p == dir {
		return path.Base(p)
	}
	return strings.TrimPrefix(p, dir+"/")
}

func depth(p string) int { return strings.Count(p, "/") + 1 }
