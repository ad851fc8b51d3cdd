package tools

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/superagents/superagents/sandbox"
)

// MaxEditBytes is the largest file edit changes; bigger files are not
// source a model should be editing by string replacement.
const MaxEditBytes = 64 << 20

type editInput struct {
	Path       string `json:"path" jsonschema:"The file to change: a path relative to the workspace, or an absolute path inside it."`
	OldString  string `json:"old_string" jsonschema:"The exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is set."`
	NewString  string `json:"new_string" jsonschema:"The text to put in its place."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace every occurrence of old_string instead of requiring exactly one."`
}

const editDescription = `Replace exact text in a file of the workspace.

- old_string must match the file exactly, whitespace and indentation included (copy it from read's output without the line-number prefix).
- It must occur exactly once; otherwise the edit fails and nothing changes: add surrounding lines to make it unique, or set replace_all to change every occurrence.
- Use write to create a new file.`

func newEdit(ws *Workspace, sb *sandbox.Sandbox) (Tool, error) {
	return New(Edit, editDescription, false, func(ctx context.Context, in editInput) (Result, error) {
		if refusal := sb.WriteRefusal(); refusal != "" {
			return Errorf("%s", refusal), nil
		}
		if rel, err := ws.Rel(in.Path); err == nil {
			if refusal := sb.ProtectedRefusal(ws.Abs(rel)); refusal != "" {
				return Errorf("%s", refusal), nil
			}
		}
		return editFile(ws, in)
	})
}

func editFile(ws *Workspace, in editInput) (Result, error) {
	if in.OldString == "" {
		return Errorf("old_string is empty; to create a file or replace all of it use write"), nil
	}
	if in.OldString == in.NewString {
		return Errorf("old_string and new_string are the same; nothing to change"), nil
	}
	rel, info, err := ws.stat(in.Path)
	if err != nil {
		return Errorf("%v", err), nil
	}
	if !info.Mode().IsRegular() {
		return Errorf("%s is not a regular file", rel), nil
	}
	if info.Size() > MaxEditBytes {
		return Errorf("%s is %d bytes, more than edit handles (%d)", rel, info.Size(), MaxEditBytes), nil
	}
	data, err := ws.Root().ReadFile(rel)
	if err != nil {
		return Errorf("%s", describeFSError(rel, err)), nil
	}
	if isBinary(data[:min(len(data), sniffBytes)]) {
		return Errorf("%s is a binary file; edit changes text files only", rel), nil
	}
	content, old, repl := string(data), in.OldString, in.NewString
	count := strings.Count(content, old)
	if count == 0 && strings.Contains(content, "\r\n") && strings.Contains(old, "\n") {
		// read shows lines without their "\r"; match the file's endings.
		old = strings.ReplaceAll(old, "\n", "\r\n")
		repl = strings.ReplaceAll(repl, "\n", "\r\n")
		count = strings.Count(content, old)
	}
	switch {
	case count == 0:
		msg := fmt.Sprintf("old_string was not found in %s; it must match exactly, including whitespace and indentation: read the file and copy the text", rel)
		if trimmed := strings.TrimSpace(in.OldString); trimmed != "" && trimmed != in.OldString && strings.Contains(content, trimmed) {
			msg += " (the text occurs with different surrounding whitespace)"
		}
		return Errorf("%s", msg), nil
	case count > 1 && !in.ReplaceAll:
		return Errorf("old_string occurs %d times in %s (at lines %s); add surrounding lines to make it unique, or set replace_all to replace every occurrence",
			count, rel, occurrenceLines(content, old, 10)), nil
	}
	first := 1 + strings.Count(content[:strings.Index(content, old)], "\n")
	updated := strings.ReplaceAll(content, old, repl)
	if err := ws.Root().WriteFile(rel, []byte(updated), info.Mode().Perm()); err != nil {
		return Errorf("write %s", describeFSError(rel, err)), nil
	}
	if count == 1 {
		return Result{Output: fmt.Sprintf("edited %s: replaced 1 occurrence at line %d", rel, first)}, nil
	}
	return Result{Output: fmt.Sprintf("edited %s: replaced %d occurrences, the first at line %d", rel, count, first)}, nil
}

// occurrenceLines lists the line numbers where old starts, at most limit
// of them.
func occurrenceLines(content, old string, limit int) string {
	var lines []string
	line, pos := 1, 0
	for len(lines) < limit {
		i := strings.Index(content[pos:], old)
		if i < 0 {
			break
		}
		line += strings.Count(content[pos:pos+i], "\n")
		lines = append(lines, strconv.Itoa(line))
		line += strings.Count(old, "\n")
		pos += i + len(old)
	}
	out := strings.Join(lines, ", ")
	if strings.Count(content, old) > limit {
		out += ", ..."
	}
	return out
}
