package mcpclient

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/superagents/superagents/internal/tools"
)

func TestConvert(t *testing.T) {
	size := int64(10)
	tests := []struct {
		name    string
		res     *mcp.CallToolResult
		want    string
		isError bool
	}{
		{"text", &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}}, "a\nb", false},
		{"structured only", &mcp.CallToolResult{StructuredContent: map[string]any{"b": 1, "a": "x"}}, `{"a":"x","b":1}`, false},
		{"structured repeated as text is shown once", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: `{"b": 1, "a": "x"}`}},
			StructuredContent: map[string]any{"a": "x", "b": 1},
		}, `{"b": 1, "a": "x"}`, false},
		{"text is not repeated as structured content", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: "line 1\nline 2"}},
			StructuredContent: map[string]any{"content": "line 1\nline 2"},
		}, "line 1\nline 2", false},
		{"structured content next to an image", &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}},
			StructuredContent: []any{1, 2},
		}, "[image: image/png, 1 bytes]\n[1,2]", false},
		{"image", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: make([]byte, 1234), MIMEType: "image/png"}}}, "[image: image/png, 1234 bytes]", false},
		{"audio without type", &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: []byte("abc")}}}, "[audio: unknown type, 3 bytes]", false},
		{"resource link", &mcp.CallToolResult{Content: []mcp.Content{&mcp.ResourceLink{URI: "file:///a", Name: "a", MIMEType: "text/plain", Size: &size}}}, "[resource link: file:///a (a), text/plain]", false},
		{"text resource", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///a", Text: "hello"}}}}, "[resource file:///a]\nhello", false},
		{"blob resource", &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///b", MIMEType: "application/gzip", Blob: make([]byte, 7)}}}}, "[resource file:///b: application/gzip, 7 bytes]", false},
		{"error", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such issue"}}}, "no such issue", true},
		{"error without text", &mcp.CallToolResult{IsError: true}, "the tool reported an error without a message", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := convert(tt.res)
			if got.Output != tt.want || got.IsError != tt.isError {
				t.Fatalf("convert = %q (error %v), want %q (error %v)", got.Output, got.IsError, tt.want, tt.isError)
			}
		})
	}
}

// TestConvertCaps: a huge result keeps its head and tail, as bash output
// does.
func TestConvertCaps(t *testing.T) {
	text := "HEAD" + strings.Repeat("x", 3*tools.MaxBashOutputChars) + "TAIL"
	got := convert(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}).Output
	if len(got) > tools.MaxBashOutputChars+200 || !strings.HasPrefix(got, "HEAD") || !strings.HasSuffix(got, "TAIL") || !strings.Contains(got, "characters cut") {
		t.Fatalf("capped output: %d chars, %q...%q", len(got), got[:10], got[len(got)-10:])
	}
}
