package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// The JSON editing of configuration files: what is added or removed
// changes, and every other byte stays.

func TestAddMember(t *testing.T) {
	value := map[string]any{"type": "local"}
	cases := []struct {
		name, src, path string // path: "" the top object, else its member
		want            string
	}{
		{name: "empty object", src: "{}", want: "{\n  \"k\": {\n    \"type\": \"local\"\n  }\n}"},
		{name: "empty object, indented file", src: "{\n}\n", want: "{\n  \"k\": {\n    \"type\": \"local\"\n  }\n}\n"},
		{
			name: "after the last member, its indentation",
			src:  "{\n    \"a\": 1,\n    \"b\": [1, 2]\n}\n",
			want: "{\n    \"a\": 1,\n    \"b\": [1, 2],\n    \"k\": {\n      \"type\": \"local\"\n    }\n}\n",
		},
		{
			name: "tabs kept",
			src:  "{\n\t\"a\": true\n}",
			want: "{\n\t\"a\": true,\n\t\"k\": {\n\t  \"type\": \"local\"\n\t}\n}",
		},
		{
			name: "one line",
			src:  `{"a": 1, "b": "x"}`,
			want: "{\"a\": 1, \"b\": \"x\",\n\"k\": {\n  \"type\": \"local\"\n}}",
		},
		{
			name: "a nested object",
			src:  "{\n  \"mcp\": {\n    \"other\": {}\n  },\n  \"z\": 0\n}\n",
			path: "mcp",
			want: "{\n  \"mcp\": {\n    \"other\": {},\n    \"k\": {\n      \"type\": \"local\"\n    }\n  },\n  \"z\": 0\n}\n",
		},
		{
			name: "an empty nested object",
			src:  "{\n  \"mcp\": {},\n  \"z\": 0\n}\n",
			path: "mcp",
			want: "{\n  \"mcp\": {\n    \"k\": {\n      \"type\": \"local\"\n    }\n  },\n  \"z\": 0\n}\n",
		},
		{
			name: "strings with braces and escapes",
			src:  "{\n  \"a\": \"}{\\\"\",\n  \"b\": {\"c\": \"]\"}\n}",
			want: "{\n  \"a\": \"}{\\\"\",\n  \"b\": {\"c\": \"]\"},\n  \"k\": {\n    \"type\": \"local\"\n  }\n}",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := objectAt(t, []byte(c.src), c.path)
			got, err := addMember([]byte(c.src), obj, "k", value)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			if !json.Valid(got) {
				t.Errorf("not valid JSON:\n%s", got)
			}
		})
	}
}

func TestRemoveMember(t *testing.T) {
	cases := []struct {
		name, src, path, key string
		want                 string
	}{
		{name: "the only member", src: "{\n  \"k\": 1\n}\n", key: "k", want: "{}\n"},
		{name: "the first", src: "{\n  \"k\": 1,\n  \"a\": 2\n}", key: "k", want: "{\n  \"a\": 2\n}"},
		{name: "the last", src: "{\n  \"a\": 2,\n  \"k\": {\"x\": [1]}\n}", key: "k", want: "{\n  \"a\": 2\n}"},
		{name: "in the middle", src: `{"a": 1, "k": 2, "b": 3}`, key: "k", want: `{"a": 1, "b": 3}`},
		{
			name: "nested",
			src:  "{\n  \"mcp\": {\n    \"other\": {},\n    \"k\": {}\n  }\n}",
			path: "mcp", key: "k",
			want: "{\n  \"mcp\": {\n    \"other\": {}\n  }\n}",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := []byte(c.src)
			obj := objectAt(t, src, c.path)
			m, ok := obj.member(c.key)
			if !ok {
				t.Fatalf("no member %q", c.key)
			}
			got := removeMember(src, obj, m)
			if string(got) != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// TestAddRemoveMember: adding a member then removing it gives the file
// back byte for byte.
func TestAddRemoveMember(t *testing.T) {
	for _, src := range []string{
		"{\n  \"a\": 1\n}\n",
		"{\n    \"$schema\": \"x\",\n    \"theme\": \"dark\"\n}",
		`{"a":{"b":[1,{"c":null}]}}`,
	} {
		obj := objectAt(t, []byte(src), "")
		added, err := addMember([]byte(src), obj, "k", map[string]any{"v": []string{"x"}})
		if err != nil {
			t.Fatal(err)
		}
		obj = objectAt(t, added, "")
		m, _ := obj.member("k")
		if got := string(removeMember(added, obj, m)); got != src {
			t.Errorf("add then remove:\n%s\nwant\n%s", got, src)
		}
	}
}

func TestParseConfig(t *testing.T) {
	cases := []struct {
		name, src string
		keys      []string
		err       string // "" no error, else a part of it
	}{
		{name: "members", src: " {\"a\": 1, \"b\": {\"c\": 2}}\n", keys: []string{"a", "b"}},
		{name: "empty", src: "{}", keys: nil},
		{name: "not an object", src: "[1]", err: "not a JSON object"},
		{name: "nothing", src: "  \n", err: "not a JSON object"},
		{name: "text after", src: "{} x", err: "text after the object"},
		{name: "broken", src: `{"a": }`, err: "not valid JSON"},
		{name: "comments", src: "{\n  // a comment\n  \"a\": 1\n}", err: "not valid JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj, err := parseConfig("f.json", []byte(c.src))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, m := range obj.members {
				keys = append(keys, m.key)
				var v any
				if err := json.Unmarshal([]byte(c.src[m.valueStart:m.valueEnd]), &v); err != nil {
					t.Errorf("member %s: value %q: %v", m.key, c.src[m.valueStart:m.valueEnd], err)
				}
			}
			if strings.Join(keys, ",") != strings.Join(c.keys, ",") {
				t.Errorf("keys %v, want %v", keys, c.keys)
			}
		})
	}
}

// objectAt parses the top object of src, or its member path's object.
func objectAt(t *testing.T, src []byte, path string) jsonObject {
	t.Helper()
	obj, err := parseConfig("f.json", src)
	if err != nil {
		t.Fatal(err)
	}
	if path == "" {
		return obj
	}
	m, ok := obj.member(path)
	if !ok {
		t.Fatalf("no member %q", path)
	}
	inner, err := parseObject(src, m.valueStart)
	if err != nil {
		t.Fatal(err)
	}
	return inner
}
