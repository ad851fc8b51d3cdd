package mcpclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/tools"
)

// Prefix starts the name of every MCP tool: mcp__<server>__<tool>, the
// convention hosts use, so that profiles can select "mcp__github__*".
const Prefix = "mcp__"

// ToolName is the name agents see for a server's tool. Characters model
// APIs refuse become '_'; a name longer than they allow (64) is cut and
// ends in a hash of the whole, so it stays unique.
func ToolName(server, tool string) string {
	name := Prefix + server + "__" + badToolChars.ReplaceAllString(tool, "_")
	if len(name) <= 64 {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return name[:55] + "_" + hex.EncodeToString(sum[:4])
}

var badToolChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// toolList returns the server's tools as the agent's tools.
func (s *server) toolList() []tools.Tool {
	s.mu.Lock()
	list := s.tools
	s.mu.Unlock()
	var out []tools.Tool
	seen := make(map[string]bool)
	for _, t := range list {
		name := ToolName(s.spec.Name, t.Name)
		if seen[name] {
			continue
		}
		seen[name] = true
		out = append(out, &tool{server: s, name: t.Name, spec: toolSpec(name, s.spec.Name, t), readOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint})
	}
	return out
}

func toolSpec(name, server string, t *mcp.Tool) sa.ToolSpec {
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = strings.TrimSpace(t.Title)
	}
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the MCP server %s.", t.Name, server)
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil || bytes.Equal(schema, []byte("null")) {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	return sa.ToolSpec{Name: name, Description: desc, InputSchema: schema}
}

// tool is one tool of a server.
type tool struct {
	server   *server
	name     string // as the server knows it
	spec     sa.ToolSpec
	readOnly bool
}

func (t *tool) Spec() sa.ToolSpec { return t.spec }

// ReadOnly trusts the server's readOnlyHint: a read_only policy keeps only
// the tools that say they change nothing.
func (t *tool) ReadOnly() bool { return t.readOnly }

// Run calls the tool. Everything that goes wrong short of ctx ending is an
// error result: the server not starting, dying, timing out, or answering
// with an error.
func (t *tool) Run(ctx context.Context, input json.RawMessage) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, fmt.Errorf("%s: %w", t.spec.Name, err)
	}
	args := input
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return tools.Errorf("invalid input for %s: the input must be a JSON object", t.spec.Name), nil
	}
	sess, err := t.server.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tools.Result{}, fmt.Errorf("%s: %w", t.spec.Name, ctx.Err())
		}
		return t.errorf("%s is unavailable: %v", t.spec.Name, err), nil
	}
	timeout := t.server.opts.ToolTimeout
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := sess.CallTool(callCtx, &mcp.CallToolParams{Name: t.name, Arguments: args})
	switch {
	case err == nil:
		return convert(res), nil
	case ctx.Err() != nil:
		return tools.Result{}, fmt.Errorf("%s: %w", t.spec.Name, ctx.Err())
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		return tools.Errorf("%s timed out after %s; the call was cancelled", t.spec.Name, timeout), nil
	case isProtocolError(err), !errors.Is(err, mcp.ErrConnectionClosed) && alive(ctx, sess):
		// The server answered with an error, or the answer was bad but the
		// server is fine.
		return t.errorf("%s failed: %v", t.spec.Name, err), nil
	}
	t.server.drop(sess, err)
	return t.errorf("%s failed: the MCP server %q stopped during the call (%v); it is restarted at the next call", t.spec.Name, t.server.spec.Name, err), nil
}

// errorf is an error result without the server's secrets.
func (t *tool) errorf(format string, args ...any) tools.Result {
	return tools.Errorf("%s", t.server.spec.redact(fmt.Sprintf(format, args...)))
}

// alive reports whether the server still answers a ping.
func alive(ctx context.Context, sess *mcp.ClientSession) bool {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	return sess.Ping(ctx, nil) == nil
}

// pingTimeout bounds the check of a server after a failed call.
const pingTimeout = 5 * time.Second

// convert turns a call's result into what the model reads: text as is,
// structured content as JSON, images and other binary content as a line
// saying what they were, capped like bash output. Servers are asked to
// send structured content as text too, often in a form easier to read
// (a file's text rather than a JSON string of it): when there is text,
// the structured copy is not repeated.
func convert(res *mcp.CallToolResult) tools.Result {
	var parts []string
	hasText := false
	for _, c := range res.Content {
		_, isText := c.(*mcp.TextContent)
		hasText = hasText || isText
		parts = append(parts, describeContent(c))
	}
	if res.StructuredContent != nil && !hasText {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	out := strings.Join(parts, "\n")
	if out == "" && res.IsError {
		out = "the tool reported an error without a message"
	}
	return tools.Result{Output: tools.HeadTail(out, tools.MaxBashOutputChars), IsError: res.IsError} // capped as bash is
}

func describeContent(c mcp.Content) string {
	switch c := c.(type) {
	case *mcp.TextContent:
		return c.Text
	case *mcp.ImageContent:
		return fmt.Sprintf("[image: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *mcp.AudioContent:
		return fmt.Sprintf("[audio: %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))
	case *mcp.ResourceLink:
		line := "[resource link: " + c.URI
		if c.Name != "" {
			line += " (" + c.Name + ")"
		}
		if c.MIMEType != "" {
			line += ", " + c.MIMEType
		}
		return line + "]"
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[resource]"
		}
		if r.Blob == nil {
			return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
		}
		return fmt.Sprintf("[resource %s: %s, %d bytes]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
	default:
		b, err := json.Marshal(c)
		if err != nil {
			return "[content of an unknown type]"
		}
		return string(b)
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
