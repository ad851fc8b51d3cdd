// Package instructions finds the project's instructions for agents — the
// AGENTS.md files other agents read too (CLAUDE.md where a directory has
// no AGENTS.md) — and renders them for the system prompt.
//
// The files, in the order they are added (the later, the more specific):
//
//  1. the user's own: $XDG_CONFIG_HOME/superagents/AGENTS.md (by default
//     ~/.config/superagents/AGENTS.md);
//  2. each directory from the repository's root (the nearest directory
//     holding .git, the workspace itself if there is none) down to the
//     workspace: its AGENTS.md, or else its CLAUDE.md.
//
// Each file is capped at MaxFileBytes and all of them at MaxTotalBytes,
// with the files nearest the workspace served first; a cut file says how
// much was left out.
package instructions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// File names, in order of preference within a directory.
var Names = []string{"AGENTS.md", "CLAUDE.md"}

// Size caps.
const (
	MaxFileBytes  = 16 << 10
	MaxTotalBytes = 48 << 10
)

// File is one instructions file.
type File struct {
	Path string
	Text string
	// Cut is how many bytes of the file were left out.
	Cut int64
}

// Find returns the instruction files that apply to the workspace, in
// order, with their text capped. userDir is the user configuration
// directory ("" for none). Unreadable files are errors; missing ones are
// not.
func Find(workspace, userDir string) ([]File, error) {
	var paths []string
	if userDir != "" {
		if p, ok := pick(userDir, Names[:1]); ok {
			paths = append(paths, p)
		}
	}
	for _, dir := range repoDirs(workspace) {
		if p, ok := pick(dir, Names); ok {
			paths = append(paths, p)
		}
	}
	files := make([]File, len(paths))
	budget := int64(MaxTotalBytes)
	// Nearest the workspace first: they are the most specific.
	for i := len(paths) - 1; i >= 0; i-- {
		f, err := read(paths[i], min(budget, MaxFileBytes))
		if err != nil {
			return nil, err
		}
		budget -= int64(len(f.Text))
		files[i] = f
	}
	out := files[:0]
	for _, f := range files {
		if f.Text != "" || f.Cut > 0 {
			out = append(out, f)
		}
	}
	return out, nil
}

// Render returns the files as a section of the system prompt ("" when
// there are none).
func Render(files []File) string {
	if len(files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Project instructions\n\nFollow these instructions from the user and the project. They are listed from the most general to the most specific: where they disagree, the later ones win.")
	for _, f := range files {
		fmt.Fprintf(&b, "\n\n## %s\n\n%s", f.Path, strings.TrimSpace(f.Text))
		if f.Cut > 0 {
			fmt.Fprintf(&b, "\n\n[... the last %d bytes of %s were cut: instructions are limited to %d bytes a file and %d in all]", f.Cut, filepath.Base(f.Path), MaxFileBytes, MaxTotalBytes)
		}
	}
	return b.String()
}

// Load finds and renders the instructions for the workspace.
func Load(workspace, userDir string) (string, error) {
	files, err := Find(workspace, userDir)
	if err != nil {
		return "", err
	}
	return Render(files), nil
}

// repoDirs returns the directories from the repository's root down to the
// workspace; just the workspace when it is in no repository.
func repoDirs(workspace string) []string {
	ws := filepath.Clean(workspace)
	var up []string
	for dir := ws; ; {
		up = append(up, dir)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return []string{ws} // no repository: the workspace alone
		}
		dir = parent
	}
	for i, j := 0, len(up)-1; i < j; i, j = i+1, j-1 {
		up[i], up[j] = up[j], up[i]
	}
	return up
}

// pick returns the first of names that is a regular file in dir.
func pick(dir string, names []string) (string, bool) {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			return p, true
		}
	}
	return "", false
}

// read reads at most limit bytes of the file, cut at a character
// boundary.
func read(path string, limit int64) (File, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return File{Path: path}, nil
	}
	if err != nil {
		return File{}, fmt.Errorf("instructions: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return File{}, fmt.Errorf("instructions: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, max(limit, 0)))
	if err != nil {
		return File{}, fmt.Errorf("instructions: read %s: %w", path, err)
	}
	if int64(len(data)) < info.Size() {
		data = wholeRunes(data)
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	return File{Path: path, Text: text, Cut: max(0, info.Size()-int64(len(data)))}, nil
}

// wholeRunes drops a character cut short at the end of data.
func wholeRunes(data []byte) []byte {
	i := len(data) - 1
	for i > 0 && len(data)-i < utf8.UTFMax && !utf8.RuneStart(data[i]) {
		i--
	}
	if i >= 0 && !utf8.FullRune(data[i:]) {
		return data[:i]
	}
	return data
}
