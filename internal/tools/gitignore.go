package tools

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// maxIgnoreFileBytes bounds the .gitignore files read.
const maxIgnoreFileBytes = 1 << 20

// ignorer tells which paths of the workspace its .gitignore files ignore
// (the one at the workspace's root and those of the directories below,
// each about the paths under its own directory), with go-git's matcher.
// It reads each directory's .gitignore once, when a path under it is first
// asked about. One ignorer serves one tool call.
type ignorer struct {
	ws       *Workspace
	patterns map[string][]gitignore.Pattern // directory → its .gitignore's patterns
	// skipped counts the paths skip left out.
	skipped int
}

// ignorerFor returns the ignorer of a walk below dir (a workspace-relative
// path), or nil when nothing is to be skipped: the caller asked for
// ignored paths, or named an ignored path itself.
func ignorerFor(ws *Workspace, dir string, include bool) *ignorer {
	if include {
		return nil
	}
	ig := &ignorer{ws: ws, patterns: make(map[string][]gitignore.Pattern)}
	if ig.ignored(dir, true) || ig.ignored(dir, false) {
		return nil
	}
	return ig
}

// skip reports whether a walk leaves e out, and counts it. A nil ignorer
// skips nothing.
func (ig *ignorer) skip(e entry) bool {
	if ig == nil || !ig.ignored(e.path, e.d.IsDir()) {
		return false
	}
	ig.skipped++
	return true
}

// note says what was skipped, for a result that found nothing.
func (ig *ignorer) note() string {
	if ig == nil || ig.skipped == 0 {
		return ""
	}
	return fmt.Sprintf(ignoreNote, ig.skipped)
}

// ignored reports whether the .gitignore files ignore p, a slash path
// relative to the workspace.
func (ig *ignorer) ignored(p string, isDir bool) bool {
	if p == "." || p == "" {
		return false
	}
	// The patterns of the root's .gitignore, then of each directory on the
	// way down; found without building the directories' paths anew.
	all := ig.load("")
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			all = append(all, ig.load(p[:i])...)
		}
	}
	if len(all) == 0 {
		return false
	}
	return gitignore.NewMatcher(all).Match(strings.Split(p, "/"), isDir)
}

// load returns the patterns of dir's .gitignore (dir "" is the root).
func (ig *ignorer) load(dir string) []gitignore.Pattern {
	if ps, ok := ig.patterns[dir]; ok {
		return ps
	}
	var ps []gitignore.Pattern
	f, err := ig.ws.Root().Open(path.Join(cmp.Or(dir, "."), ".gitignore"))
	if err == nil {
		data, _ := io.ReadAll(io.LimitReader(f, maxIgnoreFileBytes))
		f.Close()
		var domain []string
		if dir != "" {
			domain = strings.Split(dir, "/")
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := strings.TrimSuffix(sc.Text(), "\r")
			if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
				continue
			}
			ps = append(ps, gitignore.ParsePattern(line, domain))
		}
	}
	ig.patterns[dir] = slices.Clip(ps) // callers append to it
	return ps
}

// ignoreNote is appended to results that left ignored paths out.
const ignoreNote = "\n[%d paths ignored by .gitignore were skipped; set include_ignored to see them]"
