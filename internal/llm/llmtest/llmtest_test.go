package llmtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// post sends a JSON body and returns the response.
func post(t *testing.T, url, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type sse struct {
	name string
	data string
}

// readSSE reads server-sent events until the body ends.
func readSSE(t *testing.T, r io.Reader) ([]sse, error) {
	t.Helper()
	var out []sse
	var cur sse
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			out = append(out, cur)
			cur = sse{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		}
	}
	return out, sc.Err()
}

func TestAnthropicStreamWireFormat(t *testing.T) {
	srv := NewAnthropic(t)
	srv.Push(Reply{Reasoning: "hm", Signature: "sig", Text: "Hello world", ToolCalls: []ToolCall{{Name: "read", Input: `{"path":"a"}`}}, Usage: Usage{InputTokens: 5, OutputTokens: 7}})
	resp := post(t, srv.BaseURL()+"/v1/messages", `{"model":"claude-x","stream":true,"max_tokens":10,"messages":[]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events, err := readSSE(t, resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range events {
		names = append(names, e.name)
	}
	want := []string{
		"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", // thinking + signature
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", // text, two words
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", // tool_use in two pieces
		"message_delta", "message_stop",
	}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("event names (-want +got):\n%s", diff)
	}
	var start struct {
		Message struct {
			Model string
			Usage struct {
				InputTokens int `json:"input_tokens"`
			}
		}
	}
	if err := json.Unmarshal([]byte(events[0].data), &start); err != nil || start.Message.Model != "claude-x" || start.Message.Usage.InputTokens != 5 {
		t.Errorf("message_start = %s", events[0].data)
	}
	var tool struct {
		ContentBlock struct{ Type, ID, Name string } `json:"content_block"`
	}
	if err := json.Unmarshal([]byte(events[10].data), &tool); err != nil || tool.ContentBlock.Type != "tool_use" || tool.ContentBlock.ID == "" || tool.ContentBlock.Name != "read" {
		t.Errorf("tool_use start = %s", events[10].data)
	}
	if !strings.Contains(events[14].data, `"stop_reason":"tool_use"`) || !strings.Contains(events[14].data, `"output_tokens":7`) {
		t.Errorf("message_delta = %s", events[14].data)
	}
}

func TestOpenAIStreamWireFormat(t *testing.T) {
	srv := NewOpenAI(t)
	reply := Reply{Text: "Hi there", SharedIndex: true, ToolCalls: []ToolCall{{ID: "c1", Name: "a"}, {ID: "c2", Name: "b", Input: `{"x":1}`}}}
	srv.Push(reply, reply)
	for _, usage := range []bool{false, true} {
		body := `{"model":"m","stream":true,"messages":[]}`
		if usage {
			body = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}`
		}
		events, err := readSSE(t, post(t, srv.BaseURL()+"/chat/completions", body).Body)
		if err != nil {
			t.Fatal(err)
		}
		if last := events[len(events)-1]; last.data != "[DONE]" {
			t.Errorf("last event %q, want [DONE]", last.data)
		}
		sawUsage, finish := false, ""
		for _, e := range events[:len(events)-1] {
			var chunk struct {
				Choices []struct {
					Delta struct {
						ToolCalls []struct{ Index int } `json:"tool_calls"`
					}
					FinishReason *string `json:"finish_reason"`
				}
				Usage *struct {
					PromptTokens int `json:"prompt_tokens"`
				}
			}
			if err := json.Unmarshal([]byte(e.data), &chunk); err != nil {
				t.Fatalf("chunk %q: %v", e.data, err)
			}
			sawUsage = sawUsage || chunk.Usage != nil
			for _, c := range chunk.Choices {
				for _, tc := range c.Delta.ToolCalls {
					if tc.Index != 0 {
						t.Errorf("tool call index %d with SharedIndex", tc.Index)
					}
				}
				if c.FinishReason != nil {
					finish = *c.FinishReason
				}
			}
		}
		if sawUsage != usage {
			t.Errorf("include_usage %v: usage chunk sent = %v", usage, sawUsage)
		}
		if finish != "tool_calls" {
			t.Errorf("finish_reason = %q", finish)
		}
	}
}

func TestNonStreaming(t *testing.T) {
	reply := Reply{Text: "Hello", ToolCalls: []ToolCall{{ID: "id1", Name: "read", Input: `{"path":"a"}`}}, Usage: Usage{InputTokens: 3, OutputTokens: 4}}
	t.Run("anthropic", func(t *testing.T) {
		srv := NewAnthropic(t)
		srv.Push(reply)
		var msg struct {
			Type       string
			Model      string
			StopReason string `json:"stop_reason"`
			Content    []struct {
				Type, Text, ID, Name string
				Input                json.RawMessage
			}
			Usage struct {
				OutputTokens int `json:"output_tokens"`
			}
		}
		if err := json.NewDecoder(post(t, srv.URL+"/v1/messages", `{"model":"c","max_tokens":5,"messages":[]}`).Body).Decode(&msg); err != nil {
			t.Fatal(err)
		}
		if msg.Type != "message" || msg.Model != "c" || msg.StopReason != "tool_use" || len(msg.Content) != 2 ||
			msg.Content[0].Text != "Hello" || msg.Content[1].ID != "id1" || string(msg.Content[1].Input) != `{"path":"a"}` || msg.Usage.OutputTokens != 4 {
			t.Errorf("message = %+v", msg)
		}
	})
	t.Run("openai", func(t *testing.T) {
		srv := NewOpenAI(t)
		srv.Push(reply)
		var c struct {
			Object  string
			Choices []struct {
				FinishReason string `json:"finish_reason"`
				Message      struct {
					Content   string
					ToolCalls []struct {
						ID       string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
			}
		}
		if err := json.NewDecoder(post(t, srv.BaseURL()+"/chat/completions", `{"model":"m","messages":[]}`).Body).Decode(&c); err != nil {
			t.Fatal(err)
		}
		if c.Object != "chat.completion" || len(c.Choices) != 1 || c.Choices[0].FinishReason != "tool_calls" ||
			c.Choices[0].Message.Content != "Hello" || c.Choices[0].Message.ToolCalls[0].Function.Arguments != `{"path":"a"}` {
			t.Errorf("completion = %+v", c)
		}
	})
}

func TestErrorsAndRecording(t *testing.T) {
	srv := NewAnthropic(t)
	srv.APIKey = "right"
	tests := []struct {
		name, path, body string
		header           []string
		status           int
		want             string
	}{
		{"wrong path", "/v1/other", `{}`, nil, 404, "not_found_error"},
		{"not JSON", "/v1/messages", `{`, nil, 400, "invalid_request_error"},
		{"no key", "/v1/messages", `{}`, nil, 401, "authentication_error"},
		{"scripted 429", "/v1/messages", `{}`, []string{"X-Api-Key", "right"}, 429, `"message":"slow","type":"rate_limit_error"`},
	}
	srv.Push(Reply{Status: 429, RetryAfter: "7", ErrorMessage: "slow"})
	for _, tt := range tests {
		resp := post(t, srv.URL+tt.path, tt.body, tt.header...)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.want) {
			t.Errorf("%s: %d %s", tt.name, resp.StatusCode, body)
		}
		if tt.status == 429 && resp.Header.Get("Retry-After") != "7" {
			t.Errorf("Retry-After = %q", resp.Header.Get("Retry-After"))
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || string(reqs[1].Body) != `{}` || reqs[1].Header.Get("X-Api-Key") != "right" || reqs[1].Received.IsZero() {
		t.Errorf("recorded %d requests: %+v", len(reqs), reqs)
	}
}

func TestHandleAnswersWhenTheQueueIsEmpty(t *testing.T) {
	srv := NewOpenAI(t)
	srv.Push(Reply{Text: "queued"})
	srv.Handle(func(r Request) Reply { return Reply{Text: "echo " + r.JSON()["model"].(string)} })
	var texts []string
	for range 2 {
		var c struct {
			Choices []struct{ Message struct{ Content string } }
		}
		if err := json.NewDecoder(post(t, srv.BaseURL()+"/chat/completions", `{"model":"m1"}`).Body).Decode(&c); err != nil {
			t.Fatal(err)
		}
		texts = append(texts, c.Choices[0].Message.Content)
	}
	if diff := cmp.Diff([]string{"queued", "echo m1"}, texts); diff != "" {
		t.Error(diff)
	}
}

func TestFaults(t *testing.T) {
	t.Run("cut", func(t *testing.T) {
		srv := NewAnthropic(t)
		srv.Push(Reply{Text: "one two three", Fault: Cut, FaultAfter: 1})
		events, err := readSSE(t, post(t, srv.URL+"/v1/messages", `{"stream":true}`).Body)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("read error = %v, want unexpected EOF", err)
		}
		if n := len(events); n != 4 { // message_start, ping, block start, one delta
			t.Errorf("%d events before the cut", n)
		}
	})
	t.Run("end early", func(t *testing.T) {
		srv := NewOpenAI(t)
		srv.Push(Reply{Text: "one two", Fault: EndEarly, FaultAfter: 2})
		events, err := readSSE(t, post(t, srv.BaseURL()+"/chat/completions", `{"stream":true}`).Body)
		if err != nil || len(events) != 3 || strings.Contains(events[len(events)-1].data, "finish_reason\":\"stop") {
			t.Fatalf("%d events, %v", len(events), err)
		}
	})
	t.Run("stall and disconnect", func(t *testing.T) {
		srv := NewOpenAI(t)
		srv.Push(Reply{Text: "one two", Fault: Stall})
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.BaseURL()+"/chat/completions", bytes.NewReader([]byte(`{"stream":true}`)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		cancel()
		wait, stop := context.WithTimeout(t.Context(), 10*time.Second)
		defer stop()
		if err := srv.WaitDisconnect(wait); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSplit(t *testing.T) {
	tests := []struct {
		text string
		n    int
		want []string
	}{
		{"", 0, nil},
		{"one two three", 0, []string{"one ", "two ", "three"}},
		{"héllo", 2, []string{"hé", "llo"}},
		{"ab", 5, []string{"a", "b"}},
	}
	for _, tt := range tests {
		if got := split(tt.text, tt.n); !cmp.Equal(got, tt.want) {
			t.Errorf("split(%q, %d) = %q, want %q", tt.text, tt.n, got, tt.want)
		}
	}
	if got := halves("{\"é\":1}"); strings.Join(got, "") != "{\"é\":1}" || len(got) != 2 {
		t.Errorf("halves = %q", got)
	}
}

// The fake Messages API refuses more than four cache marks, as the real
// one does, and reports what a request read from and wrote to its cache.
func TestAnthropicPromptCache(t *testing.T) {
	srv := NewAnthropic(t)
	srv.Handle(func(Request) Reply { return Reply{Text: "ok"} })
	block := func(text string, marked bool) string {
		if marked {
			return fmt.Sprintf(`{"type":"text","text":%q,"cache_control":{"type":"ephemeral"}}`, text)
		}
		return fmt.Sprintf(`{"type":"text","text":%q}`, text)
	}
	post := func(blocks ...string) (int, map[string]any) {
		body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[` + strings.Join(blocks, ",") + `]}]}`
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, out
	}
	usage := func(out map[string]any) [3]float64 {
		u := out["usage"].(map[string]any)
		return [3]float64{u["input_tokens"].(float64), u["cache_read_input_tokens"].(float64), u["cache_creation_input_tokens"].(float64)}
	}
	long := strings.Repeat("x", 396) // 106 tokens with its JSON

	if code, out := post(block("a", true), block("b", true), block("c", true), block("d", true), block("e", true)); code != 400 ||
		!strings.Contains(fmt.Sprint(out), "A maximum of 4 blocks with cache_control may be provided. Found 5.") {
		t.Fatalf("five marks: %d %v", code, out)
	}
	tests := []struct {
		name   string
		blocks []string
		want   [3]float64 // input, cache read, cache write
	}{
		{"first request writes its prefix", []string{block(long, true), block("tail", false)}, [3]float64{8, 0, 106}},
		{"same prefix is read back", []string{block(long, true), block("more", true)}, [3]float64{0, 106, 8}},
		{"a mark within 20 blocks finds the longest cached prefix", []string{block(long, false), block("more", false), block("new", true)}, [3]float64{0, 114, 8}},
		{"a changed first block reads nothing", []string{block(long+"!", true)}, [3]float64{0, 0, 106}},
		{"no mark, no cache", []string{block(long, false)}, [3]float64{106, 0, 0}},
	}
	for _, tt := range tests {
		code, out := post(tt.blocks...)
		if code != 200 || usage(out) != tt.want {
			t.Errorf("%s: %d, usage %v; want %v", tt.name, code, usage(out), tt.want)
		}
	}
}

// The fake Messages API follows the documented rules of its cache: the
// minimum prefix, the 20-block look-back, the 5-minute lifetime renewed by
// each read, and an entry readable only once its writer's answer began.
func TestAnthropicPromptCacheRules(t *testing.T) {
	block := func(text string, marked bool) string {
		if marked {
			return fmt.Sprintf(`{"type":"text","text":%q,"cache_control":{"type":"ephemeral"}}`, text)
		}
		return fmt.Sprintf(`{"type":"text","text":%q}`, text)
	}
	long := strings.Repeat("x", 396) // 106 tokens with its JSON
	filler := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, block(fmt.Sprint("f", i), false))
		}
		return out
	}
	type step struct {
		advance time.Duration // the clock moves first
		blocks  []string
		want    [3]int // input, cache read, cache write
	}
	tests := []struct {
		name     string
		minToken int
		steps    []step
	}{
		{"a prefix under the minimum is not cached", 200, []step{
			{0, []string{block(long, true)}, [3]int{106, 0, 0}},
			{0, []string{block(long, true)}, [3]int{106, 0, 0}},
		}},
		{"a prefix over the minimum is", 100, []step{
			{0, []string{block(long, true)}, [3]int{0, 0, 106}},
			{0, []string{block(long, true)}, [3]int{0, 106, 0}},
		}},
		{"the look-back reaches 20 blocks, not 21", 0, []step{
			{0, []string{block(long, true)}, [3]int{0, 0, 106}},
			{0, append(append([]string{block(long, false)}, filler(18)...), block("m", true)), [3]int{0, 106, 141}},
			{0, append(append([]string{block(long, false)}, filler(20)...), block("n", true)), [3]int{0, 0, 263}},
		}},
		{"an entry expires 5 minutes after its last read", 0, []step{
			{0, []string{block(long, true)}, [3]int{0, 0, 106}},
			{4 * time.Minute, []string{block(long, true)}, [3]int{0, 106, 0}},
			{4 * time.Minute, []string{block(long, true)}, [3]int{0, 106, 0}},
			{5*time.Minute + time.Second, []string{block(long, true)}, [3]int{0, 0, 106}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := NewAnthropic(t)
			srv.CacheMinTokens = tt.minToken
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			srv.Clock = func() time.Time { return now }
			srv.Handle(func(Request) Reply { return Reply{Text: "ok"} })
			for i, st := range tt.steps {
				now = now.Add(st.advance)
				if got := cacheUsage(t, t.Context(), srv, st.blocks...); got != st.want {
					t.Errorf("step %d: usage %v, want %v", i+1, got, st.want)
				}
			}
		})
	}
}

// Two requests for one prefix, the second sent while the first's answer
// has not begun: both write it (the documented parallel-request case).
func TestAnthropicPromptCacheWriterNotStarted(t *testing.T) {
	srv := NewAnthropic(t)
	srv.Handle(func(Request) Reply { return Reply{Text: "ok"} })
	prompt := fmt.Sprintf(`{"type":"text","text":%q,"cache_control":{"type":"ephemeral"}}`, strings.Repeat("x", 396))
	srv.mu.Lock()
	srv.WriteDelay = time.Hour // the first writer's answer never begins
	srv.mu.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	first := make(chan struct{})
	go func() {
		defer close(first)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/messages",
			strings.NewReader(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[`+prompt+`]}]}`))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	for pending := false; !pending; { // until the first request's write is pending
		srv.mu.Lock()
		pending = len(srv.writers) == 1
		if pending {
			srv.WriteDelay = 0
		}
		srv.mu.Unlock()
		runtime.Gosched()
	}
	if got := cacheUsage(t, t.Context(), srv, prompt); got != [3]int{0, 0, 106} {
		t.Errorf("second request while the first had not begun its answer: %v, want a write of 106", got)
	}
	cancel()
	<-first
	if got := cacheUsage(t, t.Context(), srv, prompt); got != [3]int{0, 106, 0} {
		t.Errorf("third request: %v, want a read of 106 (the second's write)", got)
	}
}

// cacheUsage posts one user turn of blocks and returns its usage: input,
// cache read, cache write.
func cacheUsage(t *testing.T, ctx context.Context, srv *Server, blocks ...string) [3]int {
	t.Helper()
	body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[` + strings.Join(blocks, ",") + `]}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Usage struct {
			Input int `json:"input_tokens"`
			Read  int `json:"cache_read_input_tokens"`
			Write int `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return [3]int{out.Usage.Input, out.Usage.Read, out.Usage.Write}
}
