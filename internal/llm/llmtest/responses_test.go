package llmtest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/superagents/superagents/internal/llm/llmtest"
)

// TestResponsesStream: the official OpenAI SDK reads the fake Responses
// API's stream: text deltas, a function call (with its namespace), and the
// completed response with its usage; the request is recorded.
func TestResponsesStream(t *testing.T) {
	srv := llmtest.NewResponses(t)
	srv.APIKey = "test-key"
	srv.Push(
		llmtest.Reply{Text: "Hello there, world."},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "superagents_task", Namespace: "mcp__superagents", Input: `{"prompt": "go"}`}}},
	)
	client := openai.NewClient(option.WithBaseURL(srv.URL+"/v1"), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	params := responses.ResponseNewParams{Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello.")}}

	stream := client.Responses.NewStreaming(context.Background(), params)
	var text strings.Builder
	var done responses.Response
	for stream.Next() {
		switch ev := stream.Current(); ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed":
			done = ev.AsResponseCompleted().Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "Hello there, world." || done.OutputText() != "Hello there, world." || done.Usage.OutputTokens == 0 {
		t.Fatalf("text deltas %q, completed text %q, usage %+v", text.String(), done.OutputText(), done.Usage)
	}

	stream = client.Responses.NewStreaming(context.Background(), params)
	var args strings.Builder
	done = responses.Response{}
	for stream.Next() {
		switch ev := stream.Current(); ev.Type {
		case "response.function_call_arguments.delta":
			args.WriteString(ev.Delta)
		case "response.completed":
			done = ev.AsResponseCompleted().Response
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(done.Output) != 1 {
		t.Fatalf("completed output: %+v", done.Output)
	}
	call := done.Output[0]
	if call.Type != "function_call" || call.Name != "superagents_task" || call.CallID == "" || call.Arguments.OfString != `{"prompt":"go"}` || args.String() != `{"prompt":"go"}` ||
		!strings.Contains(call.RawJSON(), `"namespace":"mcp__superagents"`) {
		t.Fatalf("function call %s, argument deltas %q", call.RawJSON(), args.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/v1/responses" || !reqs[0].Stream || !strings.Contains(string(reqs[0].Body), "Say hello.") {
		t.Fatalf("requests: %d, first %s %s", len(reqs), reqs[0].Path, reqs[0].Body)
	}
}
