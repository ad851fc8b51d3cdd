package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/superagents/superagents/sandbox"
)

type writeInput struct {
	Path    string `json:"path" jsonschema:"The file to write: a path relative to the workspace, or an absolute path inside it."`
	Content string `json:"content" jsonschema:"The complete new content of the file."`
}

const writeDescription = `Write a file in the workspace, replacing it if it exists. Missing parent directories are created.

- The content replaces the whole file; to change part of an existing file use edit instead.
- Read an existing file first so you do not lose what is in it.`

func newWrite(ws *Workspace, sb *sandbox.Sandbox) (Tool, error) {
	return New(Write, writeDescription, false, func(ctx context.Context, in writeInput) (Result, error) {
		if refusal := sb.WriteRefusal(); refusal != "" {
			return Errorf("%s", refusal), nil
		}
		rel, err := ws.Rel(in.Path)
		if err != nil {
			return Errorf("%v", err), nil
		}
		if rel == "." {
			return Errorf("give the path of a file, not the workspace itself"), nil
		}
		if refusal := sb.ProtectedRefusal(ws.Abs(rel)); refusal != "" {
			return Errorf("%s", refusal), nil
		}
		existed := false
		switch info, err := ws.Root().Stat(rel); {
		case err == nil && info.IsDir():
			return Errorf("%s is a directory", rel), nil
		case err == nil:
			existed = true
		case !errors.Is(err, fs.ErrNotExist):
			return Errorf("%s", describeFSError(rel, err)), nil
		}
		if dir := path.Dir(rel); dir != "." {
			if err := ws.Root().MkdirAll(dir, 0o755); err != nil {
				return Errorf("create directory %s", describeFSError(dir, err)), nil
			}
		}
		// An existing file keeps its permissions: WriteFile truncates it.
		if err := ws.Root().WriteFile(rel, []byte(in.Content), 0o644); err != nil {
			return Errorf("write %s", describeFSError(rel, err)), nil
		}
		verb := "created"
		if existed {
			verb = "overwrote"
		}
		return Result{Output: fmt.Sprintf("%s %s (%s, %s)", verb, rel, plural(len(in.Content), "byte"), plural(countLines(in.Content), "line"))}, nil
	})
}

// countLines counts lines as an editor shows them: a last line without a
// newline counts too.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// plural returns "1 line", "2 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
