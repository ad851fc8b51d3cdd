package openai

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/llm/internal/wire"
)

// params translates a request into Chat Completions terms: the system
// prompt first, then one message per turn, one "tool" message per tool
// result (a failed one prefixed "Error: ", as the API has no error flag).
// Reasoning is never sent back: the API has no place for it.
func (p *Provider) params(req superagents.ModelRequest) (sdk.ChatCompletionNewParams, error) {
	params := sdk.ChatCompletionNewParams{Model: shared.ChatModel(req.Model)}
	if maxTokens := max(req.MaxTokens, 0); maxTokens > 0 || p.opts.Limits.MaxOutputTokens > 0 {
		if maxTokens == 0 {
			maxTokens = p.opts.Limits.MaxOutputTokens
		}
		if p.opts.MaxCompletionTokens {
			params.MaxCompletionTokens = sdk.Int(int64(maxTokens))
		} else {
			params.MaxTokens = sdk.Int(int64(maxTokens))
		}
	}
	if p.opts.StreamUsage {
		params.StreamOptions.IncludeUsage = sdk.Bool(true)
	}
	if strings.TrimSpace(req.System) != "" {
		params.Messages = append(params.Messages, sdk.SystemMessage(req.System))
	}
	conversation := 0
	for _, m := range wire.Visible(req.Messages) {
		switch m.Role {
		case superagents.RoleSystem:
			if conversation == 0 {
				if key := cacheKey(req, m); key != "" {
					params.PromptCacheKey = sdk.String(key)
				}
			}
			params.Messages = append(params.Messages, sdk.SystemMessage(wire.Text(m)))
		case superagents.RoleUser:
			params.Messages = append(params.Messages, sdk.UserMessage(wire.Text(m)))
		case superagents.RoleAssistant:
			params.Messages = append(params.Messages, assistant(m))
		case superagents.RoleTool:
			for _, r := range m.Parts {
				out := r.Output
				if r.IsError {
					out = "Error: " + out
				}
				params.Messages = append(params.Messages, sdk.ToolMessage(out, r.CallID))
			}
		default:
			continue
		}
		conversation++
	}
	if conversation == 0 {
		return sdk.ChatCompletionNewParams{}, fmt.Errorf("%w: the conversation has no message for the model", superagents.ErrInvalid)
	}
	for _, t := range req.Tools {
		tool, err := toolParam(t)
		if err != nil {
			return sdk.ChatCompletionNewParams{}, err
		}
		params.Tools = append(params.Tools, tool)
	}
	return params, nil
}

func assistant(m superagents.Message) sdk.ChatCompletionMessageParamUnion {
	var a sdk.ChatCompletionAssistantMessageParam
	if text := wire.Text(m); text != "" {
		a.Content.OfString = sdk.String(text)
	}
	for _, part := range m.Parts {
		if part.Type != superagents.PartToolCall {
			continue
		}
		args := string(part.Input)
		if args == "" {
			args = "{}"
		}
		a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
				ID:       part.CallID,
				Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: part.Name, Arguments: args},
			},
		})
	}
	return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

func toolParam(t superagents.ToolSpec) (sdk.ChatCompletionToolUnionParam, error) {
	parsed, err := wire.Schema(t)
	if err != nil {
		return sdk.ChatCompletionToolUnionParam{}, err
	}
	schema := shared.FunctionParameters(parsed)
	if len(schema) == 0 {
		schema = shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	}
	def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
	if t.Description != "" {
		def.Description = sdk.String(t.Description)
	}
	return sdk.ChatCompletionFunctionTool(def), nil
}

// cacheKey is the prompt_cache_key of a conversation that opens with a
// system message: a forked task's digest. OpenAI sends requests with the
// same key to the same cache; the key names the model, the agent's prompt
// and the digest's first part (forkctx.Result.Parts), which the sibling
// forks of one parent share and later forks of it too, so that they all
// land where their common prefix is cached.
func cacheKey(req superagents.ModelRequest, digest superagents.Message) string {
	for _, part := range digest.Parts {
		if part.Type == superagents.PartText && part.Text != "" {
			h := sha256.New()
			for _, s := range []string{req.Model, req.System, part.Text} {
				h.Write([]byte(s))
				h.Write([]byte{0})
			}
			return "superagents-fork-" + hex.EncodeToString(h.Sum(nil))[:32]
		}
	}
	return ""
}
