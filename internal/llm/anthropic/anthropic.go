// Package anthropic is the superagents.Provider for the Anthropic Messages
// API, through the official Go SDK.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/llm/internal/wire"
)

// DefaultBaseURL is the Anthropic API.
const DefaultBaseURL = "https://api.anthropic.com"

// Options configure a Provider.
type Options struct {
	// Name is the provider's name in messages; default "anthropic".
	Name string
	// APIKey authenticates the requests (the SDK sends it as a bearer
	// token). It never appears in errors.
	APIKey string
	// BaseURL defaults to DefaultBaseURL.
	BaseURL string
	// Limits are the timeouts, retries and output cap.
	Limits config.Limits
	// HTTPClient replaces the default client, whose transport waits at
	// most Limits.RequestTimeout for response headers (a client given here
	// keeps its own timeouts).
	HTTPClient *http.Client
	// NoPromptCache sends no cache_control breakpoints (see markCache).
	NoPromptCache bool
}

// Provider streams responses from the Messages API. It is safe for
// concurrent use.
type Provider struct {
	client sdk.Client
	limits config.Limits
	call   wire.Call
	// noCache turns the cache breakpoints off.
	noCache bool
	tools   toolCache
}

// New returns a Provider. The SDK reads nothing from the environment: the
// key and base URL are the ones given.
func New(o Options) (*Provider, error) {
	e, call, err := wire.Endpoint{Name: o.Name, APIKey: o.APIKey, BaseURL: o.BaseURL, Limits: o.Limits, HTTPClient: o.HTTPClient}.Resolve("anthropic", DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(e.BaseURL),
		option.WithHTTPClient(e.HTTPClient),
		option.WithMaxRetries(e.Limits.MaxRetries),
	}
	if e.APIKey != "" {
		opts = append(opts, option.WithAPIKey(e.APIKey))
	}
	return &Provider{client: sdk.NewClient(opts...), limits: e.Limits, call: call, noCache: o.NoPromptCache}, nil
}

// Stream sends the request and yields the response as it arrives: text and
// reasoning deltas, each tool call once complete, the usage, then a stop
// event. A failure ends the sequence with an error; cancelling ctx, or
// stopping the iteration, closes the connection at once.
func (p *Provider) Stream(ctx context.Context, req superagents.ModelRequest) iter.Seq2[superagents.StreamEvent, error] {
	return wire.Stream(ctx, p.call, p.limits.MaxRetries, req, p.params, p.attempt)
}

// attempt runs one streaming request.
func (p *Provider) attempt(ctx context.Context, params sdk.MessageNewParams, out *wire.Out) error {
	streamCtx, idle, release := wire.WatchIdle(ctx, p.limits.StreamIdleTimeout.Duration)
	defer release()
	stream := p.client.Messages.NewStreaming(streamCtx, params)
	defer stream.Close()
	idle.Touch() // the response has begun

	var (
		usage  superagents.Usage
		stop   superagents.StopReason
		done   bool
		blocks = map[int64]*block{}
	)
	for stream.Next() {
		idle.Touch()
		ev := stream.Current()
		switch ev.Type {
		case "message_start":
			u := ev.Message.Usage
			usage = superagents.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
		case "content_block_start":
			cb := ev.ContentBlock
			blocks[ev.Index] = &block{kind: cb.Type, id: cb.ID, name: cb.Name}
			if cb.Type == "redacted_thinking" && !out.Emit(superagents.StreamEvent{Type: superagents.EventReasoningDelta, Signature: cb.Data}) {
				return nil
			}
		case "content_block_delta":
			var e superagents.StreamEvent
			switch d := ev.Delta; d.Type {
			case "text_delta":
				e = superagents.StreamEvent{Type: superagents.EventTextDelta, Text: d.Text}
			case "thinking_delta":
				e = superagents.StreamEvent{Type: superagents.EventReasoningDelta, Text: d.Thinking}
			case "signature_delta":
				e = superagents.StreamEvent{Type: superagents.EventReasoningDelta, Signature: d.Signature}
			case "input_json_delta":
				if b := blocks[ev.Index]; b != nil {
					b.input.WriteString(d.PartialJSON)
				}
				continue
			default:
				continue
			}
			if !out.Emit(e) {
				return nil
			}
		case "content_block_stop":
			b := blocks[ev.Index]
			if b == nil || b.kind != "tool_use" {
				continue
			}
			call, err := b.toolCall()
			if err != nil {
				return p.call.Errorf(err, "%v", err)
			}
			if !out.Emit(superagents.StreamEvent{Type: superagents.EventToolCall, ToolCall: call}) {
				return nil
			}
		case "message_delta":
			stop = stopReason(ev.Delta.StopReason)
			u := ev.Usage
			usage.OutputTokens = u.OutputTokens
			// Newer API versions repeat the input counts here, cumulatively.
			usage.InputTokens = max(usage.InputTokens, u.InputTokens)
			usage.CacheReadTokens = max(usage.CacheReadTokens, u.CacheReadInputTokens)
			usage.CacheWriteTokens = max(usage.CacheWriteTokens, u.CacheCreationInputTokens)
		case "message_stop":
			done = true
		}
	}
	if err := stream.Err(); err != nil {
		return p.failed(ctx, streamCtx, err, out.Started())
	}
	if !done {
		return p.call.Incomplete()
	}
	out.Finish(usage, stop)
	return nil
}

// failed explains an error of the SDK: an API error with its status and
// message, or a connection problem.
func (p *Provider) failed(ctx, streamCtx context.Context, err error, started bool) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) && ctx.Err() == nil {
		status := apiErr.StatusCode
		if status == http.StatusOK { // an error event inside the stream
			status = 0
		}
		return p.call.APIError(status, string(apiErr.Type()), apiErr.Message)
	}
	return p.call.Failed(ctx, streamCtx, err, started)
}

// block is a content block being streamed.
type block struct {
	kind, id, name string
	input          strings.Builder
}

func (b *block) toolCall() (*superagents.Part, error) {
	input := strings.TrimSpace(b.input.String())
	if input == "" {
		input = "{}"
	}
	if !json.Valid([]byte(input)) {
		return nil, fmt.Errorf("the model sent invalid JSON arguments for tool %q (call %s)", b.name, b.id)
	}
	return &superagents.Part{Type: superagents.PartToolCall, CallID: b.id, Name: b.name, Input: json.RawMessage(input)}, nil
}

func stopReason(r sdk.StopReason) superagents.StopReason {
	switch r {
	case sdk.StopReasonEndTurn, sdk.StopReasonStopSequence:
		return superagents.StopEndTurn
	case sdk.StopReasonToolUse:
		return superagents.StopToolUse
	case sdk.StopReasonMaxTokens:
		return superagents.StopMaxTokens
	}
	return superagents.StopOther
}
