package anthropic

import (
	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/superagents/superagents"
)

// The Messages API caches a prompt's prefix up to each block marked with
// cache_control, in the order tools, system, messages, and allows at most
// four marks per request. A tool-use loop resends its whole history at
// every step, so the marks go where the next step can read them back:
//
//  1. the last tool definition (the tools rarely change within a session);
//  2. the last system block (tools + system: the agent's fixed prefix,
//     which also holds a forked child's digest, stored as its first
//     message so it never changes across the child's steps and resumes);
//  3. the end of the conversation: what this step writes and the next one
//     reads;
//  4. the end of the previous step's conversation (the turn before the
//     latest assistant turn), so this step reads what the previous one
//     wrote even when more than the API's look-back window of blocks was
//     added since; a first step has none, and marks instead the system
//     block before the last one: in a forked task, the end of its
//     digest's stable start, which a fork launched later from the same
//     parent reads back (see forkctx.Result.Parts).

// markCache places the cache breakpoints on params, whose turns are still
// in the given slice (marks set through the blocks' pointers stay set when
// the turns become messages). The first, on the last tool, comes with the
// tool list (toolCache), which requests share.
func markCache(params *sdk.MessageNewParams, turns []turn) {
	if n := len(params.System); n > 0 {
		params.System[n-1].CacheControl = sdk.NewCacheControlEphemeralParam()
	}
	if len(turns) == 0 {
		return
	}
	last := len(turns) - 1
	markTurn(turns[last])
	// The previous step's request ended just before the latest assistant
	// turn.
	for i := last; i > 0; i-- {
		if turns[i].role == superagents.RoleAssistant {
			if i-1 != last {
				markTurn(turns[i-1])
			}
			return
		}
	}
	if n := len(params.System); n > 2 { // the first is the agent's own prompt
		params.System[n-2].CacheControl = sdk.NewCacheControlEphemeralParam()
	}
}

// markTurn marks the turn's last block that can carry a mark (thinking
// blocks cannot).
func markTurn(t turn) {
	for i := len(t.blocks) - 1; i >= 0; i-- {
		if cc := t.blocks[i].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
			return
		}
	}
}
