package anthropic

import (
	"bytes"
	"sync"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/superagents/superagents"
)

// toolCache keeps each tool's converted parameter: a tool's schema is the
// same at every step of every turn, and decoding it again for each
// request was about a quarter of what a running task held in memory.
type toolCache struct {
	mu     sync.Mutex
	byName map[string]cachedTool
}

type cachedTool struct {
	description string
	schema      []byte
	param       *sdk.ToolParam
}

// param returns the tool's parameter, converting it once per name, and
// again only when its description or schema change.
func (c *toolCache) param(t superagents.ToolSpec) (sdk.ToolUnionParam, error) {
	c.mu.Lock()
	e, ok := c.byName[t.Name]
	c.mu.Unlock()
	if !ok || e.description != t.Description || !bytes.Equal(e.schema, t.InputSchema) {
		u, err := toolParam(t)
		if err != nil {
			return sdk.ToolUnionParam{}, err
		}
		e = cachedTool{description: t.Description, schema: bytes.Clone(t.InputSchema), param: u.OfTool}
		c.mu.Lock()
		if c.byName == nil {
			c.byName = map[string]cachedTool{}
		}
		c.byName[t.Name] = e
		c.mu.Unlock()
	}
	// Shared by every request, read only: markCache puts its breakpoint on
	// a copy.
	return sdk.ToolUnionParam{OfTool: e.param}, nil
}
