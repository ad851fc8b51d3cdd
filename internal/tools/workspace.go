package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Workspace is the directory the file tools work in. Every path goes
// through an os.Root, so neither "..", nor an absolute path, nor a symbolic
// link (to a file or to a directory) can reach outside it; the kernel
// checks each step, not a string comparison.
type Workspace struct {
	dir  string // absolute and clean, as given
	real string // dir with symbolic links resolved
	root *os.Root
}

// OpenWorkspace opens dir as a workspace. Close it when done.
func OpenWorkspace(dir string) (*Workspace, error) {
	if dir == "" {
		return nil, errors.New("open workspace: empty directory name")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	return &Workspace{dir: abs, real: real, root: root}, nil
}

// Dir returns the workspace's absolute path.
func (w *Workspace) Dir() string { return w.dir }

// Abs returns the absolute path of rel, a path Rel returned.
func (w *Workspace) Abs(rel string) string { return filepath.Join(w.dir, filepath.FromSlash(rel)) }

// Root returns the os.Root every file access goes through.
func (w *Workspace) Root() *os.Root { return w.root }

// Close releases the workspace's directory handle.
func (w *Workspace) Close() error { return w.root.Close() }

// Rel turns a path given by the model — relative to the workspace, or
// absolute inside it — into a clean slash-separated path relative to the
// workspace ("." for the workspace itself). A path that names a place
// outside is refused. Symbolic links are not resolved here: os.Root
// refuses the ones that lead out when the path is used.
func (w *Workspace) Rel(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	if p == "" {
		return ".", nil
	}
	native := filepath.FromSlash(p)
	if filepath.IsAbs(native) {
		clean := filepath.Clean(native)
		rel, ok := within(w.dir, clean)
		if !ok {
			rel, ok = within(w.real, clean)
		}
		if !ok {
			return "", fmt.Errorf("path %s is outside the workspace; use a path relative to the workspace", p)
		}
		return filepath.ToSlash(rel), nil
	}
	clean := filepath.Clean(native)
	if clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %s is outside the workspace: it climbs above the workspace with '..'", p)
	}
	return filepath.ToSlash(clean), nil
}

// stat resolves a path given by the model (see Rel) and returns it with
// its file information. The error is a sentence for the model.
func (w *Workspace) stat(p string) (rel string, info fs.FileInfo, err error) {
	rel, err = w.Rel(p)
	if err != nil {
		return "", nil, err
	}
	info, err = w.root.Stat(rel)
	if err != nil {
		return rel, nil, errors.New(describeFSError(rel, err))
	}
	return rel, info, nil
}

// within returns target relative to dir when target is dir or below it.
func within(dir, target string) (string, bool) {
	rel, err := filepath.Rel(dir, target)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return rel, true
}

// describeFSError turns an error from a file operation on rel into a
// sentence for the model. Errors are matched on their kind; the message of
// an escape is os.Root's, which has no exported sentinel.
func describeFSError(rel string, err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s does not exist", rel)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("permission denied: %s", rel)
	case isEscape(err):
		return fmt.Sprintf("%s leads outside the workspace through a symbolic link; only files inside the workspace can be used", rel)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s: %s %v", rel, pe.Op, pe.Err)
	}
	return fmt.Sprintf("%s: %v", rel, err)
}

func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}
