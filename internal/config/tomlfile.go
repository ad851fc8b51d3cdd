package config

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Error is a problem in a configuration file (or another TOML file, such as
// an offline script), located by file, line and key so a person can fix it.
type Error struct {
	Path   string // the file; empty for a value that came from no file
	Line   int    // 1-based; 0 when unknown
	Column int    // 1-based; 0 when unknown
	Key    string // dotted key, e.g. "providers.ollama.base_url"; may be empty
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
			if e.Column > 0 {
				b.WriteString(":" + strconv.Itoa(e.Column))
			}
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// File is a TOML file that was decoded strictly. It remembers the line of
// every key so that checks made after decoding can still point at the line.
type File struct {
	Path  string
	lines map[string]int
}

// DecodeFile decodes data, the content of the file at path, into v. Unknown
// keys, wrong types and syntax errors are *Error values naming the file and
// the line. Keys of arrays of tables are indexed from 0: the second [[rules]]
// table is "rules.1".
func DecodeFile(path string, data []byte, v any) (*File, error) {
	f := &File{Path: path, lines: make(map[string]int)}
	if err := f.index(data); err != nil {
		return nil, err
	}
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, f.decodeError(err)
	}
	return f, nil
}

// Line returns the line where key, or failing that its nearest parent, was
// written; for a table only written through its sub-tables, the first of
// those; 0 when the file does not mention it.
func (f *File) Line(key string) int {
	for k := key; k != ""; {
		if line, ok := f.lines[k]; ok {
			return line
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	first := 0
	for k, line := range f.lines {
		if strings.HasPrefix(k, key+".") && (first == 0 || line < first) {
			first = line
		}
	}
	return first
}

// Has reports whether the file sets key itself.
func (f *File) Has(key string) bool {
	_, ok := f.lines[key]
	return ok
}

// Errorf returns an *Error about key, at the line where it was written.
func (f *File) Errorf(key, format string, args ...any) error {
	return &Error{Path: f.Path, Line: f.Line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
}

// index records the line of each table header and key. It also reports
// syntax errors, with their position, before the decoder sees the file.
func (f *File) index(data []byte) error {
	var p unstable.Parser
	p.Reset(data)
	// Offsets of the line starts, to find a key's line by binary search.
	starts := []int{0}
	for i, b := range data {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	lineOf := func(n *unstable.Node) int {
		off := int(n.Raw.Offset)
		return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
	}
	var table []string
	arrays := make(map[string]int) // array table key → number of tables seen
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			key, line := keyOf(e.Key(), lineOf)
			table = resolveArrays(key, arrays)
			if e.Kind == unstable.ArrayTable {
				name := strings.Join(table, ".")
				table = append(table, strconv.Itoa(arrays[name]))
				arrays[name]++
			}
			f.lines[strings.Join(table, ".")] = line
		case unstable.KeyValue:
			f.indexKeyValue(e, table, lineOf)
		}
	}
	if err := p.Error(); err != nil {
		var perr *unstable.ParserError
		if errors.As(err, &perr) {
			line, col := position(data, perr.Highlight)
			return &Error{Path: f.Path, Line: line, Column: col, Msg: perr.Message}
		}
		return &Error{Path: f.Path, Msg: err.Error()}
	}
	return nil
}

// resolveArrays rewrites a table key so that it points into the latest
// element of any array of tables it goes through: [rules.when] after the
// second [[rules]] is "rules.1.when".
func resolveArrays(key []string, arrays map[string]int) []string {
	var out []string
	for i, part := range key {
		out = append(out, part)
		if i == len(key)-1 {
			break
		}
		if n, ok := arrays[strings.Join(out, ".")]; ok {
			out = append(out, strconv.Itoa(n-1))
		}
	}
	return out
}

// indexKeyValue records a key = value line, and the keys of an inline
// table value.
func (f *File) indexKeyValue(kv *unstable.Node, table []string, lineOf func(*unstable.Node) int) {
	key, line := keyOf(kv.Key(), lineOf)
	full := append(append([]string(nil), table...), key...)
	f.lines[strings.Join(full, ".")] = line
	if v := kv.Value(); v.Kind == unstable.InlineTable {
		it := v.Children()
		for it.Next() {
			if n := it.Node(); n.Kind == unstable.KeyValue {
				f.indexKeyValue(n, full, lineOf)
			}
		}
	}
}

// position returns the line and column where sub, a slice of data, starts;
// 0, 0 when sub is not part of data.
func position(data, sub []byte) (line, col int) {
	offset := cap(data) - cap(sub)
	if sub == nil || offset < 0 || offset > len(data) {
		return 0, 0
	}
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = offset - bytes.LastIndexByte(before, '\n')
	return line, col
}

func keyOf(it unstable.Iterator, lineOf func(*unstable.Node) int) ([]string, int) {
	var parts []string
	line := 0
	for it.Next() {
		n := it.Node()
		if line == 0 {
			line = lineOf(n)
		}
		parts = append(parts, string(n.Data))
	}
	return parts, line
}

// decodeError turns a go-toml error into an *Error (or several, joined).
func (f *File) decodeError(err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		errs := make([]error, 0, len(strict.Errors))
		for i := range strict.Errors {
			de := &strict.Errors[i]
			row, col := de.Position()
			key := strings.Join(de.Key(), ".")
			errs = append(errs, &Error{Path: f.Path, Line: row, Column: col, Key: key, Msg: "unknown key"})
		}
		return errors.Join(errs...)
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		return &Error{Path: f.Path, Line: row, Column: col, Key: strings.Join(de.Key(), "."), Msg: msg}
	}
	return &Error{Path: f.Path, Msg: err.Error()}
}
