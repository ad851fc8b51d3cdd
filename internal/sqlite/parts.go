package sqlite

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	sa "github.com/superagents/superagents"
)

// decodeParts decodes a message's stored parts. The parts column holds
// what encoding/json wrote; json.Unmarshal reads it in two passes (it
// checks the whole value, then decodes it) and was most of the cost of
// reading a history with large tool outputs. The fast path reads that
// exact shape in one pass; anything else it does not expect (another
// field name or letter case, null, invalid UTF-8, bad syntax) goes to
// json.Unmarshal, which decides, so the result is always json.Unmarshal's.
func decodeParts(data []byte) ([]sa.Part, error) {
	if parts, ok := fastParts(data); ok {
		return parts, nil
	}
	var parts []sa.Part
	if err := json.Unmarshal(data, &parts); err != nil {
		return nil, err
	}
	return parts, nil
}

// partsReader is a cursor over the parts' JSON.
type partsReader struct {
	b []byte
	i int
}

func fastParts(data []byte) ([]sa.Part, bool) {
	r := partsReader{b: data}
	if !r.consume('[') {
		return nil, false
	}
	// Most messages have one or two parts.
	parts := make([]sa.Part, 0, 2)
	if r.consume(']') {
		return parts, r.end()
	}
	for {
		var p sa.Part
		if !r.part(&p) {
			return nil, false
		}
		parts = append(parts, p)
		if r.consume(',') {
			continue
		}
		if r.consume(']') {
			return parts, r.end()
		}
		return nil, false
	}
}

func (r *partsReader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

func (r *partsReader) consume(c byte) bool {
	r.space()
	if r.i < len(r.b) && r.b[r.i] == c {
		r.i++
		return true
	}
	return false
}

func (r *partsReader) end() bool {
	r.space()
	return r.i == len(r.b)
}

func (r *partsReader) part(p *sa.Part) bool {
	if !r.consume('{') {
		return false
	}
	if r.consume('}') {
		return true
	}
	for {
		key, ok := r.str()
		if !ok || !r.consume(':') {
			return false
		}
		if !r.field(p, key) {
			return false
		}
		if r.consume(',') {
			continue
		}
		return r.consume('}')
	}
}

func (r *partsReader) field(p *sa.Part, key string) bool {
	var ok bool
	switch key {
	case "type":
		var s string
		s, ok = r.str()
		p.Type = sa.PartType(s)
	case "text":
		p.Text, ok = r.str()
	case "signature":
		p.Signature, ok = r.str()
	case "call_id":
		p.CallID, ok = r.str()
	case "name":
		p.Name, ok = r.str()
	case "output":
		p.Output, ok = r.str()
	case "hidden":
		p.Hidden, ok = r.boolean()
	case "is_error":
		p.IsError, ok = r.boolean()
	case "compacted":
		p.Compacted, ok = r.boolean()
	case "input":
		p.Input, ok = r.raw()
	}
	return ok
}

func (r *partsReader) boolean() (bool, bool) {
	r.space()
	switch {
	case bytes.HasPrefix(r.b[r.i:], []byte("true")):
		r.i += 4
		return true, true
	case bytes.HasPrefix(r.b[r.i:], []byte("false")):
		r.i += 5
		return false, true
	}
	return false, false
}

// str reads a string; it refuses what encoding/json would repair or
// reject (invalid UTF-8, control characters), leaving that to it.
func (r *partsReader) str() (string, bool) {
	if !r.consume('"') {
		return "", false
	}
	start := r.i
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			s := r.b[start:r.i]
			r.i++
			if !utf8.Valid(s) {
				return "", false
			}
			return string(s), true
		case c == '\\':
			return r.escaped(start)
		case c < 0x20:
			return "", false
		}
		r.i++
	}
	return "", false
}

// escaped finishes a string that has escapes, from its start.
func (r *partsReader) escaped(start int) (string, bool) {
	// A strings.Builder hands over its bytes without copying them; the
	// string is never longer than its escaped form, so growing it to that
	// at once spares the copies of growing it step by step (escaped quotes
	// are common in tool outputs: the first quote is seldom the end).
	var out strings.Builder
	if end := closingQuote(r.b, start, r.i); end >= 0 {
		out.Grow(end - start)
	}
	out.Write(r.b[start:r.i])
	for r.i < len(r.b) {
		c := r.b[r.i]
		switch {
		case c == '"':
			r.i++
			if !utf8.ValidString(out.String()) {
				return "", false
			}
			return out.String(), true
		case c < 0x20:
			return "", false
		case c != '\\':
			// Copy the run up to the next quote or escape at once.
			j := r.i + 1
			for j < len(r.b) && r.b[j] != '"' && r.b[j] != '\\' && r.b[j] >= 0x20 {
				j++
			}
			out.Write(r.b[r.i:j])
			r.i = j
			continue
		}
		if r.i+1 >= len(r.b) {
			return "", false
		}
		e := r.b[r.i+1]
		r.i += 2
		switch e {
		case '"', '\\', '/':
			out.WriteByte(e)
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		case 'u':
			c1, ok := r.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(c1) {
				// Only a complete pair; a lone half is json.Unmarshal's to
				// turn into U+FFFD.
				if r.i+1 >= len(r.b) || r.b[r.i] != '\\' || r.b[r.i+1] != 'u' {
					return "", false
				}
				r.i += 2
				c2, ok := r.hex4()
				if !ok {
					return "", false
				}
				c1 = utf16.DecodeRune(c1, c2)
				if c1 == utf8.RuneError {
					return "", false
				}
			}
			out.WriteRune(c1)
		default:
			return "", false
		}
	}
	return "", false
}

func (r *partsReader) hex4() (rune, bool) {
	if r.i+4 > len(r.b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(r.b[r.i:r.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	r.i += 4
	return rune(n), true
}

// raw reads an object or array (a tool call's input) as it is written;
// json.Valid checks it, as json.Unmarshal would.
func (r *partsReader) raw() (json.RawMessage, bool) {
	r.space()
	start, depth := r.i, 0
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case '"':
			if _, ok := r.str(); !ok {
				return nil, false
			}
			if depth == 0 {
				return nil, false // a bare string: not an input
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return nil, false
			}
			if depth == 0 {
				r.i++
				v := r.b[start:r.i]
				if !json.Valid(v) {
					return nil, false
				}
				return bytes.Clone(v), true
			}
		default:
			if depth == 0 {
				return nil, false
			}
		}
		r.i++
	}
	return nil, false
}

// closingQuote returns the index of the quote that ends the string whose
// contents begin at start, searching from i, or -1. A quote is escaped
// when an odd number of backslashes precedes it.
func closingQuote(b []byte, start, i int) int {
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return -1
		}
		q += i
		backslashes := 0
		for k := q - 1; k >= start && b[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q
		}
		i = q + 1
	}
}
