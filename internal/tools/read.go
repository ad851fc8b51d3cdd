package tools

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of the read tool.
const (
	// DefaultReadLines is how many lines read returns when no limit is given.
	DefaultReadLines = 2000
	// MaxLineChars is where read cuts one long line.
	MaxLineChars = 2000
	// MaxReadChars caps the characters of line content one read returns,
	// so a file of very long lines cannot flood the context.
	MaxReadChars = 100_000
	// sniffBytes is how much of a file is checked for NUL bytes to tell a
	// binary file (the same rule as git's).
	sniffBytes = 8000
)

type readInput struct {
	Path   string `json:"path" jsonschema:"The file to read: a path relative to the workspace, or an absolute path inside it."`
	Offset int    `json:"offset,omitempty" jsonschema:"The line number to start reading at (1 is the first line). Default 1."`
	Limit  int    `json:"limit,omitempty" jsonschema:"How many lines to read. Default 2000."`
}

const readDescription = `Read a text file from the workspace. Lines come back numbered (line number, a tab, then the line), starting at line 1 unless offset is given.

- Reads up to 2000 lines by default; use offset and limit to page through longer files. The last line of the output says when there is more and which offset continues.
- Lines longer than 2000 characters are cut, and one call returns at most 100,000 characters.
- Binary files are refused. Use ls for directories.
- Read a file before you edit it: edit needs the exact text, and the line-number prefix is not part of the file.`

func newRead(ws *Workspace) (Tool, error) {
	return New(Read, readDescription, true, func(ctx context.Context, in readInput) (Result, error) {
		return readFile(ctx, ws, in)
	})
}

func readFile(ctx context.Context, ws *Workspace, in readInput) (Result, error) {
	if in.Offset < 0 || in.Limit < 0 {
		return Errorf("offset and limit must be positive line counts"), nil
	}
	offset, limit := max(in.Offset, 1), in.Limit
	if limit == 0 {
		limit = DefaultReadLines
	}
	rel, info, err := ws.stat(in.Path)
	if err != nil {
		return Errorf("%v", err), nil
	}
	if info.IsDir() {
		return Errorf("%s is a directory; use ls to list it", rel), nil
	}
	if !info.Mode().IsRegular() {
		return Errorf("%s is not a regular file", rel), nil
	}
	f, err := ws.Root().Open(rel)
	if err != nil {
		return Errorf("%s", describeFSError(rel, err)), nil
	}
	defer f.Close()

	r := bufio.NewReaderSize(f, 64*1024)
	head, err := r.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return Errorf("%s", describeFSError(rel, err)), nil
	}
	if isBinary(head) {
		return Errorf("%s is a binary file (%d bytes); read shows text files only", rel, info.Size()), nil
	}
	if len(head) == 0 {
		return Result{Output: fmt.Sprintf("[%s is empty]", rel)}, nil
	}

	pg := readPage{offset: offset, limit: limit}
	lines := newLineReader(r)
	for {
		if lines.n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return Result{}, err
			}
		}
		line, ok, err := lines.next()
		if err != nil {
			return Errorf("%s", describeFSError(rel, err)), nil
		}
		if !ok {
			break
		}
		pg.add(lines.n, line, lines.longBy)
	}
	total := lines.n
	if offset > total {
		return Errorf("offset %d is past the end of %s, which has %d lines", offset, rel, total), nil
	}
	return Result{Output: pg.finish(total)}, nil
}

// readPage is what read shows of a file: its numbered lines from offset
// on, at most limit of them and MaxReadChars characters of their content.
type readPage struct {
	offset, limit int
	out           strings.Builder
	shown, chars  int
	capped        bool
}

// add shows line n (whose reader dropped longBy characters of it) when it
// belongs on the page. The lines after the page are still read, so that
// the note can say how long the file is.
func (p *readPage) add(n int, line []byte, longBy int) {
	if n < p.offset || p.shown == p.limit || p.capped {
		return
	}
	text, cut := cutLine(line, longBy)
	if p.chars+utf8.RuneCountInString(text) > MaxReadChars && p.shown > 0 {
		p.capped = true
		return
	}
	p.chars += utf8.RuneCountInString(text)
	p.out.WriteString(lineNumber(n))
	p.out.WriteString(text)
	if cut > 0 {
		fmt.Fprintf(&p.out, " [line cut: %d more characters]", cut)
	}
	p.out.WriteByte('\n')
	p.shown++
}

// finish returns the page, with a last line that says how to continue
// when the file goes on past it.
func (p *readPage) finish(total int) string {
	last := p.offset + p.shown - 1
	switch {
	case p.capped:
		fmt.Fprintf(&p.out, "[output capped at %d characters: showing lines %d-%d of %d; continue with offset=%d]", MaxReadChars, p.offset, last, total, last+1)
	case last < total:
		fmt.Fprintf(&p.out, "[showing lines %d-%d of %d; continue with offset=%d]", p.offset, last, total, last+1)
	}
	return p.out.String()
}

// isBinary reports whether the start of a file looks binary: it holds a
// NUL byte, which text in any common encoding but UTF-16 never does.
func isBinary(head []byte) bool {
	return bytes.IndexByte(head, 0) >= 0
}

func lineNumber(n int) string {
	s := strconv.Itoa(n)
	if len(s) < 6 {
		s = strings.Repeat(" ", 6-len(s)) + s
	}
	return s + "\t"
}

// cutLine returns a line as valid UTF-8, cut to MaxLineChars, and how
// many characters were left out (including those the reader already
// dropped).
func cutLine(line []byte, dropped int) (string, int) {
	text := strings.ToValidUTF8(string(line), "\uFFFD")
	n := utf8.RuneCountInString(text)
	if n <= MaxLineChars {
		return text, dropped
	}
	i, count := 0, 0
	for i < len(text) && count < MaxLineChars {
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
		count++
	}
	return text[:i], n - MaxLineChars + dropped
}

// lineReader yields lines without their ending, keeping at most
// keepBytes of each: a file with a gigabyte on one line costs no more
// memory than any other.
type lineReader struct {
	r      *bufio.Reader
	buf    []byte
	n      int // number of the line last returned
	longBy int // characters dropped from the line last returned
}

// keepBytes is enough for MaxLineChars characters of any UTF-8 text.
const keepBytes = MaxLineChars * utf8.UTFMax

func newLineReader(r *bufio.Reader) *lineReader { return &lineReader{r: r} }

func (l *lineReader) next() ([]byte, bool, error) {
	l.buf, l.longBy = l.buf[:0], 0
	for {
		chunk, err := l.r.ReadSlice('\n')
		room := keepBytes - len(l.buf)
		if len(chunk) <= room {
			l.buf = append(l.buf, chunk...)
		} else {
			room = max(room, 0)
			l.buf = append(l.buf, chunk[:room]...)
			dropped := chunk[room:]
			if err == nil {
				dropped = trimEOL(dropped)
			}
			l.longBy += utf8.RuneCount(dropped)
		}
		switch {
		case err == nil:
			l.n++
			return trimEOL(l.buf), true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(l.buf) == 0 && l.longBy == 0 {
				return nil, false, nil
			}
			l.n++
			return trimEOL(l.buf), true, nil
		default:
			return nil, false, err
		}
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
