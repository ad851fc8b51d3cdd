package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// JSON configuration files are edited in place, as text: the members
// superagents adds or removes change, and everything else — the user's
// keys, their order, their formatting — stays byte for byte.

// jsonObject is where an object's members are in a file.
type jsonObject struct {
	open, close int // offsets of { and }
	members     []jsonMember
}

// jsonMember is one member: its key and where it and its value are.
type jsonMember struct {
	key                  string
	keyStart             int
	valueStart, valueEnd int
}

// parseObject reads the object whose { is at open.
func parseObject(src []byte, open int) (jsonObject, error) {
	dec := json.NewDecoder(bytes.NewReader(src[open:]))
	obj := jsonObject{open: open}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return obj, errors.New("not a JSON object")
	}
	for dec.More() {
		keyStart := open + skipSpace(src[open:], int(dec.InputOffset()), ",")
		tok, err := dec.Token()
		if err != nil {
			return obj, err
		}
		key, _ := tok.(string)
		valueStart := open + skipSpace(src[open:], int(dec.InputOffset()), ":")
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return obj, err
		}
		obj.members = append(obj.members, jsonMember{key: key, keyStart: keyStart, valueStart: valueStart, valueEnd: open + int(dec.InputOffset())})
	}
	if _, err := dec.Token(); err != nil {
		return obj, err
	}
	obj.close = open + int(dec.InputOffset()) - 1
	return obj, nil
}

// skipSpace returns the offset of the first byte from i on that is
// neither white space nor one of seps.
func skipSpace(src []byte, i int, seps string) int {
	for i < len(src) && bytes.ContainsAny(src[i:i+1], " \t\r\n"+seps) {
		i++
	}
	return i
}

// member returns the member of key, if there is one.
func (o jsonObject) member(key string) (jsonMember, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m, true
		}
	}
	return jsonMember{}, false
}

// indentOf is the white space that starts the line of offset i.
func indentOf(src []byte, i int) string {
	start := bytes.LastIndexByte(src[:i], '\n') + 1
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

// addMember returns src with a member added at the end of the object,
// indented as the object's other members are (or one step in from it).
func addMember(src []byte, o jsonObject, key string, value any) ([]byte, error) {
	outer := indentOf(src, o.open)
	inner := outer + "  "
	if len(o.members) > 0 {
		inner = indentOf(src, o.members[0].keyStart)
	}
	v, err := json.MarshalIndent(value, inner, "  ")
	if err != nil {
		return nil, err
	}
	k, _ := json.Marshal(key)
	member := "\n" + inner + string(k) + ": " + string(v)
	var out bytes.Buffer
	if len(o.members) == 0 {
		out.Write(src[:o.open+1])
		out.WriteString(member + "\n" + outer)
		out.Write(src[o.close:])
		return out.Bytes(), nil
	}
	last := o.members[len(o.members)-1].valueEnd
	out.Write(src[:last])
	out.WriteString("," + member)
	out.Write(src[last:])
	return out.Bytes(), nil
}

// removeMember returns src without the object's member m, and the comma
// and white space that went with it.
func removeMember(src []byte, o jsonObject, m jsonMember) []byte {
	i := 0
	for i < len(o.members) && o.members[i].keyStart != m.keyStart {
		i++
	}
	var from, to int
	switch {
	case len(o.members) == 1:
		from, to = o.open+1, o.close
	case i == 0:
		from, to = m.keyStart, o.members[1].keyStart
	default:
		from, to = o.members[i-1].valueEnd, m.valueEnd
	}
	return append(append([]byte{}, src[:from]...), src[to:]...)
}

// parseConfig reads a JSON configuration file's top object.
func parseConfig(path string, src []byte) (jsonObject, error) {
	start := skipSpace(src, 0, "")
	if start == len(src) || src[start] != '{' {
		return jsonObject{}, fmt.Errorf("%s: not a JSON object", path)
	}
	o, err := parseObject(src, start)
	if err == nil && skipSpace(src, o.close+1, "") != len(src) {
		err = errors.New("text after the object")
	}
	if err != nil {
		return o, fmt.Errorf("%s is not valid JSON (%v): fix it, or move it away, and install again", path, err)
	}
	return o, nil
}
