package anthropic

import (
	"bytes"
	"strings"
	"sync"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/superagents/superagents"
)

// toolCache keeps the converted tool definitions of the tool lists a
// provider is given: an agent sends the same list at every step of every
// turn, and converting its schemas again for each request was about a
// quarter of what a running task held in memory. The lists it returns are
// shared by every request that uses them: nothing may write to them.
type toolCache struct {
	mu    sync.Mutex
	lists map[string]toolList // toolsKey → the converted list
}

// maxToolLists bounds the cache: agents with different tool sets are few;
// past this many, it starts again.
const maxToolLists = 64

type toolList struct {
	specs  []superagents.ToolSpec // what was converted (schemas copied)
	params []sdk.ToolUnionParam
}

// params returns the definitions of specs, with the cache breakpoint on
// the last one when mark is set (markCache's first mark).
func (c *toolCache) params(specs []superagents.ToolSpec, mark bool) ([]sdk.ToolUnionParam, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	key := toolsKey(specs, mark)
	c.mu.Lock()
	l, ok := c.lists[key]
	c.mu.Unlock()
	if ok && sameSpecs(l.specs, specs) {
		return l.params, nil
	}
	l = toolList{specs: make([]superagents.ToolSpec, len(specs)), params: make([]sdk.ToolUnionParam, len(specs))}
	for i, t := range specs {
		p, err := toolParam(t)
		if err != nil {
			return nil, err
		}
		l.params[i] = p
		t.InputSchema = bytes.Clone(t.InputSchema)
		l.specs[i] = t
	}
	if mark {
		l.params[len(specs)-1].OfTool.CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	c.mu.Lock()
	if c.lists == nil || len(c.lists) >= maxToolLists {
		c.lists = map[string]toolList{}
	}
	c.lists[key] = l
	c.mu.Unlock()
	return l.params, nil
}

// toolsKey names a tool list by its tools' names, in order, and the mark.
func toolsKey(specs []superagents.ToolSpec, mark bool) string {
	var b strings.Builder
	if mark {
		b.WriteByte('+')
	}
	for _, t := range specs {
		b.WriteString(t.Name)
		b.WriteByte(0)
	}
	return b.String()
}

// sameSpecs reports whether two tool lists say the same thing.
func sameSpecs(a, b []superagents.ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].InputSchema, b[i].InputSchema) {
			return false
		}
	}
	return true
}
