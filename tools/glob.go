package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

type globInput struct {
	Pattern string `json:"pattern" jsonschema:"The pattern, e.g. **/*.go or src/**/*_test.ts. * matches within one path segment, ** any number of segments, {a,b} alternatives, [abc] one character."`
	Path    string `json:"path,omitempty" jsonschema:"The directory the pattern is relative to: a path relative to the workspace, or an absolute path inside it. Default: the workspace itself."`
}

const globDescription = `Find files in the workspace by name pattern (** matches any number of directories). Returns matching file paths relative to the workspace, sorted, at most 1000. The .git directory is skipped unless the pattern names it. Use grep to search file contents.`

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
	err = walk(ctx, ws, dir, func(p string, d fs.DirEntry) error {
		sub := relTo(dir, p)
		if d.IsDir() {
			if skipGit && d.Name() == ".git" || maxDepth >= 0 && depth(sub) >= maxDepth {
				return fs.SkipDir
			}
			return nil
		}
		if doublestar.MatchUnvalidated(pattern, sub) {
			if found < MaxListEntries {
				out.WriteString(p + "\n")
			}
			found++
		}
		return nil
	})
	if err != nil {
		return walkFailure(dir, err)
	}
	if found == 0 {
		return Result{Output: fmt.Sprintf("no files match %s in %s", in.Pattern, dir)}, nil
	}
	if found > MaxListEntries {
		fmt.Fprintf(&out, "[%d of %d matching files shown; use a narrower pattern or path]\n", MaxListEntries, found)
	}
	return Result{Output: out.String()}, nil
}

// walk visits dir and everything below it, in lexical order, without
// following symbolic links. visit gets paths relative to the workspace; it
// is not called for dir itself unless dir is a file. Unreadable entries
// below dir are skipped; a cancelled ctx stops the walk.
func walk(ctx context.Context, ws *Workspace, dir string, visit func(p string, d fs.DirEntry) error) error {
	return fs.WalkDir(ws.Root().FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
			if p == dir {
				return err
			}
			return nil // an unreadable entry below: skip it
		}
		if p == dir && d.IsDir() {
			return nil
		}
		return visit(p, d)
	})
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
