package stacktest

import (
	"bytes"
	"sync/atomic"

	"github.com/superagents/superagents/internal/llm/llmtest"
)

// SteerAndAskModel is a model for the tests of steering and questions,
// told apart by the task's prompt (the request's first text):
//
//   - the task prompted steered first runs, with bash, a command that
//     waits for a file named release in its workspace, then answers
//     "Done as told." (what it was told meanwhile is in that request);
//   - the task prompted asking first asks "Which colour?", red or blue,
//     then answers "Blue it is." when the answer was blue, "No answer
//     came." otherwise;
//   - any other request (the chat's agent, woken) is answered "Noted.".
//
// An empty prompt names no task.
func SteerAndAskModel(steered, asking string) func(llmtest.Request) llmtest.Reply {
	var worked, asked atomic.Int32
	return func(req llmtest.Request) llmtest.Reply {
		switch prompt := req.FirstText(); {
		case steered != "" && prompt == steered:
			if worked.Add(1) == 1 {
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "bash", Input: `{"command": "while [ ! -e release ]; do sleep 0.02; done"}`}}}
			}
			return llmtest.Reply{Text: "Done as told."}
		case asking != "" && prompt == asking:
			if asked.Add(1) == 1 {
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "superagents_ask", Input: `{"question": "Which colour?", "choices": ["red", "blue"]}`}}}
			}
			if bytes.Contains(req.Body, []byte("The user answered: blue")) {
				return llmtest.Reply{Text: "Blue it is."}
			}
			return llmtest.Reply{Text: "No answer came."}
		}
		return llmtest.Reply{Text: "Noted."}
	}
}
