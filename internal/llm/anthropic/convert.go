package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/internal/wire"
)

// params translates a request into the Messages API's terms:
//   - the system prompt, followed by the text of any system message of the
//     conversation (the API has no system turns), becomes "system";
//   - tool results become tool_result blocks of a user turn;
//   - reasoning is sent back only where the API requires it: the signed
//     thinking blocks of assistant turns that called tools after the last
//     user turn (the tool-use loop in progress). A reasoning part with a
//     signature and no text is a redacted_thinking block;
//   - cache breakpoints are placed as markCache says, unless NoPromptCache.
func (p *Provider) params(req superagents.ModelRequest) (sdk.MessageNewParams, error) {
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.limits.MaxOutputTokens
	}
	if maxTokens <= 0 {
		maxTokens = config.DefaultAnthropicMaxTokens
	}
	params := sdk.MessageNewParams{Model: sdk.Model(req.Model), MaxTokens: int64(maxTokens)}
	if s := strings.TrimSpace(req.System); s != "" {
		params.System = append(params.System, sdk.TextBlockParam{Text: req.System})
	}

	msgs := wire.Visible(req.Messages)
	loopStart := 0 // index of the first message after the last user turn
	for i, m := range msgs {
		if m.Role == superagents.RoleUser {
			loopStart = i + 1
		}
	}
	var turns []turn
	for i, m := range msgs {
		switch m.Role {
		case superagents.RoleSystem:
			// A block per part: a forked task's digest comes in parts that
			// later forks share the first of (forkctx.Result.Parts).
			for _, part := range m.Parts {
				if part.Type == superagents.PartText && part.Text != "" {
					params.System = append(params.System, sdk.TextBlockParam{Text: part.Text})
				}
			}
		case superagents.RoleUser:
			var blocks []sdk.ContentBlockParamUnion
			for _, part := range m.Parts {
				if part.Type == superagents.PartText {
					blocks = append(blocks, sdk.NewTextBlock(part.Text))
				}
			}
			turns = appendTurn(turns, superagents.RoleUser, blocks)
		case superagents.RoleTool:
			var blocks []sdk.ContentBlockParamUnion
			for _, part := range m.Parts {
				blocks = append(blocks, toolResult(part))
			}
			turns = appendTurn(turns, superagents.RoleUser, blocks)
		case superagents.RoleAssistant:
			turns = appendTurn(turns, superagents.RoleAssistant, assistantBlocks(m, i >= loopStart))
		}
	}
	tools, err := p.tools.params(req.Tools, !p.noCache)
	if err != nil {
		return sdk.MessageNewParams{}, err
	}
	params.Tools = tools
	if !p.noCache {
		markCache(&params, turns)
	}
	for _, t := range turns {
		if t.role == superagents.RoleUser {
			params.Messages = append(params.Messages, sdk.NewUserMessage(t.blocks...))
		} else {
			params.Messages = append(params.Messages, sdk.NewAssistantMessage(t.blocks...))
		}
	}
	if len(params.Messages) == 0 {
		return sdk.MessageNewParams{}, fmt.Errorf("%w: the conversation has no message for the model", superagents.ErrInvalid)
	}
	return params, nil
}

// turn is one user or assistant turn of the request.
type turn struct {
	role   superagents.Role
	blocks []sdk.ContentBlockParamUnion
}

// appendTurn adds blocks as a turn of role, merged into the previous turn
// when it has the same role (the API wants turns to alternate).
func appendTurn(turns []turn, role superagents.Role, blocks []sdk.ContentBlockParamUnion) []turn {
	if len(blocks) == 0 {
		return turns
	}
	if n := len(turns); n > 0 && turns[n-1].role == role {
		turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
		return turns
	}
	return append(turns, turn{role: role, blocks: blocks})
}

func assistantBlocks(m superagents.Message, inToolLoop bool) []sdk.ContentBlockParamUnion {
	callsTools := false
	for _, part := range m.Parts {
		callsTools = callsTools || part.Type == superagents.PartToolCall
	}
	var blocks []sdk.ContentBlockParamUnion
	for _, part := range m.Parts {
		switch part.Type {
		case superagents.PartReasoning:
			if !inToolLoop || !callsTools || part.Signature == "" {
				continue
			}
			if part.Text == "" {
				blocks = append(blocks, sdk.NewRedactedThinkingBlock(part.Signature))
			} else {
				blocks = append(blocks, sdk.NewThinkingBlock(part.Signature, part.Text))
			}
		case superagents.PartText:
			blocks = append(blocks, sdk.NewTextBlock(part.Text))
		case superagents.PartToolCall:
			input := part.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			blocks = append(blocks, sdk.NewToolUseBlock(part.CallID, input, part.Name))
		}
	}
	return blocks
}

func toolResult(part superagents.Part) sdk.ContentBlockParamUnion {
	block := sdk.ToolResultBlockParam{ToolUseID: part.CallID}
	if part.IsError {
		block.IsError = sdk.Bool(true)
	}
	// The API refuses empty text blocks; an empty result has no content.
	if part.Output != "" {
		block.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: part.Output}}}
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &block}
}

// toolParam turns a tool's JSON Schema into the SDK's input_schema, keeping
// every keyword.
func toolParam(t superagents.ToolSpec) (sdk.ToolUnionParam, error) {
	schema, err := wire.Schema(t)
	if err != nil {
		return sdk.ToolUnionParam{}, err
	}
	var in sdk.ToolInputSchemaParam
	in.Properties = schema["properties"]
	if in.Properties == nil {
		in.Properties = map[string]any{} // the API requires an input_schema
	}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				in.Required = append(in.Required, s)
			}
		}
	}
	delete(schema, "type")
	delete(schema, "properties")
	delete(schema, "required")
	if len(schema) > 0 {
		in.ExtraFields = schema
	}
	tool := sdk.ToolUnionParamOfTool(in, t.Name)
	if t.Description != "" {
		tool.OfTool.Description = sdk.String(t.Description)
	}
	return tool, nil
}
