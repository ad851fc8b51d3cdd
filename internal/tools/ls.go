package tools

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// MaxListEntries caps the entries ls, and the paths glob, return.
const MaxListEntries = 1000

type lsInput struct {
	Path string `json:"path,omitempty" jsonschema:"The directory to list: a path relative to the workspace, or an absolute path inside it. Default: the workspace itself."`
	// IncludeIgnored turns off the .gitignore files.
	IncludeIgnored bool `json:"include_ignored,omitempty" jsonschema:"Also list entries the workspace's .gitignore files ignore."`
}

const lsDescription = `List a directory of the workspace, one entry per line, sorted by name. Paths are relative to the workspace; directories end with "/", and symbolic links show their target after "->". Entries the workspace's .gitignore files ignore are left out unless include_ignored is set. At most 1000 entries are shown. Use glob to find files by pattern across directories.`

func newLs(ws *Workspace) (Tool, error) {
	return New(Ls, lsDescription, true, func(ctx context.Context, in lsInput) (Result, error) {
		rel, info, err := ws.stat(in.Path)
		if err != nil {
			return Errorf("%v", err), nil
		}
		if !info.IsDir() {
			return Errorf("%s is a file, not a directory; use read to see it", rel), nil
		}
		entries, err := fs.ReadDir(ws.Root().FS(), rel)
		if err != nil {
			return Errorf("%s", describeFSError(rel, err)), nil
		}
		if len(entries) == 0 {
			return Result{Output: fmt.Sprintf("[%s is empty]", rel)}, nil
		}
		ig := ignorerFor(ws, rel, in.IncludeIgnored)
		entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return ig.skip(entry{path: path.Join(rel, e.Name()), d: e}) })
		if len(entries) == 0 {
			return Result{Output: fmt.Sprintf("[%s is empty]", rel) + ig.note()}, nil
		}
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		var out strings.Builder
		for _, e := range entries[:min(len(entries), MaxListEntries)] {
			p := path.Join(rel, e.Name())
			switch {
			case e.Type()&fs.ModeSymlink != 0:
				target, err := ws.Root().Readlink(p)
				if err != nil {
					target = "?"
				}
				fmt.Fprintf(&out, "%s -> %s\n", p, target)
			case e.IsDir():
				out.WriteString(p + "/\n")
			default:
				out.WriteString(p + "\n")
			}
		}
		if n := len(entries) - MaxListEntries; n > 0 {
			fmt.Fprintf(&out, "[%d more entries not shown; use glob to narrow down]\n", n)
		}
		return Result{Output: out.String() + strings.TrimPrefix(ig.note(), "\n")}, nil
	})
}
