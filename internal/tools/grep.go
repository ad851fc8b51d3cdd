package tools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Limits of the grep tool.
const (
	// MaxGrepMatches caps the matching lines grep returns.
	MaxGrepMatches = 200
	// maxGrepLineChars is where grep cuts a long matching line.
	maxGrepLineChars = 300
)

type grepInput struct {
	Pattern    string `json:"pattern" jsonschema:"A regular expression in Go (RE2) syntax, matched against each line, e.g. func\\s+main or TODO|FIXME."`
	Path       string `json:"path,omitempty" jsonschema:"The file or directory to search: a path relative to the workspace, or an absolute path inside it. Default: the workspace itself."`
	Glob       string `json:"glob,omitempty" jsonschema:"Only search files matching this pattern, e.g. *.go or src/**/*.ts. A pattern without / is matched against file names, one with / against paths relative to path."`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"Match letters regardless of case."`
	// IncludeIgnored turns off the .gitignore files.
	IncludeIgnored bool `json:"include_ignored,omitempty" jsonschema:"Also search files the workspace's .gitignore files ignore."`
}

const grepDescription = `Search file contents in the workspace with a regular expression (Go RE2 syntax: no backreferences or lookaround). Prints each matching line as path:line:text, paths relative to the workspace, files in sorted order.

- Filter files with glob (e.g. *.go, **/*_test.go).
- The .git directory, binary files and symbolic links are skipped, and so are files the workspace's .gitignore files ignore unless include_ignored is set.
- At most 200 matching lines are shown, and a note gives the total; long lines are cut to 300 characters.`

func newGrep(ws *Workspace) (Tool, error) {
	return New(Grep, grepDescription, true, func(ctx context.Context, in grepInput) (Result, error) {
		return grepFiles(ctx, ws, in)
	})
}

func grepFiles(ctx context.Context, ws *Workspace, in grepInput) (Result, error) {
	if in.Pattern == "" {
		return Errorf("pattern is empty"), nil
	}
	expr := in.Pattern
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return Errorf("pattern is not a valid regular expression: %v", err), nil
	}
	if in.Glob != "" && !doublestar.ValidatePattern(in.Glob) {
		return Errorf("glob %q is malformed (check its brackets and braces)", in.Glob), nil
	}
	dir, err := ws.Rel(in.Path)
	if err != nil {
		return Errorf("%v", err), nil
	}

	var out strings.Builder
	ig := ignorerFor(ws, dir, in.IncludeIgnored)
	matches, files, err := searchFiles(ctx, ws, dir, in.Glob, re, ig, &out)
	if err != nil {
		return walkFailure(dir, err)
	}
	if matches == 0 {
		return Result{Output: fmt.Sprintf("no matches for %s in %s", in.Pattern, dir) + ig.note()}, nil
	}
	if matches > MaxGrepMatches {
		fmt.Fprintf(&out, "[showing %d of %d matching lines in %d files; narrow the pattern, path or glob to see the rest]\n", MaxGrepMatches, matches, files)
	}
	return Result{Output: out.String()}, nil
}

// searchFiles searches the files below dir and writes the matching lines
// to out in walk order, at most MaxGrepMatches of them. It returns how many
// lines matched and in how many files. (Searching files in parallel was
// measured: it gained nothing, the time going to system calls.)
func searchFiles(ctx context.Context, ws *Workspace, dir, glob string, re *regexp.Regexp, ig *ignorer, out *strings.Builder) (matches, files int, err error) {
	r := bufio.NewReaderSize(nil, 64*1024)
	var b strings.Builder
	err = walk(ctx, ws, dir, func(e entry) error {
		if ig.skip(e) {
			if e.d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.d.IsDir() {
			if e.name == ".git" {
				return fs.SkipDir
			}
			return nil
		}
		if !e.d.Type().IsRegular() || !globMatches(glob, relTo(dir, e.path)) {
			return nil
		}
		f, err := e.open()
		if err != nil {
			return nil // unreadable: skip, like grep -s
		}
		defer f.Close()
		b.Reset()
		n, err := grepFile(ctx, e.path, f, re, r, &b)
		if err != nil {
			return ctx.Err() // a read error skips the file; a cancel stops
		}
		if n > 0 {
			if room := MaxGrepMatches - matches; room > 0 {
				out.WriteString(firstLines(b.String(), room))
			}
			matches += n
			files++
		}
		return nil
	})
	return matches, files, err
}

// firstLines returns the first n lines of s (each ending in a newline).
func firstLines(s string, n int) string {
	end := 0
	for range n {
		i := strings.IndexByte(s[end:], '\n')
		if i < 0 {
			return s
		}
		end += i + 1
	}
	return s[:end]
}

func globMatches(glob, rel string) bool {
	if glob == "" {
		return true
	}
	if !strings.Contains(glob, "/") {
		rel = path.Base(rel)
	}
	return doublestar.MatchUnvalidated(glob, rel)
}

// grepFile writes up to MaxGrepMatches matching lines of the file to out
// and returns how many lines match in all. Binary files match nothing.
func grepFile(ctx context.Context, path string, f *os.File, re *regexp.Regexp, r *bufio.Reader, out *strings.Builder) (int, error) {
	r.Reset(f)
	head, err := r.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return 0, err
	}
	if isBinary(head) {
		return 0, nil
	}
	lines := newLineReader(r)
	n := 0
	for {
		if lines.n%4096 == 4095 && ctx.Err() != nil {
			return n, ctx.Err()
		}
		line, ok, err := lines.next()
		if err != nil {
			return n, err
		}
		if !ok {
			return n, nil
		}
		if !re.Match(line) {
			continue
		}
		if n < MaxGrepMatches {
			out.WriteString(path)
			out.WriteByte(':')
			fmt.Fprint(out, lines.n)
			out.WriteByte(':')
			out.WriteString(shorten(line, maxGrepLineChars))
			out.WriteByte('\n')
		}
		n++
	}
}

// shorten returns line as valid UTF-8 of at most limit characters, with an
// ellipsis when cut.
func shorten(line []byte, limit int) string {
	s := strings.ToValidUTF8(string(line), "\uFFFD")
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	i := 0
	for n := 0; n < limit; n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}
