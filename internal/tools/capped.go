package tools

import "strings"

// HeadTail caps s to limit characters the way bash output is capped: the
// head and the tail are kept around a note of how many characters were
// cut. Tools outside this package (MCP servers' tools) use it too.
func HeadTail(s string, limit int) string {
	h := newHeadTail(limit)
	_, _ = h.Write([]byte(s))
	return strings.ToValidUTF8(h.String(), "\uFFFD")
}
