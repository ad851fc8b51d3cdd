// Package openai is the superagents.Provider for the OpenAI Chat
// Completions API and the servers compatible with it (Ollama, vLLM,
// llama.cpp server, LM Studio, OpenRouter), through the official Go SDK.
//
// Tool calls are accumulated here rather than by the SDK's accumulator,
// because compatible servers differ in how they number parallel calls:
// Ollama gives every call index 0. A delta whose index belongs to a call
// with a different, non-empty id starts a new call.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/internal/wire"
)

// DefaultBaseURL is the OpenAI API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Options configure a Provider.
type Options struct {
	// Name is the provider's name in messages ("openai", "ollama", ...);
	// default "openai".
	Name string
	// APIKey is sent as a bearer token when set. It never appears in errors.
	APIKey string
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// Limits are the timeouts, retries and output cap.
	Limits config.Limits
	// StreamUsage asks for token usage at the end of the stream
	// (stream_options.include_usage).
	StreamUsage bool
	// MaxCompletionTokens sends the output cap as max_completion_tokens,
	// OpenAI's current name, instead of max_tokens, which compatible
	// servers understand.
	MaxCompletionTokens bool
	// HTTPClient replaces the default client, whose transport waits at
	// most Limits.RequestTimeout for response headers (a client given here
	// keeps its own timeouts).
	HTTPClient *http.Client
}

// Provider streams chat completions. It is safe for concurrent use.
type Provider struct {
	chat sdk.ChatCompletionService
	opts Options
	call wire.Call
}

// New returns a Provider. Nothing is read from the environment (no
// OPENAI_* variable reaches a compatible server by accident).
func New(o Options) (*Provider, error) {
	e, call, err := wire.Endpoint{Name: o.Name, APIKey: o.APIKey, BaseURL: o.BaseURL, Limits: o.Limits, HTTPClient: o.HTTPClient}.Resolve("openai", DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		option.WithBaseURL(e.BaseURL),
		option.WithHTTPClient(e.HTTPClient),
		option.WithMaxRetries(e.Limits.MaxRetries),
	}
	if e.APIKey != "" {
		opts = append(opts, option.WithAPIKey(e.APIKey))
	}
	o.Limits = e.Limits
	// The service alone, not sdk.NewClient, which would read OPENAI_*.
	return &Provider{chat: sdk.NewChatCompletionService(opts...), opts: o, call: call}, nil
}

// Stream sends the request and yields the response as it arrives: text and
// reasoning deltas, then each tool call, the usage and a stop event. A
// failure ends the sequence with an error; cancelling ctx, or stopping the
// iteration, closes the connection at once.
func (p *Provider) Stream(ctx context.Context, req superagents.ModelRequest) iter.Seq2[superagents.StreamEvent, error] {
	return wire.Stream(ctx, p.call, p.opts.Limits.MaxRetries, req, p.params, p.attempt)
}

// attempt runs one streaming request.
func (p *Provider) attempt(ctx context.Context, params sdk.ChatCompletionNewParams, out *wire.Out) error {
	streamCtx, idle, release := wire.WatchIdle(ctx, p.opts.Limits.StreamIdleTimeout.Duration)
	defer release()
	stream := p.chat.NewStreaming(streamCtx, params)
	defer stream.Close()
	idle.Touch() // the response has begun

	var (
		calls  toolCalls
		usage  superagents.Usage
		finish string
	)
	for stream.Next() {
		idle.Touch()
		chunk := stream.Current()
		if u := chunk.Usage; u.PromptTokens > 0 || u.CompletionTokens > 0 {
			cached := u.PromptTokensDetails.CachedTokens
			usage = superagents.Usage{InputTokens: u.PromptTokens - cached, OutputTokens: u.CompletionTokens, CacheReadTokens: cached}
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue // we ask for one choice
			}
			d := choice.Delta
			if r := reasoning(d); r != "" && !out.Emit(superagents.StreamEvent{Type: superagents.EventReasoningDelta, Text: r}) {
				return nil
			}
			if d.Content != "" && !out.Emit(superagents.StreamEvent{Type: superagents.EventTextDelta, Text: d.Content}) {
				return nil
			}
			for _, tc := range d.ToolCalls {
				calls.add(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments)
			}
			if choice.FinishReason != "" {
				finish = choice.FinishReason
			}
		}
	}
	if err := stream.Err(); err != nil {
		return p.failed(ctx, streamCtx, err, out.Started())
	}
	if finish == "" {
		return p.call.Incomplete()
	}
	parts, err := calls.parts()
	if err != nil {
		return p.call.Errorf(err, "%v", err)
	}
	for i := range parts {
		if !out.Emit(superagents.StreamEvent{Type: superagents.EventToolCall, ToolCall: &parts[i]}) {
			return nil
		}
	}
	out.Finish(usage, stopReason(finish, len(parts) > 0))
	return nil
}

// reasoning returns the reasoning text of a delta. The API has no such
// field; compatible servers use reasoning_content (vLLM, DeepSeek,
// llama.cpp) or reasoning (Ollama, OpenRouter).
func reasoning(d sdk.ChatCompletionChunkChoiceDelta) string {
	for _, name := range []string{"reasoning_content", "reasoning"} {
		if f, ok := d.JSON.ExtraFields[name]; ok {
			var s string
			if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
				return s
			}
		}
	}
	return ""
}

// failed explains an error of the SDK: an API error with its status and
// message, an error event inside the stream, or a connection problem.
func (p *Provider) failed(ctx, streamCtx context.Context, err error, started bool) error {
	if ctx.Err() == nil {
		var apiErr *sdk.Error
		if errors.As(err, &apiErr) {
			kind := apiErr.Type
			if kind == "" {
				kind = apiErr.Code
			}
			return p.call.APIError(apiErr.StatusCode, kind, apiErr.Message)
		}
		var streamErr *ssestream.StreamError
		if errors.As(err, &streamErr) {
			var body struct {
				Error struct{ Message, Type string }
			}
			if json.Unmarshal(streamErr.Event.Data, &body) == nil && body.Error.Message != "" {
				return p.call.APIError(0, body.Error.Type, body.Error.Message)
			}
			return p.call.Errorf(err, "%v", err)
		}
	}
	return p.call.Failed(ctx, streamCtx, err, started)
}

// stopReason maps finish_reason. Some servers (Ollama among them) say
// "stop" after tool calls, so calls decide.
func stopReason(finish string, calledTools bool) superagents.StopReason {
	switch {
	case calledTools || finish == "tool_calls" || finish == "function_call":
		return superagents.StopToolUse
	case finish == "stop":
		return superagents.StopEndTurn
	case finish == "length":
		return superagents.StopMaxTokens
	}
	return superagents.StopOther
}
